"""Consolidation respects structure and scope: templated notes by their fields, projects apart,
paraphrases merged, and every action says why (its score breakdown)."""

from __future__ import annotations

import json
from pathlib import Path

from swarmq.consolidation._events import EventLog
from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier, events_path
from swarmq.knowledge.templates import template_key
from tests.consolidation.support import entries_by_id, entry, write_store

TAIL = (
    " co-change with NPMI=1.000 but have no import relationship. This hidden coupling suggests a "
    "shared architectural concern — changes to one likely require changes to the other."
)


def cochange(a: str, b: str) -> str:
    return f"Files {a} and {b}{TAIL}"


def test_cochange_notes_merge_only_on_the_same_file_pair(tmp_path: Path) -> None:
    assert template_key(cochange("b.py", "a.py")) == template_key(cochange("a.py", "b.py"))
    assert template_key("Files are fine") is None
    store = write_store(
        tmp_path,
        [
            entry("ab", cochange("src/a.py", "src/b.py")),
            entry("ba", cochange("src/b.py", "src/a.py").replace("1.000", "0.912")),
            entry("ac", cochange("src/a.py", "src/c.py")),
            entry("cd", cochange("src/c.py", "src/d.py")),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert [(a.kind.value, sorted((a.keep, a.other))) for a in report.plan.actions] == [
        ("merge", ["ab", "ba"])
    ]
    assert report.plan.actions[0].scores["template"] == "co-change:src/a.py|src/b.py"
    data = entries_by_id(store)
    assert data["ac"]["status"] == data["cd"]["status"] == "candidate"
    assert "links" not in data["ac"] and "supersedes" not in data["cd"]


def test_entries_of_different_projects_never_merge_supersede_or_link(tmp_path: Path) -> None:
    lesson = "Run the database migrations in a transaction before deploying the api service"
    store = write_store(
        tmp_path,
        [
            entry("p1", lesson, project="shop"),
            entry("p2", lesson, project="blog"),
            entry("p3", lesson + " now", project="blog"),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    pairs = [sorted((a.keep, a.other)) for a in report.plan.actions]
    assert pairs == [["p2", "p3"]]


def test_a_paraphrase_merges_with_its_score_breakdown_journalled(tmp_path: Path) -> None:
    store = write_store(
        tmp_path,
        [
            entry(
                "x",
                "Vite outputs the input HTML filename (index.web.html), not index.html: the copy "
                "script must match the actual output name",
            ),
            entry(
                "y",
                "Vite writes the HTML under its input filename, not index.html. Copy scripts must "
                "reference the actual output name",
            ),
            entry(
                "z",
                "Tautological assertions provide zero value and must be removed from test files",
            ),
            # other lessons of the store: the IDF context that makes shared rare words count
            entry("f1", "Wrap every localStorage access in try/catch for Safari private mode"),
            entry("f2", "Use vi.stubEnv for import.meta.env values in Vitest tests"),
            entry("f3", "Regenerate the database types after each migration and test the build"),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    [action] = report.plan.actions
    assert action.reason.value == "paraphrase" and sorted((action.keep, action.other)) == ["x", "y"]
    assert set(action.scores) == {"idf_cosine", "term_jaccard", "bigram_jaccard", "dense_cosine"}
    assert action.scores["idf_cosine"] >= 0.46 > action.scores["bigram_jaccard"]
    records = [
        r for r in EventLog(events_path(store.swarm.files)).records() if r.get("type") == "merged"
    ]
    assert records[0]["scores"] == json.loads(json.dumps(action.scores))

    def twins(where: Path) -> list[dict[str, object]]:
        return [e for e in entries_by_id(store).values() if e["id"] not in ("x", "y")] + [
            entry(
                "x",
                "Vite outputs the input HTML filename (index.web.html), not index.html: the "
                "copy script must match the actual output name",
            ),
            entry(
                "y",
                "Vite writes the HTML under its input filename, not index.html. Copy scripts "
                "must reference the actual output name",
            ),
        ]

    on, off = (
        write_store(tmp_path / "on", twins(tmp_path)),
        write_store(tmp_path / "off", twins(tmp_path)),
    )
    assert (
        len(consolidate_tier(on.swarm, ConsolidationConfig(), scope="s", dry_run=True).plan.actions)
        == 1
    )
    assert (
        consolidate_tier(
            off.swarm, ConsolidationConfig(paraphrase_threshold=1.0), scope="s"
        ).plan.actions
        == []
    )


def test_a_word_duplicate_merge_records_its_dense_cosine_too(tmp_path: Path) -> None:
    base = "Run the database migrations in a transaction before deploying the api service"
    store = write_store(
        tmp_path,
        [
            entry("a", base),
            entry("b", base + " now"),
            entry("c", "Wrap every localStorage access in try/catch for Safari private mode"),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    [action] = report.plan.actions
    assert action.reason.value == "duplicate"
    assert action.scores["bigram_jaccard"] >= 0.85
    assert isinstance(action.scores["dense_cosine"], float) and action.scores["dense_cosine"] > 0.9
