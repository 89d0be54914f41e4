"""The layered classifier that decides whether a passage of a transcript is knowledge.

In the spirit of openknowledge's four-layer defence, cheapest first:

1. **Trigger filter**: one compiled regex over the text; most passages stop here.
2. **Questions** are rejected: a question records what someone did not know yet.
3. **Negative patterns**: chit-chat, narration of the agent's next step, tool noise (JSON,
   stack traces, shell transcripts, diffs, injected reminders) are rejected.
4. **Keyword scoring** per knowledge type, plus evidence (specific names, numbers, a reason),
   minus hedging; the **confidence** must reach the threshold (openknowledge's 0.6).

The result is a typed candidate: AgentOps' ``decision / solution / learning / failure /
reference`` type and, where one applies, openknowledge's ``architecture / decision / timeline /
workflow`` class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from swarmq.flywheel.model import KnowledgeType
from swarmq.forge import _multilingual as multilingual
from swarmq.forge import _reports as reports
from swarmq.forge._chatter import (
    NEGATIVE,
    SENTENCE,
    clean,
    ends_in_next_step,
    is_narration,
    is_noise,
    is_question,
    statement_before_questions,
    width,
    without_lead_in,
)
from swarmq.forge._signals import (
    ANCHORS,
    OBSERVED,
    PRIORITY,
    RULE,
    RULE_WORDS,
    TYPES,
    KnowledgeClass,
    knowledge_class,
    mentions,
    words,
)
from swarmq.forge.config import DEFAULT_MIN_CONFIDENCE

__all__ = ["MAX_CHARS", "MIN_CHARS", "Verdict", "classify"]

MIN_CHARS = 30


MAX_CHARS = 1500


_REASON_HEADS = ("because", "so ", "since", "due to", "which means", "→", "->")


_HEDGE_HEADS = (
    "maybe",
    "perhaps",
    "might",
    "not sure",
    "i think",
    "i guess",
    "possibly",
    "probably",
    "could try",
    "we could",
    "one option",
    "likely",
    "for now",
    "may ",
    "seem",
    "appear",
)
"""Literals (lower-case) without which :data:`_REASON` / :data:`_HEDGE` cannot match."""


_HEDGE = re.compile(
    r"\bmaybe\b|\bperhaps\b|\bmight\b|not sure|i think|i guess|possibly|probably|could try|"
    r"we could|one option|\blikely\b|\bfor now\b|\bmay (?:have|be)\b|\b(?:seems?|appears?) to\b",
    re.IGNORECASE,
)


_REASON = re.compile(
    r"\bbecause\b|\bso that\b|\bsince\b|\bdue to\b|\bwhich means\b|→|->|"
    # a consequence (", so the broker redelivered it"), not what someone does next ("so I …")
    r"[,;—–] so (?!far\b|now\b|(?:i|we|you|let|please|add|implement|write|create|update|"
    r"delete|refactor|rename|fix|make)\b)",
    re.I,
)


_SPECIFIC = re.compile(
    r"`[^`]+`|\b[\w./-]+\.(?:py|go|ts|js|rs|md|yaml|yml|jsonl?|toml|sh|sql)\b|\d"
)


def _says_why(body: str, lowered: str) -> bool:
    """A reason or consequence in ``body``; a chain of arrows ("Apps → Search → Upgrade") is
    a path or a sequence of steps, not a cause and its effect."""
    if not mentions(lowered, _REASON_HEADS):
        return False
    if body.count("→") + body.count("->") >= 2:
        body = body.replace("→", " ").replace("->", " ")
    return _REASON.search(body) is not None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The classifier's answer for one passage; ``accepted`` only when confident enough."""

    accepted: bool
    reason: str
    type: KnowledgeType | None = None
    knowledge_class: KnowledgeClass | None = None
    confidence: float = 0.0
    text: str = ""


def classify(
    text: str,
    *,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    bonus: float = 0.0,
    lead: str = "",
    text_words: frozenset[str] | None = None,
    observed: bool = True,
    report: bool = False,
) -> Verdict:
    """Classify one passage; ``bonus`` lifts passages from trusted sources (summaries),
    ``lead`` is the sentence introducing the list the passage belongs to, ``text_words`` the
    passage's :func:`words` when the caller already has them. ``observed`` is false for what a
    user typed: a pasted "command not found" is a report, not a fact the agent found out.
    ``report``: the message opens by reporting the agent's own edits (see :mod:`._reports`)."""
    scored_words = (
        words(f"{lead} {text}") if lead else (text_words if text_words is not None else words(text))
    )
    foreign = multilingual.foreign(text, scored_words) or (
        bool(lead) and multilingual.foreign(lead, scored_words)
    )
    if ANCHORS.isdisjoint(scored_words) and not foreign:
        return Verdict(False, "no-signal")  # layer 1: the fast filter
    # layers 2 and 3 (the anchored negative patterns first: they are the cheapest)
    opening = text.lstrip().lstrip("-*>#• ").lstrip().replace("’", "'")
    if NEGATIVE.match(opening) or (foreign and multilingual.NARRATION.match(opening)):
        note = "" if observed else reports.standing_note(text)  # a user's request, not narration
        if not note:
            return Verdict(False, "negative-pattern")
        if is_narration(note.split(" ", 2)[-1]):  # "note that the next step will be …": a plan
            return Verdict(False, "narration")
        text = note
    body = clean(text)
    if (len(body) if body.isascii() else width(body)) < MIN_CHARS:
        return Verdict(False, "too-short")
    if len(body) > MAX_CHARS:
        return Verdict(False, "too-long")
    if body.rstrip("*_ ").endswith((":", "：")):  # introduces what follows (steps, a list)
        body = without_lead_in(body)
        if not body:
            return Verdict(False, "lead-in")
    if is_question(body):
        body = statement_before_questions(body)  # "No network here, so … . Could you …?"
        if not body:
            return Verdict(False, "question")
    if is_noise(body):
        return Verdict(False, "negative-pattern")
    if is_narration(SENTENCE.split(body[:240].replace("’", "'"), maxsplit=1)[0]):
        return Verdict(False, "narration")
    used = reports.unquoted(body)
    if "’" in used:  # the typographic apostrophe many models write: "can’t reach"
        used = used.replace("’", "'")
    scored = f"{lead} {used}" if lead else used
    cues = multilingual.signals(scored, observed=observed) if foreign else {}
    label = len(lead.split()) <= 6
    lowered = body.lower()
    has_reason = _says_why(body, lowered) or bool(foreign and multilingual.REASON.search(body))
    scores = []  # layer 4
    for ktype, signals in TYPES:
        strong = weak = 0
        first = len(scored)
        for pattern, weight, anchors in signals:
            if anchors.isdisjoint(scored_words) or (not observed and pattern is OBSERVED):
                continue
            match = pattern.search(used) or (pattern.search(lead) if lead else None)
            if match:
                first = min(first, match.start())
                lent = not label and match.string is lead  # a sentence's cue, not a label's
                if not lent and (
                    (weight >= 1.0 and pattern is not RULE)
                    or (has_reason and (pattern is RULE or pattern is RULE_WORDS))
                ):
                    strong += 1  # a rule with its reason is a rule, whoever says it
                else:
                    weak += 1
        if ktype in cues:
            more_strong, more_weak, at = cues[ktype]
            strong, weak, first = strong + more_strong, weak + more_weak, min(first, at)
        scores.append((strong + 0.5 * weak, -first, -PRIORITY[ktype], strong, weak, ktype))
    # Most signal wins; on a tie the type named first ("We chose …, because a crash …" is a
    # decision), then the more specific type.
    total, _, _, strong, weak, ktype = max(scores)
    if total <= 0:
        return Verdict(False, "no-signal")
    confidence = 0.4 + 0.2 * min(strong, 2) + 0.08 * min(weak, 3) + bonus
    if has_reason:
        confidence += 0.1
    if _SPECIFIC.search(body):
        confidence += 0.1
    if (
        confidence >= min_confidence
        and not has_reason
        and (
            (report and not reports.is_note(lead or body.split("\n", 1)[0]))
            or reports.is_change_report(body, lead)
        )
    ) or reports.for_the_task(body):
        confidence -= reports.CHANGE_PENALTY
    if observed and confidence >= min_confidence and ends_in_next_step(body):  # acted on next
        confidence -= reports.CHANGE_PENALTY
    if observed and confidence >= min_confidence and reports.reports_checks(body):
        confidence -= reports.CHANGE_PENALTY
    if (mentions(lowered, _HEDGE_HEADS) and _HEDGE.search(body)) or (
        foreign and multilingual.HEDGE.search(body)
    ):
        confidence -= 0.2
    confidence = round(max(0.0, min(0.99, confidence)), 4)
    kclass = knowledge_class(f"{lead.lower()} {lowered}" if lead else lowered, scored, ktype)
    if confidence < min_confidence:
        return Verdict(False, "low-confidence", ktype, kclass, confidence, body)
    return Verdict(True, "accepted", ktype, kclass, confidence, body)
