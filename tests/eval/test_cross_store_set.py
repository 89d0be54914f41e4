"""The cross-store query set (eval/knowledge/workspaces): its labels name real records of
their workspace, each store reader finds them where the workspace keeps them, and the split
follows the rule written in the file (per query, or whole workspaces where a workspace names its
split: its tasks share its learnings and wording, so splitting them would leak)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from swarmq.eval.cross_store import (
    CrossStoreLabelError,
    evaluate_cross_store,
    load_cross_store_labels,
    workspace_stores,
)
from swarmq.federated.finding import Store
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.profiles.search import Scope

QUERIES = Path(__file__).resolve().parents[2] / "eval" / "knowledge" / "workspaces" / "queries.json"


def test_the_set_is_the_size_the_issue_asks_for() -> None:
    labels = load_cross_store_labels(QUERIES)
    assert len(labels.workspaces) >= 4
    assert len(labels.queries) >= 40
    silent = [q for q in labels.queries if not q["relevant"]]
    assert len(silent) / len(labels.queries) >= 0.25
    whole = {
        name: spec["split"]
        for name, spec in json.loads(QUERIES.read_text("utf-8"))["workspaces"].items()
        if "split" in spec
    }
    for query in labels.queries:
        if query["workspace"] in whole:
            assert query["split"] == whole[query["workspace"]], query["text"]
            continue
        digest = int(hashlib.sha1(query["text"].encode("utf-8")).hexdigest(), 16)
        assert query["split"] == ("held" if digest % 3 == 0 else "tune"), query["text"]


def test_every_label_is_a_record_its_store_reads() -> None:
    """Each labelled learning or pattern is an artifact ``lookup`` lists, each memory note a
    file memory search indexes, each entry id a line of ``.swarm/knowledge.jsonl``."""
    labels = load_cross_store_labels(QUERIES)
    config = KnowledgeConfig(retrieval=Retrieval.LEXICAL)
    for name, workspace in labels.workspaces.items():
        wanted = {r for q in labels.queries if q["workspace"] == name for r in q["relevant"]}
        with workspace_stores(workspace, config) as stores:
            entries = (
                {e.id for e in stores.knowledge.swarm.read().entries} if stores.knowledge else set()
            )
            artifacts: set[str] = set()
            if stores.agents is not None:
                for path in sorted(stores.agents.learnings.glob("*.md")) + sorted(
                    stores.agents.patterns.glob("*.md")
                ):
                    artifacts.add(path.relative_to(stores.workspace).as_posix())
            indexed: set[str] = set()
            if stores.memory is not None:
                stores.memory.index.sync()
                for label in wanted:
                    kind = workspace.kind(label)
                    if kind in (Store.WORKER_MEMORY, Store.SHARED_MEMORY):
                        first = next(
                            line
                            for line in (stores.workspace / label).read_text("utf-8").splitlines()
                            if len([w for w in line.split() if w.isalpha()]) >= 2
                        )
                        words = " ".join(w for w in first.split() if w.isalpha())[:200]
                        result = stores.memory.search(words, scope=Scope.ALL, limit=200)
                        paths = {
                            Path(h.path)
                            .resolve()
                            .relative_to(stores.workspace.resolve())
                            .as_posix()
                            for h in result.hits
                        }
                        if label in paths:
                            indexed.add(label)
            for label in wanted:
                kind = workspace.kind(label)
                if kind is Store.SWARM:
                    assert label in entries, (name, label)
                elif kind in (Store.LEARNING, Store.PATTERN):
                    assert label in artifacts, (name, label)
                else:
                    assert label in indexed, (name, label)


def test_a_label_naming_no_record_is_refused(tmp_path: Path) -> None:
    data = json.loads(QUERIES.read_text("utf-8"))
    data["queries"] = [{**data["queries"][0], "relevant": [".agents/learnings/nope.md"]}]
    bad = tmp_path / "queries.json"
    bad.write_text(json.dumps(data), "utf-8")
    for name in data["workspaces"]:
        (tmp_path / name).symlink_to(QUERIES.parent / name)
    with pytest.raises(CrossStoreLabelError, match="unknown records"):
        load_cross_store_labels(bad)


def test_shown_records_are_named_as_the_labels_name_them() -> None:
    """A run over the tune split names every shown record by an id or a workspace path (what
    the labels use), and stays silent on the tasks nothing is relevant to."""
    labels = load_cross_store_labels(QUERIES)
    figures = evaluate_cross_store(labels, "tune", KnowledgeConfig(retrieval=Retrieval.LEXICAL))
    assert figures.abstain.total > 0 and figures.top3.total > 0
    for detail in figures.details:
        for shown in detail["shown"]:
            assert not shown["label"].startswith("/"), shown
