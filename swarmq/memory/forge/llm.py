"""Optional LLM extraction: one call per transcript, behind the daily quota, checked like any
other candidate.

The model sees a bounded digest (summaries first, then the latest text) and must answer with a
JSON array of ``{"type", "content", "confidence", "class"}``. Answers are validated (known type,
30-1500 characters, not a question, confidence at the threshold) before they join the
deterministic candidates; a reply that is not such JSON is reported back to the completer as
rejected. The completer is :class:`swarmq.memory.completion.Completer` (quota, rate limit,
retries, ledger); a refused quota or a failed call leaves forge with its deterministic results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from swarmq.memory.flywheel.content import content_hash
from swarmq.memory.flywheel.model import KnowledgeType
from swarmq.memory.forge.classifier import MAX_CHARS, MIN_CHARS, KnowledgeClass, is_chatter
from swarmq.memory.forge.config import ForgeConfig
from swarmq.memory.forge.pending_file import ForgedCandidate

PURPOSE = "forge.extract"

SYSTEM_PROMPT = (
    "You extract durable project knowledge from a coding-agent transcript. Return ONLY a JSON "
    "array. Each item: {\"type\": one of decision|solution|learning|failure|reference, "
    "\"content\": one self-contained statement of 1-3 sentences naming the concrete files, "
    "commands or components involved and why, \"confidence\": 0..1, \"class\": one of "
    "architecture|decision|timeline|workflow or null}. Skip questions, plans, chit-chat and "
    "anything only true for this session. Return [] when there is nothing durable."
)


class Completer(Protocol):
    """The part of :class:`swarmq.memory.completion.Completer` forge uses."""

    def complete(self, messages: Sequence[Any], *, held: object | None = None, purpose: str = "") -> Any: ...

    def reject(self, completion: Any, reason: str) -> None: ...


_ARRAY = re.compile(r"\[.*\]", re.DOTALL)


def parse_reply(text: str) -> list[dict[str, Any]] | None:
    """The JSON array in a reply (code fences and prose around it tolerated), else ``None``."""
    match = _ARRAY.search(text)
    if match is None:
        return None
    try:
        value = json.loads(match.group(0))
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        return None
    return value


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
    items = parse_reply(str(getattr(completion, "text", "")))
    if items is None:
        completer.reject(completion, "reply is not a JSON array of objects")
        return [], {"status": "rejected", "reason": "reply is not a JSON array of objects"}
    out: list[ForgedCandidate] = []
    dropped = 0
    for item in items[: config.llm.max_candidates]:
        candidate = _validate(item, config, source=source, session_id=session_id, index=last_index)
        if candidate is None:
            dropped += 1
        else:
            out.append(candidate)
    return out, {"status": "ok", "returned": len(items), "accepted": len(out), "dropped": dropped,
                 "call_id": getattr(completion, "call_id", None)}


def _validate(item: dict[str, Any], config: ForgeConfig, *, source: str, session_id: str | None,
              index: int) -> ForgedCandidate | None:
    ktype = str(item.get("type") or "").strip().lower()
    content = " ".join(str(item.get("content") or "").split())
    confidence = item.get("confidence")
    if ktype not in KnowledgeType._value2member_map_ or not MIN_CHARS <= len(content) <= MAX_CHARS:
        return None
    if not isinstance(confidence, int | float) or isinstance(confidence, bool):
        return None
    value = max(0.0, min(0.99, float(confidence)))
    if value < config.min_confidence:
        return None
    if is_chatter(content):
        return None
    kclass = str(item.get("class") or "").strip().lower()
    return ForgedCandidate(content, ktype, kclass if kclass in KnowledgeClass._value2member_map_ else None,
                           round(value, 4), source, index, 0, None, session_id, "assistant",
                           content_hash(content), extractor="llm")
