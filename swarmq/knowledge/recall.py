"""Recall at the moment of failure: the lessons whose failure signature matches a failing call.

A lesson born from a failure carries its signature in the entry field ``failure_signature``
(written when the lesson is added, see :func:`signature_fields`); entries written before that,
or by opencode-swarm, are matched by the signature computed from their lesson text. Each store's
mirror keeps a :class:`SignatureIndex` (signature → slots) in step with its changes, so a recall
in a running process is a dictionary lookup; the index is built once per process.

Silence is the normal answer: most failures have no lesson yet, and a hook runs on every failing
tool call, so nothing is shown, recorded or logged when nothing matches. What is shown is
recorded exactly as an injection is (receipt, ``shown_count``, ``retrieved`` event with
``retrieval_mode: failure_recall``), so ``KNOWLEDGE_APPLIED:<trace>:<id>`` closes the loop.
"""

from __future__ import annotations

import uuid

from swarmq.knowledge._indexes import mirror_index
from swarmq.knowledge.inject import Injection, record_injection
from swarmq.knowledge.model import Entry, RetrievalMode
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, Ranked
from swarmq.knowledge.ranking import static_breakdown
from swarmq.knowledge.render import Budget, render_directives
from swarmq.knowledge.signature import SIGNATURE_FIELD, failure_signature, failure_signatures
from swarmq.knowledge.store import TierStore

MATCH_BONUS = 1.0
"""Added to a matching entry's static score (signature rank lowers it a little)."""
QUERY_CHARS = 800


def entry_signature(entry: Entry) -> str | None:
    """The entry's stored signature, else the one its lesson text states (cached by text)."""
    value = entry.get(SIGNATURE_FIELD)
    if isinstance(value, str) and value:
        return value
    return failure_signature(entry.lesson)


class SignatureIndex:
    """Slots of a mirror by failure signature, kept current through slot events."""

    def __init__(self) -> None:
        self.slots: dict[str, set[int]] = {}
        self.signature_of: dict[int, str] = {}
        self.entries: dict[int, Entry] = {}

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]

    def on_add(self, slot: int, entry: Entry) -> None:
        signature = entry_signature(entry)
        if signature is None:
            return
        self.slots.setdefault(signature, set()).add(slot)
        self.signature_of[slot] = signature
        self.entries[slot] = entry

    def on_remove(self, slot: int, entry: Entry) -> None:
        signature = self.signature_of.pop(slot, None)
        self.entries.pop(slot, None)
        if signature is not None:
            bucket = self.slots.get(signature)
            if bucket is not None:
                bucket.discard(slot)
                if not bucket:
                    del self.slots[signature]

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None:
        self.on_remove(slot, old)
        self.on_add(slot, new)


def signature_index(store: TierStore) -> SignatureIndex:
    """The mirror's signature index (call with ``mirror.mutex`` held, mirror refreshed)."""
    index: SignatureIndex = mirror_index(store.tier_file.mirror, "signature", SignatureIndex)
    return index


def match_tier(store: TierStore, signatures: tuple[str, ...]) -> list[Ranked]:
    """Active, in-scope entries of one tier whose signature is one of ``signatures`` (the
    first signature is the failure's most telling; later ones rank lower)."""
    scopes = set(store.config.scope_filter)
    mirror = store.tier_file.mirror
    out: list[Ranked] = []
    with mirror.mutex:
        mirror.refresh()
        index = signature_index(store)
        seen: set[int] = set()
        for rank, signature in enumerate(signatures):
            for slot in sorted(index.slots.get(signature, ())):
                entry = index.entries[slot]
                if slot in seen or not entry.is_active or entry.scope not in scopes:
                    continue
                seen.add(slot)
                breakdown = static_breakdown(entry)
                breakdown["signature"] = MATCH_BONUS - 0.1 * rank
                score = sum(breakdown.values())
                breakdown["final"] = score
                out.append(Ranked(entry, str(store.tier), score, breakdown))
    return out


def recall_error(
    knowledge: KnowledgeStore,
    text: str,
    *,
    limit: int = 3,
    agent: str | None = None,
    session_id: str | None = None,
    record: bool = True,
) -> Injection:
    """Lessons whose failure signature matches the failing call and error in `text`
    (silent when none match), hive included."""
    config = knowledge.config
    budget = Budget("full", limit, config.inject_char_budget)
    trace_id = str(uuid.uuid4())
    signatures = failure_signatures(text)
    if not config.enabled or not signatures or limit <= 0:
        return Injection(trace_id, budget, None, skipped=not config.enabled)
    found = match_tier(knowledge.swarm, signatures)
    if config.hive_enabled:
        for ranked in match_tier(knowledge.hive, signatures):
            if knowledge.swarm.find_duplicate(ranked.entry.lesson) is None:
                found.append(ranked)
    found = [r for r in found if r.entry.confidence >= config.inject_min_confidence]
    found.sort(key=lambda r: -r.score)
    if not found:
        return Injection(trace_id, budget, None, [], [])
    block, shown = render_directives(
        found, trace_id=trace_id, budget=budget, max_display=config.max_lesson_display_chars
    )
    injection = Injection(trace_id, budget, block, shown, found)
    if not record or not shown:
        return injection
    context = QueryContext(
        text=f"{signatures[0]}\n{text[:QUERY_CHARS]}",
        agent=agent,
        phase=knowledge.current_phase(),
        mode=RetrievalMode.FAILURE_RECALL,
    )
    return record_injection(knowledge, injection, context, session_id=session_id)
