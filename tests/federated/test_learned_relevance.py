"""Injection admits and ranks learnings and patterns by a learned relevance of their word share,
text cosine and title cosine (issue 26): a learning both floors leave out is injected when
the three measures together reach the model's floor, a long topical learning that holds the
task's words but is far from it in meaning is not, and a title near the task lifts its
learning above one that only shares words. Only injection uses it, only under the model it
was fitted on, and the committed constants are those of the fitting script's weights file.
Real files; the cosines are fixed per text so the model is tested exactly."""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from swarmq.federated.meaning import (
    LEARNED,
    WORDLLAMA,
    DenseFloors,
    Meaning,
    learned_relevance,
)
from swarmq.federated.search import injection_floors
from swarmq.federated.stores import Floors, Stores, ask_flywheel
from swarmq.flywheel.lookup import Cosines, rare_share, rarity, search, words
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.similarity.embedding import Vectors

MODEL = LEARNED[WORDLLAMA]
TASK = "Address the review comments on the workflows pull request"
NEAR_TITLE = "Verify Reviewer Suggestions Before Implementing"
NEAR = (
    "---\nid: learn-review\ntype: learning\nmaturity: established\nutility: 0.5\n---\n"
    f"# Learning: {NEAR_TITLE}\n\n"
    "When processing review comments, each suggestion must be independently verified for technical "
    "correctness before implementation: some are false positives or already addressed.\n"
)
WORDY_TITLE = "Living review of workflows"
WORDY = (
    "---\nid: learn-wordy\ntype: learning\nmaturity: established\nutility: 0.5\n---\n"
    f"# Learning: {WORDY_TITLE}\n\n"
    "Every pull request and review comment of the workflows project, in order: "
    + " ".join(f"entry{n} notes" for n in range(200))
    + "\n"
)
FAR = 0.05
"""The cosine of every text the test does not place."""


def layout_with(root: Path, *files: tuple[str, str]) -> AgentsLayout:
    learnings = root / ".agents" / "learnings"
    learnings.mkdir(parents=True)
    for name, text in files:
        (learnings / name).write_text(text, encoding="utf-8")
    return AgentsLayout(root / ".agents")


BODY = "independently verified"
"""Words of the near learning's body: its meaning text (title and body opening) holds them."""


def fixed(placed: dict[str, float]) -> Cosines:
    """Cosines by text: a placed text's (the key ``BODY``: the near learning's meaning text),
    else :data:`FAR`."""

    def cosines(texts: Sequence[str]) -> list[float]:
        return [
            placed.get(t, placed.get(BODY, FAR) if BODY in t and t != NEAR_TITLE else FAR)
            for t in texts
        ]

    return cosines


def share(text: str) -> float:
    wanted = words(TASK)
    return len(wanted & words(text)) / len(wanted)


def test_the_probability_is_the_logistic_of_the_weighted_measures() -> None:
    model = LearnedRelevance(intercept=-1.0, share=2.0, cosine=3.0, title=4.0, floor=0.5)
    z = -1.0 + 2.0 * 0.5 + 3.0 * 0.2 + 4.0 * 0.1
    assert model.probability(0.5, 0.2, 0.1) == pytest.approx(1 / (1 + np.exp(-z)))
    assert model.probability(0.5, 0.2, None) == pytest.approx(model.probability(0.5, 0.2, 0.2))
    assert model.relevance(0.0, 0.0, 0.0) is None  # σ(-1) < 0.5
    assert model.relevance(0.5, 0.2, 0.1) == pytest.approx(model.probability(0.5, 0.2, 0.1))


def test_the_premise_both_floors_leave_the_near_learning_out(tmp_path: Path) -> None:
    layout = layout_with(tmp_path, ("2026-12-01-review.md", NEAR))
    cosines = fixed({NEAR_TITLE: 0.35, BODY: 0.38})
    assert share(NEAR) < 0.34
    assert search(layout, TASK, cosines=cosines, min_cosine=0.4, min_title_cosine=0.4) == []


def test_the_learned_relevance_injects_a_learning_near_in_title_and_text(tmp_path: Path) -> None:
    layout = layout_with(tmp_path, ("2026-12-01-review.md", NEAR))
    hits = search(
        layout,
        TASK,
        min_relevance=0.45,
        cosines=fixed({NEAR_TITLE: 0.35, BODY: 0.38}),
        min_cosine=0.4,
        min_title_cosine=0.4,
        learned=MODEL,
    )
    assert [h.title for h in hits] == [NEAR_TITLE]
    found = frozenset(words(NEAR))
    rare = rare_share(rarity(words(TASK), [found]), found)
    expected = MODEL.probability(share(NEAR), 0.38, 0.35, rare)
    assert hits[0].relevance == pytest.approx(expected, abs=1e-4)


def test_a_wordy_learning_far_in_meaning_stays_out(tmp_path: Path) -> None:
    """It holds the share floor's words (the floors inject it), not the model's relevance."""
    layout = layout_with(tmp_path, ("2026-12-01-wordy.md", WORDY))
    assert share(WORDY) >= 0.45
    floors = search(layout, TASK, min_relevance=0.45, cosines=fixed({}), min_cosine=0.4)
    assert [h.title for h in floors] == [WORDY_TITLE]
    learned = search(
        layout, TASK, min_relevance=0.45, cosines=fixed({}), min_cosine=0.4, learned=MODEL
    )
    assert learned == []


def test_a_near_title_ranks_above_shared_words(tmp_path: Path) -> None:
    layout = layout_with(tmp_path, ("2026-12-01-review.md", NEAR), ("2026-12-01-wordy.md", WORDY))
    placed = {NEAR_TITLE: 0.45, BODY: 0.38, WORDY_TITLE: 0.2}
    by_floors = search(layout, TASK, cosines=fixed(placed), min_cosine=0.4, min_title_cosine=0.4)
    assert [h.title for h in by_floors] == [WORDY_TITLE, NEAR_TITLE]
    by_model = search(
        layout,
        TASK,
        cosines=fixed(placed),
        min_cosine=0.4,
        min_title_cosine=0.4,
        learned=LearnedRelevance(-6.0, 5.5, 4.2, 9.5, 0.0),
    )
    assert [h.title for h in by_model] == [NEAR_TITLE, WORDY_TITLE]


def test_a_pool_candidate_is_still_reached_by_its_words_alone(tmp_path: Path) -> None:
    pending = tmp_path / ".agents" / "pool" / "pending"
    pending.mkdir(parents=True)
    (pending / "pend-review.json").write_text(
        json.dumps(
            {
                "candidate": {
                    "id": "pend-review",
                    "type": "learning",
                    "content": f"# {NEAR_TITLE}\n\nCheck each suggestion before applying it.",
                },
                "scoring_result": {},
                "status": "pending",
                "added_at": "2026-12-01T10:00:00Z",
            }
        ),
        encoding="utf-8",
    )
    always = LearnedRelevance(10.0, 0.0, 0.0, 0.0, 0.5)
    hits = search(
        AgentsLayout(tmp_path / ".agents"),
        TASK,
        cosines=fixed({}),
        min_cosine=0.4,
        min_title_cosine=0.4,
        learned=always,
    )
    assert hits == []


class Fixed:
    """An embedder under a given model name placing the task, the near title and every other
    text at fixed vectors."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dim = 3
        self.title = np.array([0.35, np.sqrt(1 - 0.35**2), 0.0], dtype=np.float32)
        self.body = np.array([0.38, 0.0, np.sqrt(1 - 0.38**2)], dtype=np.float32)
        self.other = np.array([FAR, 0.0, np.sqrt(1 - FAR**2)], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows = [
            self.title if t == NEAR_TITLE else self.body if BODY in t else self.other for t in texts
        ]
        return np.vstack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


@pytest.mark.parametrize(("name", "found"), [(WORDLLAMA, True), ("another-model", False)])
def test_the_relevance_is_kept_per_model(tmp_path: Path, name: str, found: bool) -> None:
    layout = layout_with(tmp_path, ("2026-12-01-review.md", NEAR))
    meaning = Meaning(
        Fixed(name),
        np.array([1.0, 0.0, 0.0], dtype=np.float32),
        DenseFloors(flywheel=0.4, memory=0.5, title=0.4),
    )
    learned = learned_relevance(meaning)
    assert (learned is MODEL) == found
    findings = ask_flywheel(
        Stores(tmp_path, agents=layout), TASK, 5, 0.45, meaning=meaning, learned=learned
    )
    assert bool(findings) == found


def test_injection_uses_it_and_search_does_not() -> None:
    assert injection_floors(KnowledgeConfig()).learned
    assert not Floors().learned


def test_the_constants_are_the_fitting_scripts_weights() -> None:
    path = Path(__file__).parents[2] / "eval" / "knowledge" / "relevance_weights.json"
    model = json.loads(path.read_text("utf-8"))["model"]
    for field in ("intercept", "share", "cosine", "title", "rare", "floor"):
        assert getattr(MODEL, field) == pytest.approx(model[field], abs=5e-5)


def test_the_weights_are_fitted_on_every_examined_workspace() -> None:
    """The shipped model is the mean of one fold per examined workspace, so a workspace added
    to the examined set without a refit (the model then judged, in sample, on data it never
    saw fitted) is caught here."""
    knowledge = Path(__file__).parents[2] / "eval" / "knowledge"
    weights = json.loads((knowledge / "relevance_weights.json").read_text("utf-8"))
    source = (knowledge / "relevance_features.py").read_text("utf-8")
    examined = next(
        ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "EXAMINED" for t in node.targets)
    )
    assert sorted(weights["folds"]) == sorted(examined)
    for field in ("intercept", "share", "cosine", "title", "rare", "floor"):
        mean = np.mean([fold[field] for fold in weights["folds"].values()])
        assert weights["model"][field] == pytest.approx(mean, abs=1e-9)
