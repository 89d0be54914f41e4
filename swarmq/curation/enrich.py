"""Curator enrichment: plain-prose entries → actionable directives, merged without lost updates.

One run: pick active entries that carry no directive field and whose lesson changed since it
was last handled; send them in batches, one quota slot per call (held before the prompt is
built, spent when the request leaves); parse the strict reply; merge each proposal by entry id
with a compare-and-swap on the entry's ``revision``. The store lock is *not* held during the
call; afterwards, under the lock, each entry's revision is compared with the one read before the
call. A write that landed meanwhile makes the compare fail: the proposal is re-applied on top of
the current entry, leaving to the other writer every field it changed; if the lesson itself
changed, the proposal is stale and dropped. A batch is merged in one transaction (one rewrite of
the store). Nothing reaches the store from a refused reply.

Without a model the run either uses the deterministic fallback (tagged) or refuses with
``no_llm_client`` before touching the quota.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from swarmq.completion.port import (
    NO_PROVIDER,
    Completer,
    CompletionFailed,
    LLMJob,
    PromptTooLarge,
    ProviderUnreachable,
    QuotaRefused,
    prompt_chars,
)
from swarmq.curation._reply import ReplyRejected, build_messages, parse_reply
from swarmq.curation.fallback import deterministic_directives
from swarmq.curation.state import EnrichmentState, Handled, content_hash
from swarmq.knowledge.errors import InvalidEntry
from swarmq.knowledge.model import Entry
from swarmq.knowledge.store import TierStore
from swarmq.knowledge.transaction import Transaction
from swarmq.names import CURATOR_ENRICH
from swarmq.storage.locking import StoreLocks

LLM = "llm"
FALLBACK = "deterministic_fallback"
DIRECTIVE_MARKERS = (
    "triggers",
    "required_actions",
    "forbidden_actions",
    "verification_checks",
    "applies_to_agents",
    "applies_to_tools",
    "verification_predicate",
    "directive_priority",
)
PROVENANCE = ("enrichment_source", "enriched_at", "updated_at")
MERGE_CHUNK = 500
"""Proposals merged per store rewrite (bounds how long the store lock is held)."""


def is_plain_prose(entry: Entry) -> bool:
    """Active and without any directive field (an empty list or blank string counts as none)."""
    if not entry.is_active:
        return False
    return not any(entry.get(key) not in (None, [], "") for key in DIRECTIVE_MARKERS)


@dataclass
class EnrichmentReport:
    candidates: int = 0
    skipped_unchanged: int = 0
    calls: int = 0
    sources: list[str] = field(default_factory=list)
    enriched: list[str] = field(default_factory=list)
    merged_after_conflict: list[str] = field(default_factory=list)
    not_actionable: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    rejected_replies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: str | None = None
    """Why nothing was attempted (``no_llm_client: …``, ``disabled``)."""
    stopped: str | None = None
    """Why the run ended before its last batch (``quota_exhausted: …``, ``timeout: …``)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def sized_batches(pending: list[Entry], size: int, max_chars: int | None) -> list[list[Entry]]:
    """Batches of at most ``size`` lessons whose prompt fits ``max_chars`` (a batch that does
    not fit is split; a single lesson that cannot fit is left to the completer to refuse)."""
    batches = [pending[i : i + size] for i in range(0, len(pending), size)]
    if max_chars is None:
        return batches
    out: list[list[Entry]] = []
    while batches:
        batch = batches.pop(0)
        if len(batch) > 1 and prompt_chars(build_messages(batch)) > max_chars:
            half = len(batch) // 2
            batches[:0] = [batch[:half], batch[half:]]
        else:
            out.append(batch)
    return out


class Enricher(LLMJob):
    def __init__(
        self,
        store: TierStore,
        locks: StoreLocks,
        state: EnrichmentState,
        *,
        completer: Completer | None,
        allow_fallback: bool,
        no_client_reason: str = NO_PROVIDER,
        batch_size: int = 8,
        max_batches: int = 3,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(
            locks,
            completer=completer,
            allow_fallback=allow_fallback,
            no_client_reason=no_client_reason,
        )
        self.store = store
        self.state = state
        self.batch_size = batch_size
        self.max_batches = max_batches
        self.progress = progress or (lambda _message: None)

    # -- selection --------------------------------------------------------------------------------

    def pending(self, entry_ids: Sequence[str] | None, report: EnrichmentReport) -> list[Entry]:
        wanted = set(entry_ids) if entry_ids else None
        candidates = [
            e
            for e in self.store.read().entries
            if is_plain_prose(e) and (wanted is None or e.id in wanted)
        ]
        report.candidates = len(candidates)
        handled = self.state.read()
        have_model = self.completer is not None
        out = [
            e
            for e in candidates
            if not self.state.unchanged(handled, e.id, e.lesson, have_model=have_model)
        ]
        report.skipped_unchanged = len(candidates) - len(out)
        return out

    # -- the run ------------------------------------------------------------------------------------

    def run(self, entry_ids: Sequence[str] | None = None) -> EnrichmentReport:
        report = EnrichmentReport()
        pending = self.pending(entry_ids, report)
        if not pending:
            return report
        if self.completer is None:
            if not self.allow_fallback:
                report.refused = (
                    f"no_llm_client: {self.no_client_reason}; allow_deterministic_fallback is false"
                )
                return report
            self._fallback(pending, report)
            return report
        batches = sized_batches(pending, self.batch_size, self.completer.max_prompt_chars)
        for index, batch in enumerate(batches[: self.max_batches]):
            self.progress(f"batch {index + 1}: {len(batch)} entries")
            if not self._llm_batch(batch, report):
                if (
                    report.stopped
                    and report.stopped.startswith("provider_unreachable")
                    and self.allow_fallback
                ):
                    rest = [e for b in batches[index : self.max_batches] for e in b]
                    self._fallback(rest, report)
                break
        return report

    def _llm_batch(self, batch: list[Entry], report: EnrichmentReport) -> bool:
        """One call; ``False`` when the run must stop."""
        assert self.completer is not None
        try:
            with self.completer.hold(CURATOR_ENRICH) as held:
                messages = build_messages(batch)
                completion = self.completer.complete(messages, held=held, purpose=CURATOR_ENRICH)
        except (QuotaRefused, PromptTooLarge) as exc:  # nothing sent, no slot spent
            report.stopped = f"{exc.outcome}: {exc}"
            return False
        except ProviderUnreachable as exc:
            report.stopped = f"provider_unreachable: {exc}"
            return False
        except CompletionFailed as exc:
            report.calls += 1
            report.stopped = f"{exc.outcome}: {exc}"
            return False
        report.calls += 1
        try:
            proposals = parse_reply(completion.text, {e.id: e for e in batch})
        except ReplyRejected as exc:
            self.completer.reject(completion, str(exc))
            report.rejected_replies.append(str(exc))
            return True
        self._note_source(report, LLM)
        proposed = {p.entry_id: p.fields for p in proposals}
        self._apply(batch, proposed, LLM, report)
        return True

    def _apply(
        self,
        entries: list[Entry],
        proposed: dict[str, dict[str, Any]],
        source: str,
        report: EnrichmentReport,
    ) -> None:
        merged = self._merge_all(
            [(e, proposed[e.id]) for e in entries if e.id in proposed], source, report
        )
        handled = []
        for entry in entries:
            if entry.id not in proposed:
                report.not_actionable.append(entry.id)
                handled.append(
                    Handled(entry.id, content_hash(entry.lesson), source, "not_actionable")
                )
            elif entry.id in merged:
                handled.append(Handled(entry.id, content_hash(entry.lesson), source, "enriched"))
        self._record(handled)

    def _fallback(self, entries: list[Entry], report: EnrichmentReport) -> None:
        self._note_source(report, FALLBACK)
        proposed = {}
        for entry in entries:
            fields = deterministic_directives(entry.lesson)
            if fields:
                proposed[entry.id] = fields
        self._apply(entries, proposed, FALLBACK, report)

    @staticmethod
    def _note_source(report: EnrichmentReport, source: str) -> None:
        if source not in report.sources:
            report.sources.append(source)

    def _record(self, handled: list[Handled]) -> None:
        if handled:
            self.state.record(self.locks, handled, (e.id for e in self.store.read().entries))

    # -- compare-and-swap merge -----------------------------------------------------------------------

    def _merge_all(
        self, proposals: list[tuple[Entry, dict[str, Any]]], source: str, report: EnrichmentReport
    ) -> set[str]:
        """Apply each proposal to its entry as read in the snapshot, in one store transaction
        (one rewrite), never over a concurrent write; returns the ids merged."""
        merged: set[str] = set()
        for start in range(0, len(proposals), MERGE_CHUNK):
            with self.store.transaction() as txn:
                at = self.store.now()
                for snapshot, fields in proposals[start : start + MERGE_CHUNK]:
                    if self._merge_one(txn, snapshot, fields, source, at, report):
                        merged.add(snapshot.id)
        return merged

    @staticmethod
    def _merge_one(
        txn: Transaction,
        snapshot: Entry,
        fields: dict[str, Any],
        source: str,
        at: str,
        report: EnrichmentReport,
    ) -> bool:
        current = txn.get(snapshot.id)
        if current is None or not current.is_active or current.lesson != snapshot.lesson:
            report.stale.append(snapshot.id)  # gone, retired or rewritten while the model thought
            return False
        updates: dict[str, Any] = {
            **fields,
            "enrichment_source": source,
            "enriched_at": at,
            "updated_at": at,
        }
        conflicted = current.revision != snapshot.revision
        if conflicted:  # the compare of the CAS failed: keep every field the other writer changed
            updates = {
                k: v
                for k, v in updates.items()
                if k in PROVENANCE or current.get(k) == snapshot.get(k)
            }
        try:
            txn.put({**current.data, **updates}, expected_revision=current.revision)
        except InvalidEntry as exc:
            report.errors.append(str(exc))
            return False
        report.enriched.append(snapshot.id)
        if conflicted:
            report.merged_after_conflict.append(snapshot.id)
        return True
