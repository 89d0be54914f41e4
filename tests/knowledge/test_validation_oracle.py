"""Verdicts pinned from opencode-swarm 7.103.2's own ``validateLesson`` (run under node).

``eval/knowledge/validation_oracle.jsonl`` holds, for every lesson of the real stores in
``eval/knowledge/stores/``, the upstream verdict against the lessons before it in its file and
against every other lesson of every store, plus built edge cases (see eval/knowledge/SOURCES.md
for how it was produced). swarmq's ``opencode`` mode must agree on each, by plain scan and by
the store's contradiction index.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarmq.knowledge.contradiction import ContradictionIndex
from swarmq.knowledge.validation import ValidationResult, validate_lesson

EVAL = Path(__file__).resolve().parents[2] / "eval" / "knowledge"


def _oracle() -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in (EVAL / "validation_oracle.jsonl").read_text("utf-8").splitlines()
    ]


def _stores() -> dict[str, list[dict[str, Any]]]:
    return {
        path.stem: [
            json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()
        ]
        for path in sorted((EVAL / "stores").glob("*.jsonl"))
    }


def _verdict(result: ValidationResult) -> list[object]:
    return [result.valid, result.layer, result.reason, result.severity]


def test_every_real_lesson_gets_upstreams_verdict() -> None:
    stores = _stores()
    expected = {(o["store"], o["id"]): o for o in _oracle() if o["kind"] == "store"}
    every = [e["lesson"] for entries in stores.values() for e in entries]
    assert len(expected) == len(every) > 400
    for name, entries in stores.items():
        index = ContradictionIndex()
        for n, entry in enumerate(entries):
            meta = {
                "category": entry["category"],
                "scope": entry["scope"],
                "confidence": entry["confidence"],
            }
            want = expected[(name, entry["id"])]
            prior = [e["lesson"] for e in entries[:n]]
            assert (
                _verdict(validate_lesson(entry["lesson"], existing=prior, **meta))
                == want["after_prior"]
            )
            assert (
                _verdict(validate_lesson(entry["lesson"], existing=index, **meta))
                == want["after_prior"]
            )
            index.add(entry["lesson"])
            others = [lesson for lesson in every if lesson != entry["lesson"]]
            assert (
                _verdict(validate_lesson(entry["lesson"], existing=others, **meta))
                == want["against_all"]
            )


@pytest.mark.parametrize(
    "case", [o for o in _oracle() if o["kind"] == "built"], ids=lambda o: o["lesson"][:40]
)
def test_built_edge_cases_get_upstreams_verdict(case: dict[str, Any]) -> None:
    meta = {"category": case["category"], "scope": case["scope"], "confidence": case["confidence"]}
    assert (
        _verdict(validate_lesson(case["lesson"], existing=case["existing"], **meta))
        == case["verdict"]
    )
    index = ContradictionIndex()
    for lesson in case["existing"]:
        index.add(lesson)
    assert _verdict(validate_lesson(case["lesson"], existing=index, **meta)) == case["verdict"]
