"""The layered classifier: precision on a labelled set, and each layer on its own."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from swarmq.flywheel.model import KnowledgeType
from swarmq.forge._signals import KnowledgeClass, has_signal
from swarmq.forge.classifier import classify
from swarmq.forge.passages import passages

LABELLED = Path(__file__).resolve().parents[1] / "fixtures" / "forge" / "labelled-passages.jsonl"


def rows() -> list[dict[str, str | None]]:
    return [
        json.loads(line)
        for line in LABELLED.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def test_precision_on_the_labelled_set() -> None:
    """Questions, chit-chat, narration, requests, hedges and tool noise never become
    candidates; what is accepted is knowledge of the labelled type."""
    data = rows()
    accepted = [(row, classify(str(row["text"]))) for row in data]
    accepted = [(row, v) for row, v in accepted if v.accepted]
    false_positives = [row for row, _ in accepted if row["label"] is None]
    assert false_positives == []
    positives = [row for row in data if row["label"]]
    precision = 1 - len(false_positives) / len(accepted)
    recall = len(accepted) / len(positives)
    typed = sum(1 for row, v in accepted if v.type is not None and v.type.value == row["label"])
    assert precision == 1.0
    assert recall >= 0.9, f"recall {recall:.2f}"
    assert typed / len(accepted) >= 0.9
    negatives = Counter(str(row.get("kind")) for row in data if row["label"] is None)
    assert {"question", "chitchat", "narration", "request", "tool-noise", "hedge"} <= set(negatives)
    assert len(positives) >= 40 and sum(negatives.values()) >= 50


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Is the root cause the clock, or the timezone of the worker?", "question"),
        ("Thanks! That works.", "no-signal"),
        ("Let me look at the worker configuration to find the root cause.", "negative-pattern"),
        (
            'Traceback (most recent call last):\n  File "a.py", line 3, in f\nValueError: broke',
            "negative-pattern",
        ),
        ("Root cause: DST.", "too-short"),
        (
            "Note: there was a pre-existing unrelated change in `init.lua` that I did not touch.",
            "narration",
        ),
        (
            "Maybe we could try switching to RabbitMQ instead of Redis at some point.",
            "low-confidence",
        ),
    ],
)
def test_each_layer_rejects_for_its_reason(text: str, reason: str) -> None:
    verdict = classify(text)
    assert not verdict.accepted and verdict.reason == reason


def test_types_classes_and_confidence() -> None:
    decision = classify(
        "We decided to keep Redis as the broker instead of RabbitMQ, because the quota gate needs it."
    )
    assert (
        decision.type is KnowledgeType.DECISION
        and decision.knowledge_class is KnowledgeClass.DECISION
    )
    assert decision.confidence >= 0.75  # a strong and a weak signal, and a reason
    failure = classify(
        "Root cause: the Redis transport's `visibility_timeout` was shorter than the time limit."
    )
    assert (
        failure.type is KnowledgeType.FAILURE
        and failure.knowledge_class is KnowledgeClass.ARCHITECTURE
    )
    workflow = classify(
        "Lesson learned: run `make test` before merging a pull request, since CI is slow."
    )
    assert workflow.knowledge_class is KnowledgeClass.WORKFLOW
    # the type named first wins a tie: a decision that mentions a crash is still a decision
    tie = classify(
        "We chose to write the artifact first, because a crash between steps is then repaired."
    )
    assert tie.type is KnowledgeType.DECISION
    hedged = classify("We decided to keep Redis, I think, because the quota gate needs it.")
    assert hedged.confidence < decision.confidence
    assert classify(decision.text, bonus=0.05).confidence == pytest.approx(
        min(0.99, decision.confidence + 0.05)
    )


def test_code_fences_are_not_the_lesson() -> None:
    verdict = classify(
        "Fixed by raising the timeout:\n```python\nvt = 7200  # root cause\n```\nbecause tasks run 2 h."
    )
    assert verdict.accepted and "```" not in verdict.text and "vt = 7200" not in verdict.text


def test_fast_filter() -> None:
    assert has_signal("the root cause was X") and not has_signal("hello, how are you")


def test_passages_split_paragraphs_items_and_drop_code() -> None:
    text = (
        "Summary of the session.\n\nKey decisions:\n- Decided to use Redis, because it is there.\n"
        "- Chose UTC crontabs\n  so DST never bites.\n\n```bash\nrm -rf /\n```\n\nTrailing note."
    )
    got = list(passages(text))
    assert got == [
        ("", "Summary of the session."),
        ("", "Key decisions:"),
        ("Key decisions:", "Decided to use Redis, because it is there."),
        ("Key decisions:", "Chose UTC crontabs so DST never bites."),
        ("", "Trailing note."),
    ]
    lead = classify(
        "Always pin the worker pool size, since prefork leaks memory.", lead="Lessons learned:"
    )
    assert lead.accepted and lead.text.startswith("Always")
