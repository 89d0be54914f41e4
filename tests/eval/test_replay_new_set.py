"""The new held-apart replay set (issue 24): its labels fit its files, and its users are in no
other evaluation set (a held-apart figure is only clean on data nothing was tuned on)."""

from __future__ import annotations

import re
from pathlib import Path

from swarmq.eval.replay import load_project
from swarmq.eval.replay_labels import load_labels

EVAL = Path(__file__).resolve().parents[2] / "eval"


def test_the_new_set_fits_its_files_and_is_held_apart() -> None:
    labels = load_labels(EVAL / "replay" / "labels-new.yaml")
    projects = labels.select("held-apart")
    assert [p.id for p in projects] == ["crypto-wallet", "xentri"]
    for project in projects:  # the files exist, in the labelled order, labelled lines fail
        assert len(load_project(EVAL / "replay" / "histories-new", project)) == len(
            project.sessions
        )
    assert sum(len(m.recurrences) for p in projects for m in p.mistakes) == 6


def test_the_new_sets_users_are_in_no_other_source_file() -> None:
    users = {"nuttapong14", "carlo-spada"}
    others = [
        *(EVAL / "forge").glob("SOURCES*.md"),
        EVAL / "replay" / "SOURCES.md",
        EVAL / "knowledge" / "SOURCES.md",
        EVAL / "recall" / "SOURCES.md",
    ]
    for path in others:
        text = path.read_text(encoding="utf-8").lower()
        named = set(re.findall(r"([\w.-]+)/[\w.-]+", text))
        assert not users & named, path
