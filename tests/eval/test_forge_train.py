"""Round 5 measurement tooling: where forge loses recall (ceiling) and the learned second look
at rejected user passages, scored leaving one repository out."""

from __future__ import annotations

from pathlib import Path

from swarmq.eval.forge import evaluate
from swarmq.eval.forge_ceiling import STAGES, ceiling, render
from swarmq.eval.forge_requests import FEATURES, features, user_passages
from swarmq.eval.forge_train import SessionRows, collect, fit, loro, pipeline
from swarmq.eval.metrics import Counts
from tests.eval.test_forge_eval import write_labels
from tests.forge.sessions import NARRATED, ClaudeSession

LABELS = """
sessions:
  - file: a.jsonl
    format: claude-code
    repo: alice/app
    split: tune
    lessons:
      - lesson: Redis is the queue because the team runs it already.
        words: [redis]
      - lesson: The user does not want automatic commits.
        words: [auto commit]
      - lesson: The deploy host is called zebra-7.
        words: [zebra-7]
  - file: b.jsonl
    format: claude-code
    repo: bob/tool
    split: tune
    lessons:
      - lesson: pnpm, not npm, installs the packages here.
        words: [pnpm]
  - file: c.jsonl
    format: codex-history
    repo: carol/cli
    split: tune
    lessons:
      - lesson: Help texts live in the command docstrings.
        words: [docstring]
"""


def sessions() -> dict[str, ClaudeSession]:
    # The user passages must be ones forge rejects (the second look's material): a standing
    # instruction that opens with "do not" is kept since swarmq.forge._standing.
    a = (
        ClaudeSession("a")
        .user("no auto commit in this repository, i review every change myself")
        .say("Decision: keep Redis as the queue, because the team runs it already.")
        .bash("cat hosts", "zebra-7 10.0.0.7")
    )
    b = ClaudeSession("b").user("install the deps with pnpm and run the build for me")
    c = ClaudeSession("c").user("put the help text of each command in its docstring then")
    return {"a.jsonl": a, "b.jsonl": b, "c.jsonl": c}


def test_ceiling_places_each_lesson_at_the_first_stage_that_reaches_it(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    c = ceiling(labels, config=NARRATED)
    assert c.lessons == 5
    assert sum(c.stages[s] for s in STAGES) == 5
    assert (
        c.stages["kept"] == evaluate(labels, split="all", config=NARRATED).overall.tp == 1
    )  # the decision
    assert c.stages["passage"] == 3  # three user requests the classifier rejects
    assert c.stages["tool/other"] == 1  # zebra-7 only in a tool result
    assert {role for role, _ in c.rejected} == {"user"}
    assert c.recall("kept") == 0.2
    assert "passage" in render(c, examples=True)


def test_the_scorer_reads_rejected_user_passages_only(tmp_path: Path) -> None:
    labels = write_labels(tmp_path, LABELS, sessions())
    got = list(user_passages(tmp_path / "sessions" / "a.jsonl"))
    assert [text for text, _ in got] == [
        "no auto commit in this repository, i review every change myself"
    ]
    assert all(len(vector) == len(FEATURES) for _, vector in got)
    rows = collect(labels, NARRATED)
    assert [sum(r.labels) for r in rows] == [1, 1, 1]
    assert [len(r.base) for r in rows] == [1, 0, 0]


def test_features_follow_the_feature_names() -> None:
    vector = features(
        "do not auto commit", reason="too-short", confidence=0.0, ordinal=1, whole=True
    )
    named = dict(zip(FEATURES, vector, strict=True))
    assert named["negation"] == 1.0 and named["short"] == 1.0 and named["first_request"] == 1.0
    assert named["reason:too-short"] == 1.0 and named["reason:no-signal"] == 0.0


def test_a_separable_signal_is_learned_and_kept_left_out(tmp_path: Path) -> None:
    """Rows where one feature marks the lesson: every fold must learn it from the others, and
    forge plus the scorer must beat forge alone on the left-out repositories."""
    labels = write_labels(tmp_path, LABELS, sessions())
    rows = collect(labels, NARRATED)
    marked = FEATURES.index("memory")
    synthetic = []
    for r in rows:
        s = SessionRows(r.session, r.base)
        for i, text in enumerate(r.texts):
            for copy in range(6):  # padding negatives so the positive is rare
                vector = [0.0] * len(FEATURES)
                is_lesson = r.labels[i] == 1 and copy == 0
                vector[marked] = float(is_lesson)
                s.texts.append(text if is_lesson else f"noise {copy} {i}")
                s.vectors.append(vector)
                s.labels.append(int(is_lesson))
        synthetic.append(s)
    w, _ = fit(synthetic)
    assert w[marked] > 1.0
    result = loro(synthetic)
    assert result.before == Counts(1, 0, 4)
    assert result.after.tp == 4 and result.after.fp == 0
    assert pipeline(synthetic[0], None, 1.0) == Counts(1, 0, 2)
