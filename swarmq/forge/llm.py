"""Optional LLM extraction: one call per transcript, behind the daily quota, validated strictly.

The model sees a bounded digest (summaries first, then the latest text) and must answer with a
JSON array of ``{"type", "content", "confidence", "class", "evidence"}`` where ``evidence`` is a
verbatim quote of the digest. The whole reply is checked before anything is kept: the schema (no
unknown keys, known type and class, 30-1500 characters, a confidence in [0, 1]), no degenerate
repetition (the same lesson twice, a phrase looping), every item's evidence found in what the
model was shown, no question or chatter. One failed check rejects the reply: it is reported back
to the completer as rejected, nothing of it is kept, and no second call is made (a model that
answered badly once is not paid to answer again). Items below the confidence threshold are
dropped without rejecting the rest. The completer is :class:`swarmq.completion.port.Completer`
(quota, rate limit, retries, ledger); a refused quota or a failed call leaves forge with its
deterministic results.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol

from swarmq.flywheel.content import content_hash
from swarmq.flywheel.model import KnowledgeType
from swarmq.forge._chatter import is_chatter
from swarmq.forge._pending_file import ForgedCandidate
from swarmq.forge._signals import KnowledgeClass
from swarmq.forge.classifier import MAX_CHARS, MIN_CHARS
from swarmq.forge.config import ForgeConfig
from swarmq.names import FORGE_EXTRACT
from swarmq.storage.boundedjson import loads_bounded

PURPOSE = FORGE_EXTRACT

SYSTEM_PROMPT = (
    "You extract durable project knowledge from a coding-agent transcript. Return ONLY a JSON "
    'array. Each item: {"type": one of decision|solution|learning|failure|reference, '
    '"content": one self-contained statement of 1-3 sentences naming the concrete files, '
    'commands or components involved and why, "confidence": 0..1, "class": one of '
    'architecture|decision|timeline|workflow or null, "evidence": a verbatim quote (10-200 '
    "characters) of the transcript that shows it}. Prefer what was learned by running things: a "
    "command that failed and what worked instead. Skip questions, plans, progress reports, "
    "pasted templates and anything only true for this session. Return [] when there is nothing "
    "durable."
)

KEYS = frozenset({"type", "content", "confidence", "class", "evidence"})
MIN_EVIDENCE = 10
MAX_EVIDENCE = 400


class Completer(Protocol):
    """The part of :class:`swarmq.completion.port.Completer` forge uses."""

    def complete(
        self, messages: Sequence[Any], *, held: object | None = None, purpose: str = ""
    ) -> Any: ...

    def reject(self, completion: Any, reason: str) -> None: ...


class InvalidReply(ValueError):
    """The reply broke a rule; the message names the item and the rule."""


_ARRAY = re.compile(r"\[.*\]", re.DOTALL)
_SPACES = re.compile(r"\s+")
_TOKEN = re.compile(r"\w+")


def parse_reply(text: str) -> list[dict[str, Any]] | None:
    """The JSON array in a reply (code fences and prose around it tolerated), else ``None``."""
    match = _ARRAY.search(text)
    if match is None:
        return None
    try:
        value = loads_bounded(match.group(0))
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return value


def _normal(text: str) -> str:
    return _SPACES.sub(" ", text).strip().lower()


def looping(text: str, n: int = 3, times: int = 3) -> bool:
    """Degenerate repetition: some ``n``-word phrase occurs ``times`` times or more."""
    tokens = _TOKEN.findall(text.lower())
    grams = Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    return bool(grams) and max(grams.values()) >= times


def validate_reply(items: list[dict[str, Any]], shown: str) -> list[dict[str, Any]]:
    """Check every item of a parsed reply against the rules above; raise :class:`InvalidReply`
    at the first broken one. ``shown`` is the text the model was given."""
    haystack = _normal(shown)
    seen_content: set[str] = set()
    seen_evidence: set[str] = set()
    for number, item in enumerate(items):
        where = f"item {number}"
        unknown = set(item) - KEYS
        if unknown:
            raise InvalidReply(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        ktype = item.get("type")
        if ktype not in KnowledgeType._value2member_map_:
            raise InvalidReply(f"{where}: type {ktype!r} is not one of {', '.join(KnowledgeType)}")
        content, evidence = item.get("content"), item.get("evidence")
        if not isinstance(content, str) or not MIN_CHARS <= len(content.strip()) <= MAX_CHARS:
            raise InvalidReply(
                f"{where}: content must be text of {MIN_CHARS}-{MAX_CHARS} characters"
            )
        confidence = item.get("confidence")
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, int | float)
            or not 0 <= confidence <= 1
        ):
            raise InvalidReply(f"{where}: confidence must be a number in [0, 1]")
        kclass = item.get("class")
        if kclass is not None and kclass not in KnowledgeClass._value2member_map_:
            raise InvalidReply(
                f"{where}: class {kclass!r} is not one of {', '.join(KnowledgeClass)} or null"
            )
        if (
            not isinstance(evidence, str)
            or not MIN_EVIDENCE <= len(evidence.strip()) <= MAX_EVIDENCE
        ):
            raise InvalidReply(
                f"{where}: evidence must be a quote of {MIN_EVIDENCE}-{MAX_EVIDENCE} characters"
            )
        if _normal(evidence) not in haystack:
            raise InvalidReply(
                f"{where}: evidence {evidence[:60]!r} does not occur in the transcript"
            )
        if looping(content):
            raise InvalidReply(f"{where}: content repeats itself")
        key, quote = _normal(content), _normal(evidence)
        if key in seen_content or quote in seen_evidence:
            raise InvalidReply(f"{where}: the same lesson or evidence twice")
        seen_content.add(key)
        seen_evidence.add(quote)
        if is_chatter(content):
            raise InvalidReply(f"{where}: a question, a request or narration, not a lesson")
    return items


def llm_candidates(
    completer: Completer,
    digest: str,
    config: ForgeConfig,
    *,
    source: str,
    session_id: str | None,
    last_index: int,
) -> tuple[list[ForgedCandidate], dict[str, Any]]:
    """Ask once; ``(candidates, report)`` where the report says what happened."""
    if not digest.strip():
        return [], {"status": "skipped", "reason": "nothing minable"}
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": digest}]
    try:
        completion = completer.complete(messages, purpose=PURPOSE)
    except Exception as exc:  # QuotaRefused, ProviderUnreachable, CompletionFailed
        outcome = getattr(exc, "outcome", type(exc).__name__)
        return [], {"status": str(outcome), "reason": str(exc)}
    call_id = getattr(completion, "call_id", None)
    items = parse_reply(str(getattr(completion, "text", "")))
    try:
        if items is None:
            raise InvalidReply("reply is not a JSON array of objects")
        if len(items) > config.llm.max_candidates:
            raise InvalidReply(
                f"{len(items)} items, more than the {config.llm.max_candidates} asked for"
            )
        validate_reply(items, digest)
    except InvalidReply as exc:
        completer.reject(completion, str(exc))
        return [], {"status": "rejected", "reason": str(exc), "call_id": call_id}
    out = [
        _candidate(item, source=source, session_id=session_id, index=last_index)
        for item in items
        if float(item["confidence"]) >= config.min_confidence
    ]
    return out, {
        "status": "ok",
        "returned": len(items),
        "accepted": len(out),
        "dropped": len(items) - len(out),
        "call_id": call_id,
    }


def _candidate(
    item: dict[str, Any], *, source: str, session_id: str | None, index: int
) -> ForgedCandidate:
    content = " ".join(str(item["content"]).split())
    evidence = " ".join(str(item["evidence"]).split()).replace('"', "'")
    text = f'{content} (evidence: "{evidence}")'
    value = round(max(0.0, min(0.99, float(item["confidence"]))), 4)
    kclass = item.get("class")
    return ForgedCandidate(
        text,
        str(item["type"]),
        kclass if isinstance(kclass, str) else None,
        value,
        source,
        index,
        0,
        None,
        session_id,
        "assistant",
        content_hash(text),
        extractor="llm",
    )
