"""A learning's or pattern's title is measured against the task on its own (issue 26, item 5): a
task worded as a commit subject is short, as a title is, while the learning's vector is a mean
over its title and body; a learning whose title alone reaches the title floor is relevant even
when its whole text's cosine and its word share are under their floors, and it ranks by the
nearer of the two cosines. Titles are measured only when a title floor is given, and a pool
candidate is never reached by its title. Real files; the cosines are fixed per text so the
floors are tested exactly."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from swarmq.federated.finding import Store
from swarmq.federated.meaning import DenseFloors, Meaning
from swarmq.federated.stores import Stores, ask_flywheel
from swarmq.flywheel.lookup import Cosines, fused_relevance, search, words
from swarmq.flywheel.store import AgentsLayout
from swarmq.similarity.embedding import Vectors

TITLE = "Verify Reviewer Suggestions Before Implementing"
LEARNING = (
    "---\nid: learn-review\ntype: learning\nmaturity: established\nutility: 0.5\n---\n"
    f"# Learning: {TITLE}\n\n"
    "When processing feedback, each suggestion must be independently verified for technical "
    "correctness before implementation: some are false positives or already addressed.\n"
)
TASK = "Address the review comments on the workflows pull request"


def layout_with_learning(root: Path) -> AgentsLayout:
    learnings = root / ".agents" / "learnings"
    learnings.mkdir(parents=True)
    (learnings / "2026-12-01-review.md").write_text(LEARNING, encoding="utf-8")
    return AgentsLayout(root / ".agents")


def fixed(title: float, text: float) -> tuple[list[list[str]], Cosines]:
    """A cosines function giving ``title`` to the bare title and ``text`` to anything else, and
    the batches it was asked for."""
    seen: list[list[str]] = []

    def cosines(texts: Sequence[str]) -> list[float]:
        seen.append(list(texts))
        return [title if t == TITLE else text for t in texts]

    return seen, cosines


def test_the_premise_word_share_is_under_the_floor() -> None:
    wanted = words(TASK)
    assert len(wanted & words(LEARNING)) / len(wanted) < 0.34


def test_a_title_at_its_floor_makes_the_learning_relevant(tmp_path: Path) -> None:
    layout = layout_with_learning(tmp_path)
    _, cosines = fixed(title=0.45, text=0.2)
    hits = search(layout, TASK, cosines=cosines, min_cosine=0.4, min_title_cosine=0.4)
    assert [h.title for h in hits] == [TITLE]
    wanted = words(TASK)
    share = len(wanted & words(LEARNING)) / len(wanted)
    assert hits[0].cosine == pytest.approx(0.45)
    assert hits[0].relevance == pytest.approx(fused_relevance(share, 0.45), abs=1e-4)


def test_a_title_under_its_floor_does_not(tmp_path: Path) -> None:
    layout = layout_with_learning(tmp_path)
    _, cosines = fixed(title=0.39, text=0.2)
    assert search(layout, TASK, cosines=cosines, min_cosine=0.4, min_title_cosine=0.4) == []


def test_a_record_ranks_by_its_nearer_cosine(tmp_path: Path) -> None:
    """The whole text nearer than the title: the text's cosine ranks it."""
    layout = layout_with_learning(tmp_path)
    _, cosines = fixed(title=0.1, text=0.5)
    hits = search(layout, TASK, cosines=cosines, min_cosine=0.4, min_title_cosine=0.4)
    assert hits[0].cosine == pytest.approx(0.5)


def test_without_a_title_floor_titles_are_not_measured(tmp_path: Path) -> None:
    layout = layout_with_learning(tmp_path)
    seen, cosines = fixed(title=0.9, text=0.2)
    assert search(layout, TASK, cosines=cosines, min_cosine=0.4) == []
    assert seen and all(TITLE not in batch for batch in seen)


def test_a_pool_candidate_is_not_reached_by_its_title(tmp_path: Path) -> None:
    pending = tmp_path / ".agents" / "pool" / "pending"
    pending.mkdir(parents=True)
    (pending / "pend-review.json").write_text(
        json.dumps(
            {
                "candidate": {
                    "id": "pend-review",
                    "type": "learning",
                    "content": f"# {TITLE}\n\nCheck each suggestion before applying it.",
                },
                "scoring_result": {},
                "status": "pending",
                "added_at": "2026-12-01T10:00:00Z",
            }
        ),
        encoding="utf-8",
    )
    seen, cosines = fixed(title=0.9, text=0.2)
    hits = search(
        AgentsLayout(tmp_path / ".agents"),
        TASK,
        cosines=cosines,
        min_cosine=0.4,
        min_title_cosine=0.4,
    )
    assert hits == []
    assert all(TITLE not in batch for batch in seen)


class Fixed:
    """An embedder placing the task, the bare title and every other text at fixed vectors."""

    def __init__(self, title: float) -> None:
        self.name = "fixed-title-test"
        self.dim = 3
        self.title = np.array([title, np.sqrt(1 - title**2), 0.0], dtype=np.float32)
        self.other = np.array([0.2, 0.0, np.sqrt(1 - 0.04)], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [self.title if t == TITLE else self.other for t in texts]
        return np.vstack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


@pytest.mark.parametrize(("title", "found"), [(0.45, True), (0.35, False)])
def test_the_federated_search_holds_titles_to_the_meanings_title_floor(
    tmp_path: Path, title: float, found: bool
) -> None:
    layout = layout_with_learning(tmp_path)
    embedder = Fixed(title)
    meaning = Meaning(
        embedder,
        np.array([1.0, 0.0, 0.0], dtype=np.float32),
        DenseFloors(flywheel=0.4, memory=0.5, title=0.4),
    )
    findings = ask_flywheel(Stores(tmp_path, agents=layout), TASK, 5, 0.4, meaning=meaning)
    assert [f.store for f in findings] == ([Store.LEARNING] if found else [])
