"""The swarm's health figures (quotas, LLM spend, knowledge, flywheel, missions, hook and MCP
call latency), read from the canonical files and Redis when asked.

One :class:`FigureReader` per process serves every scrape and every refresh of ``swarmq top``.
It reads each figure from where the CLI command that shows it reads it, so the two agree:
the quota gate's status (``quota status``), the LLM ledger (``llm usage``), the knowledge store
files, the receipt journal, the knowledge events file (injections shown and silent), the
consolidation journals, the flywheel's own metrics (``flywheel status``), the forge ledger, the
mission ledger and index, the dead-letter file and the workers' presence keys. Append-only
journals are folded incrementally (:mod:`.journal_tally`); the knowledge store, rewritten
whole by updates, is re-read only when its inode, size or mtime changed: an append is folded
from where the last read stopped, a rewrite parses only lines it has not seen, on a worker
thread the scrape does not wait for (:meth:`FigureReader.store_summaries`). Labels come from
the roster and from closed sets (states, statuses, categories, outcomes, the hook and MCP
servers' calls), so the number of series stays bounded.

A figure is a :class:`Family` (name, kind, help, samples): plain data the Prometheus collector
(:mod:`.metrics`) and the terminal view print without knowing where it came from.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from swarmq.coord.cluster import Cluster
from swarmq.coord.presence import present
from swarmq.flywheel.metrics import compute_metrics
from swarmq.forge.ledger import ledger_path
from swarmq.knowledge.files import TierFiles
from swarmq.knowledge.model import Entry, EntryShapeError
from swarmq.knowledge.recorded import RECORDED_BY, RECORDER_KINDS
from swarmq.missions.history import INDEX_FILE
from swarmq.missions.ledger import LEDGER_FILE
from swarmq.missions.states import MissionState
from swarmq.names import DEAD_LETTER_FILE
from swarmq.roster.schema import Roster
from swarmq.storage import call_latency
from swarmq.storage.clock import try_parse_iso
from swarmq.storage.locking import LocalLocks
from swarmq.wiring.flywheel import layout_for
from swarmq.wiring.journal_tally import JournalTally, Key, Tally
from swarmq.wiring.knowledge import knowledge_store

Kind = Literal["gauge", "counter", "histogram"]
Labels = tuple[str, ...]

DISPATCH_BUCKETS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)
"""Seconds from a mission's dispatch (assignment created) to its run starting on the worker."""
RUN_BUCKETS = (1.0, 5.0, 15.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 14400.0)
"""Seconds an agent run took (started to ended)."""
REAPED_PREFIX = "reaped:"
"""How the reaper's forced resume names the assignment it abandoned (``swarmq.reaper``)."""
INJECTION_RESULTS = {"retrieved": "shown", "no_relevant": "silent", "injection_skip": "skipped"}
"""``knowledge-events.jsonl`` types (written by ``knowledge.inject``) and what they mean."""
ACK_VERDICTS = ("applied", "n_a", "ignored", "contradicted", "violated")
"""The terminal outcomes the receipt journal commits per shown entry (a test keeps them equal)."""
CONSOLIDATION_EVENTS = ("merged", "superseded", "linked")
"""The action records of a store's consolidation journal."""


@dataclass
class Family:
    """One metric family as plain data: Prometheus name (counters without ``_total``), help,
    label names and samples (histograms: cumulative bucket counts, count and sum)."""

    name: str
    kind: Kind
    doc: str
    labels: Labels = ()
    samples: list[tuple[Labels, float]] = field(default_factory=list)
    histograms: list[tuple[Labels, list[int], float]] = field(default_factory=list)
    buckets: tuple[float, ...] = ()

    def value(self, *labels: str) -> float:
        """The sample with these label values (0 when absent), for readers and tests."""
        return next((v for k, v in self.samples if k == labels), 0.0)

    def total(self) -> float:
        return sum(v for _, v in self.samples)


def _stamp(value: object) -> float | None:
    moment = try_parse_iso(value) if isinstance(value, str) else None
    return None if moment is None else moment.timestamp()


# -- journal folds ------------------------------------------------------------------------------


def _fold_llm(record: dict[str, Any], tally: Tally) -> None:
    """The LLM ledger as ``llm usage`` reads it (:func:`swarmq.llm.ledger.summarise_usage`)."""
    key = (
        str(record.get("provider", "?")),
        str(record.get("model", "?")),
        str(record.get("quota", "?")),
        str(record.get("purpose") or "none"),
    )
    if record.get("event") == "reply_rejected":
        tally.add(("rejected", *key))
        return
    outcome = str(record.get("outcome", "?"))
    tally.add(("calls", *key))
    tally.add(("ok" if outcome == "ok" else "failed", *key))
    if record.get("counted") is True:
        tally.add(("counted", *key))
    if outcome.startswith("quota_"):
        tally.add(("refused", str(record.get("quota", "?"))))
    for field_name in ("tokens_in", "tokens_out"):
        count = record.get(field_name)
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            tally.add((field_name, *key), count)
            tally.add((f"{field_name}_by_model", key[0], key[1]), count)


def _fold_receipts(record: dict[str, Any], tally: Tally) -> None:
    payload = record.get("payload")
    if record.get("kind") == "terminal_committed" and isinstance(payload, dict):
        tally.add(("ack", str(payload.get("outcome", "?"))))
    elif record.get("kind") == "retrieval_committed":
        tally.add(("retrieval",))


def _fold_events(record: dict[str, Any], tally: Tally) -> None:
    result = INJECTION_RESULTS.get(str(record.get("type")))
    if result is None:
        return
    tally.add((result,))
    at = _stamp(record.get("timestamp"))
    if at is not None:
        tally.latest((result,), at)
    if result == "shown":
        ids = record.get("result_ids")
        tally.add(("entries_shown",), len(ids) if isinstance(ids, list) else 0)


def _fold_type(record: dict[str, Any], tally: Tally) -> None:
    tally.add((str(record.get("type", "?")),))


def _fold_lines(record: dict[str, Any], tally: Tally) -> None:
    tally.add(("lines",))


def _fold_forge(record: dict[str, Any], tally: Tally) -> None:
    tally.add(("runs",))
    new = record.get("new")
    tally.add(("new",), new if isinstance(new, int) and not isinstance(new, bool) else 0)
    at = _stamp(record.get("forged_at"))
    if at is not None:
        tally.latest(("runs",), at)


def _fold_dead(record: dict[str, Any], tally: Tally) -> None:
    tally.add((str(record.get("task", "?")),))


class _MissionFigures:
    """States, dispatch latencies, run durations and reaped assignments of mission records."""

    def __init__(self) -> None:
        self.tally = Tally()
        self.dispatch: list[int] = [0] * (len(DISPATCH_BUCKETS) + 1)
        self.dispatch_sum = 0.0
        self.run: list[int] = [0] * (len(RUN_BUCKETS) + 1)
        self.run_sum = 0.0

    def add(self, record: dict[str, Any]) -> None:
        self.tally.add(("state", str(record.get("state", "?"))))
        for item in record.get("assignments") or []:
            if not isinstance(item, dict):
                continue
            worker = str(item.get("workerId", "?"))
            created, started = _stamp(item.get("createdAt")), _stamp(item.get("startedAt"))
            ended = _stamp(item.get("endedAt"))
            if created is not None and started is not None:
                self.dispatch_sum += _observe(self.dispatch, DISPATCH_BUCKETS, started - created)
            if started is not None and ended is not None:
                self.run_sum += _observe(self.run, RUN_BUCKETS, ended - started)
            if str(item.get("reason") or "").startswith(REAPED_PREFIX):
                self.tally.add(("reaped", worker))

    def merged(self, other: _MissionFigures) -> _MissionFigures:
        out = _MissionFigures()
        for source in (self, other):
            for key, value in source.tally.sums.items():
                out.tally.add(key, value)
        out.dispatch = [a + b for a, b in zip(self.dispatch, other.dispatch, strict=True)]
        out.run = [a + b for a, b in zip(self.run, other.run, strict=True)]
        out.dispatch_sum = self.dispatch_sum + other.dispatch_sum
        out.run_sum = self.run_sum + other.run_sum
        return out


def _observe(counts: list[int], bounds: tuple[float, ...], value: float) -> float:
    value = max(0.0, value)
    index = next((i for i, bound in enumerate(bounds) if value <= bound), len(bounds))
    counts[index] += 1
    return value


def _cumulative(counts: list[int]) -> list[int]:
    out, running = [], 0
    for count in counts:
        running += count
        out.append(running)
    return out


class _IndexTally(JournalTally):
    """The mission index (retired missions) folded into mission figures."""

    def __init__(self, path: Path) -> None:
        self.missions = _MissionFigures()
        super().__init__(path, self._fold)

    def reset(self) -> None:
        super().reset()
        self.missions = _MissionFigures()

    def _fold(self, record: dict[str, Any], tally: Tally) -> None:
        self.missions.add(record)
        tally.add(("lines",))


# -- the knowledge store ------------------------------------------------------------------------


Fields = tuple[str, str, int, str | None]
"""Of one entry: status, category, confirmations, and who recorded it (when on purpose)."""


Parsed = tuple[str, Fields] | None
"""A line's entry id and fields; ``None`` for a line that is not an entry."""
BLANK: tuple[str, Fields] = ("", ("", "", 0, None))
"""What a blank line parses to (skipped, not counted as unreadable)."""


@dataclass(frozen=True)
class StoreSummary:
    """What the scrape shows of a store, replaced whole when a re-read finishes (so a scrape
    never sees a half-folded store)."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    confirmations: int = 0
    recorded: dict[str, int] = field(default_factory=dict)
    unreadable: int = 0
    entries: int = 0


@dataclass
class _StoreView:
    """The store as its readers see it, with its figures summed once per change.

    ``lines`` maps the hash of each line's bytes to what it parsed to, so a rewrite (an update
    rewrites the whole file) parses only the lines it changed; an append parses only the tail.
    """

    entries: dict[str, Fields] = field(default_factory=dict)
    lines: dict[int, Parsed] = field(default_factory=dict)
    signature: tuple[int, int, int] = (-1, -1, -1)
    offset: int = 0
    unreadable: int = 0
    summary: StoreSummary | None = None
    _counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    _confirmations: int = 0
    _recorded: Counter[str | None] = field(default_factory=Counter)
    ambiguous: bool = False
    """Two lines of the file held one id: a rewrite is folded whole, not as a difference."""

    def drop(self, entry_id: str) -> None:
        self._tally(self.entries.pop(entry_id), -1)

    def _tally(self, fields: Fields, sign: int) -> None:
        self._counts[(fields[0], fields[1])] += sign
        self._confirmations += sign * fields[2]
        if fields[3] is not None and fields[0] not in ("archived", "quarantined"):
            self._recorded[fields[3]] += sign

    def fold(self, parsed: list[Parsed]) -> None:
        """Entries in file order (the last line of an id wins); the sums follow each change,
        so an append costs what it appended, not the size of the store."""
        entries = self.entries
        for item in parsed:
            if item is None:
                self.unreadable += 1
                continue
            if item is BLANK:
                continue
            old = entries.get(item[0])
            if old is not None:  # a second line for one id: fold the next rewrite whole
                self._tally(old, -1)
                self.ambiguous = True
            entries[item[0]] = item[1]
            self._tally(item[1], 1)
        self.summary = StoreSummary(
            {key: n for key, n in self._counts.items() if n},
            self._confirmations,
            {kind: self._recorded.get(kind, 0) for kind in RECORDER_KINDS},
            self.unreadable,
            len(entries),
        )


def _entry_fields(value: dict[str, Any]) -> Fields:
    entry = Entry(value)
    who = entry.get(RECORDED_BY)
    kind = who.get("kind") if isinstance(who, dict) else None
    return (
        entry.status,
        entry.category,
        len(entry.confirmed_by),
        kind if kind in RECORDER_KINDS else None,
    )


def _parse_line(raw: bytes) -> Parsed:
    if not raw.strip():
        return BLANK
    try:
        value = json.loads(raw)
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            return value["id"], _entry_fields(value)
    except (ValueError, EntryShapeError):  # the store moves such a line aside as corrupt
        return None
    return None


def _read_store(path: Path, view: _StoreView) -> _StoreView:
    """The store as its readers see it (last line of an id wins), re-read only when the file
    changed: appended lines (a group commit's adds) are folded from where the last read stopped;
    a rewritten file (an update rewrites it whole) is split and hashed, and only the lines that
    left or arrived are folded (a full fold when lines or ids repeat)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, stat on the same fd
    except FileNotFoundError:
        return _StoreView()
    with handle:
        stat = os.fstat(handle.fileno())
        signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if signature == view.signature:
            return view
        appended = stat.st_ino == view.signature[0] and stat.st_size >= view.offset
        start = view.offset if appended else 0
        handle.seek(start)
        data = handle.read()
    end = data.rfind(b"\n") + 1  # a torn last line waits for its newline
    skip = 3 if start == 0 and data.startswith(b"\xef\xbb\xbf") else 0
    raws, keys = _split_lines(data, skip, end)
    del data
    if not appended and view.summary is not None and not view.ambiguous:
        unique = set(keys)
        if len(unique) == len(keys):
            _fold_difference(view, unique, keys, raws)
            view.offset, view.signature = start + end, signature
            return view
    known = view.lines
    if not appended:
        view = _StoreView()
    fresh = {k: _parse_line(raw) for k, raw in zip(keys, raws, strict=True) if k not in known}
    known.update(fresh)
    parsed = [known[k] for k in keys]
    view.lines.update(zip(keys, parsed, strict=True))
    view.fold(parsed)
    view.offset, view.signature = start + end, signature
    return view


SPLIT_CHUNK = 1 << 20
"""Bytes of the store split and hashed between two yields of the GIL."""


def _split_lines(data: bytes, start: int, stop: int) -> tuple[list[bytes], list[int]]:
    """The lines of ``data[start:stop]`` (which ends with a newline) and their hashes, a chunk
    at a time with the GIL given up between chunks: one ``split`` or ``map(hash, ...)`` over a
    57 MB store holds the GIL for tens of milliseconds, which a scrape answering on another
    thread would wait out."""
    raws: list[bytes] = []
    keys: list[int] = []
    pos = start
    while pos < stop:
        cut = data.rfind(b"\n", pos, min(stop, pos + SPLIT_CHUNK))
        if cut < 0:  # one line longer than a chunk
            cut = data.find(b"\n", pos, stop)
        part = data[pos:cut].split(b"\n")
        raws.extend(part)
        keys.extend(map(hash, part))
        pos = cut + 1
        time.sleep(0)
    return raws, keys


def _rewritten(path: Path, view: _StoreView) -> bool:
    """Whether the store file was replaced or shrunk since ``view`` was read (not an append)."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return False
    return stat.st_ino != view.signature[0] or stat.st_size < view.offset


def _fold_difference(
    view: _StoreView, unique: set[int], keys: list[int], raws: list[bytes]
) -> None:
    """Fold a rewrite as the lines that left and the lines that arrived (set differences in C;
    Python touches only the changed lines)."""
    gone = view.lines.keys() - unique
    arrived = unique - view.lines.keys()
    for key in gone:
        item = view.lines.pop(key)
        if item is None:
            view.unreadable -= 1
        elif item is not BLANK and view.entries.get(item[0]) is item[1]:
            view.drop(item[0])
    if arrived:
        new = [(k, raw) for k, raw in zip(keys, raws, strict=True) if k in arrived]
        parsed = [_parse_line(raw) for _, raw in new]
        view.lines.update(zip((k for k, _ in new), parsed, strict=True))
        view.ambiguous = any(
            p is not None and p is not BLANK and p[0] in view.entries for p in parsed
        )
        view.fold(parsed)
    else:
        view.fold([])


# -- the reader ---------------------------------------------------------------------------------


class FigureReader:
    """Every figure of one roster, read when :meth:`read` is called (once per scrape)."""

    def __init__(
        self,
        roster: Roster,
        *,
        cluster: Callable[[], Cluster] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.roster = roster
        self.clock = clock
        self._cluster_factory = cluster or (
            lambda: Cluster.connect(roster.cluster_config(), check=False, timeout=2.0)
        )
        self._cluster: Cluster | None = None
        knowledge = knowledge_store(roster, LocalLocks(roster.runtime_dir / "locks"))
        self.tiers: dict[str, TierFiles] = {t.files.tier.value: t.files for t in knowledge.tiers}
        self._stores = {name: _StoreView() for name in self.tiers}
        self._rereads: dict[str, tuple[Future[_StoreView], bool]] = {}
        """Re-reads a scrape did not wait out, and whether each is of a rewritten store."""
        self._pool = ThreadPoolExecutor(
            max_workers=len(self.tiers), thread_name_prefix="swarmq-store-read"
        )
        self._sidecars = {
            name: {
                "rejected": JournalTally(files.rejected, _fold_lines),
                "quarantined": JournalTally(files.quarantined, _fold_lines),
                "unactionable": JournalTally(files.unactionable, _fold_lines),
                "evicted": JournalTally(files.evicted, _fold_lines),
                "consolidation": JournalTally(
                    files.root / f"{files.knowledge.stem}-consolidation.jsonl", _fold_type
                ),
            }
            for name, files in self.tiers.items()
        }
        self._events = JournalTally(knowledge.swarm.files.events, _fold_events)
        self._receipts = JournalTally(knowledge.receipts_path, _fold_receipts)
        runtime = roster.runtime_dir
        self._llm = JournalTally(runtime / "llm-ledger.jsonl", _fold_llm)
        self._dead = JournalTally(runtime / DEAD_LETTER_FILE, _fold_dead)
        self._index = _IndexTally(runtime / INDEX_FILE)
        self._ledger_path = runtime / LEDGER_FILE
        self._ledger: tuple[tuple[int, int, int], _MissionFigures] | None = None
        self.layout = layout_for(roster)
        self._forge = JournalTally(ledger_path(self.layout), _fold_forge)
        self._flywheel: tuple[float, dict[str, Any]] | None = None

    def store_summaries(self) -> dict[str, tuple[StoreSummary, bool]]:
        """Each tier's store figures and whether they predate its last change.

        A changed store is re-read on a worker thread (one per tier). An append is folded in
        milliseconds: the scrape waits for it up to ``metrics.store_wait_seconds`` in total. A
        rewrite (an update replaces the file) takes longer than a scrape may, so the scrape does
        not wait for it: it shows the tier's previous figures (said by
        ``swarmq_knowledge_store_stale``) while the re-read finishes for the next scrape. The
        first read of a store is always waited for."""
        pending: dict[str, tuple[Future[_StoreView], bool]] = {}
        for tier, files in self.tiers.items():
            carried = self._rereads.pop(tier, None)
            if carried is not None:
                pending[tier] = carried
                continue
            view = self._stores[tier]
            rewritten = view.summary is not None and _rewritten(files.knowledge, view)
            job = self._pool.submit(_read_store, files.knowledge, view)
            pending[tier] = (job, rewritten)
        deadline = time.monotonic() + self.roster.metrics.store_wait_seconds
        out: dict[str, tuple[StoreSummary, bool]] = {}
        for tier, (job, rewritten) in pending.items():
            shown = self._stores[tier].summary
            try:
                if shown is None:
                    wait: float | None = None
                elif rewritten:
                    wait = 0.0
                else:
                    wait = max(0.0, deadline - time.monotonic())
                view = job.result(timeout=wait)
            except TimeoutError:
                self._rereads[tier] = (job, rewritten)
                assert shown is not None
                out[tier] = (shown, True)
                continue
            self._stores[tier] = view
            out[tier] = (view.summary or StoreSummary(), False)
        return out

    def store_summary(self, tier: str) -> tuple[StoreSummary, bool]:
        """One tier's entry of :meth:`store_summaries`."""
        return self.store_summaries()[tier]

    @property
    def cluster(self) -> Cluster:
        if self._cluster is None:
            self._cluster = self._cluster_factory()
        return self._cluster

    def read(self) -> list[Family]:
        """Every family, the Redis ones first (a Redis that does not answer raises)."""
        return [family for _, read in self.sections() for family in read()]

    def sections(self) -> list[tuple[str, Callable[[], list[Family]]]]:
        """Every section's name and reader, in reading order: the exporter and ``swarmq top``
        read the same list."""
        return [
            ("quotas", self.quotas),
            ("workers", self.workers),
            ("llm", self.llm),
            ("flywheel", self.flywheel),
            ("missions", self.missions),
            ("calls", self.calls),
            ("knowledge", self.knowledge),  # last: a store re-read may still be running
        ]

    # -- hook and MCP calls -----------------------------------------------------------------------

    def calls(self) -> list[Family]:
        """The hook and MCP servers' call latencies, from the files they flush
        (:mod:`swarmq.storage.call_latency`); labels are the servers' closed sets of calls."""
        out = []
        for kind, label, doc in (
            ("hook", "event", "Seconds the hook server took to answer a hook, by request."),
            ("mcp", "tool", "Seconds the MCP server took to run a tool call, by tool."),
        ):
            histograms = call_latency.read_all(self.roster.runtime_dir, kind)
            out.append(
                Family(
                    f"swarmq_{kind}_call_duration_seconds",
                    "histogram",
                    doc,
                    (label,),
                    buckets=call_latency.BUCKETS,
                    histograms=[
                        ((name,), h.cumulative(), h.total) for name, h in sorted(histograms.items())
                    ],
                )
            )
        return out

    # -- quotas and workers (Redis) ------------------------------------------------------------

    def quotas(self) -> list[Family]:
        now = self.clock()
        used = Family("swarmq_quota_used", "gauge", "LLM calls started in the current window.")
        held = Family("swarmq_quota_held", "gauge", "Slots reserved, not yet started.")
        top = Family("swarmq_quota_max", "gauge", "Calls the window allows.")
        reset = Family("swarmq_quota_reset_seconds", "gauge", "Seconds until the window resets.")
        for family in (used, held, top, reset):
            family.labels = ("quota",)
        for status in self.cluster.gate.statuses():
            labels = (status.name,)
            used.samples.append((labels, float(status.used)))
            held.samples.append((labels, float(status.held)))
            top.samples.append((labels, float(status.max)))
            reset.samples.append((labels, max(0.0, status.resets_at.timestamp() - now)))
        tally = self._llm.refresh()
        refused = Family(
            "swarmq_quota_refusals",
            "counter",
            "LLM calls refused for want of a quota slot (exhausted, or the gate could not "
            "decide), from the LLM ledger.",
            ("quota",),
            [((q,), tally.total(("refused", q))) for q in sorted(self.roster.quotas)],
        )
        return [used, held, top, reset, refused]

    def workers(self) -> list[Family]:
        ids = [w.id for w in self.roster.workers]
        alive = present(self.cluster.client, self.roster.swarm, ids)
        up = Family(
            "swarmq_worker_up",
            "gauge",
            "1 while the worker renews its presence key in Redis.",
            ("worker",),
            [((w,), 1.0 if w in alive else 0.0) for w in ids],
        )
        return [up]

    # -- LLM ------------------------------------------------------------------------------------

    def llm(self) -> list[Family]:
        tally = self._llm.refresh()
        labels = ("provider", "model", "quota", "purpose")
        names = {
            "calls": ("swarmq_llm_calls", "Attempts at a provider (LLM ledger)."),
            "counted": ("swarmq_llm_quota_slots", "Attempts that spent a quota slot."),
            "failed": ("swarmq_llm_failures", "Attempts that did not end in a reply."),
            "rejected": ("swarmq_llm_rejected_replies", "Replies refused after they arrived."),
            "tokens_in": ("swarmq_llm_input_tokens", "Prompt tokens the providers reported."),
            "tokens_out": ("swarmq_llm_output_tokens", "Reply tokens the providers reported."),
        }
        families = {k: Family(n, "counter", d, labels) for k, (n, d) in names.items()}
        cost = Family(
            "swarmq_llm_cost_dollars",
            "counter",
            "Estimated spend: tokens times the roster's metrics.prices (0 for unpriced models).",
            ("provider", "model"),
        )
        costs: dict[Key, float] = {}
        seen = sorted({key[1:] for key in tally.sums if key[0] in families})
        for kind, family in families.items():  # every series of a seen call, 0 when none
            family.samples = [(rest, tally.total((kind, *rest))) for rest in seen]
        for key, value in sorted(tally.sums.items()):
            kind, rest = key[0], key[1:]
            if kind.endswith("_by_model"):
                price = self._price(rest[0], rest[1])
                if price is not None:
                    spent = (
                        price.cost(int(value), 0)
                        if kind.startswith("tokens_in")
                        else price.cost(0, int(value))
                    )
                    costs[rest] = costs.get(rest, 0.0) + spent
        for series in seen:
            costs.setdefault(series[:2], 0.0)
        cost.samples = sorted(costs.items())
        budget = self.roster.metrics.daily_budget_usd
        out = [*families.values(), cost]
        if budget is not None:
            out.append(
                Family(
                    "swarmq_llm_daily_budget_dollars",
                    "gauge",
                    "metrics.daily_budget_usd of the roster: what a day's LLM spend may reach.",
                    samples=[((), float(budget))],
                )
            )
        return out

    def _price(self, provider: str, model: str) -> Any:
        prices = self.roster.metrics.prices
        return prices.get(f"{provider}/{model}") or prices.get(model)

    # -- knowledge ------------------------------------------------------------------------------

    def knowledge(self) -> list[Family]:
        entries = Family(
            "swarmq_knowledge_entries",
            "gauge",
            "Entries in the store, by tier, status and category.",
            ("tier", "status", "category"),
        )
        confirmations = Family(
            "swarmq_knowledge_confirmations",
            "gauge",
            "Confirmations (reinforcements) the entries carry.",
            ("tier",),
        )
        recorded = Family(
            "swarmq_knowledge_recorded_lessons",
            "gauge",
            "Live lessons recorded on purpose (knowledge_add over MCP, swarmq learn), by who.",
            ("kind",),
        )
        sidecar = Family(
            "swarmq_knowledge_sidecar_lines",
            "counter",
            "Entries rejected, quarantined, set aside as unactionable, evicted (FIFO cap, merged "
            "away) or "
            "changed by consolidation (merged, superseded, linked), from the store's journals.",
            ("tier", "event"),
        )
        added = Family(
            "swarmq_knowledge_added",
            "counter",
            "Entries ever accepted into the store: live entries plus those evicted since.",
            ("tier",),
        )
        unreadable = Family(
            "swarmq_knowledge_unreadable_lines",
            "gauge",
            "Lines of the store file that do not parse (the store moves them aside).",
            ("tier",),
        )
        stale = Family(
            "swarmq_knowledge_store_stale",
            "gauge",
            "1 while the store's figures predate its last change (a re-read is finishing).",
            ("tier",),
        )
        journals = {
            tier: {event: j.refresh() for event, j in self._sidecars[tier].items()}
            for tier in self.tiers
        }
        events = self._events.refresh()
        receipts = self._receipts.refresh()
        # Last: the one wait of a scrape, with no file read after it to slow (a re-read thread
        # holds the GIL while it parses).
        summaries = self.store_summaries()
        kinds: dict[str, float] = dict.fromkeys(RECORDER_KINDS, 0.0)
        for tier in self.tiers:
            summary, was_stale = summaries[tier]
            entries.samples.extend(
                ((tier, status, category), float(n))
                for (status, category), n in sorted(summary.counts.items())
            )
            confirmations.samples.append(((tier,), float(summary.confirmations)))
            unreadable.samples.append(((tier,), float(summary.unreadable)))
            stale.samples.append(((tier,), 1.0 if was_stale else 0.0))
            if tier == "swarm":
                for kind, n in summary.recorded.items():
                    kinds[kind] += n
            folded = journals[tier]
            evicted = sum(folded["evicted"].sums.values())
            for event in ("rejected", "quarantined", "unactionable"):
                sidecar.samples.append(((tier, event), folded[event].total(("lines",))))
            sidecar.samples.append(((tier, "evicted"), evicted))
            for event in CONSOLIDATION_EVENTS:
                sidecar.samples.append(((tier, event), folded["consolidation"].total((event,))))
            added.samples.append(((tier,), summary.entries + evicted))
        recorded.samples = [((k,), v) for k, v in sorted(kinds.items())]
        injections = Family(
            "swarmq_knowledge_injections",
            "counter",
            "Automatic injections: shown (directives in the prompt), silent (nothing relevant), "
            "skipped (no headroom); from knowledge-events.jsonl.",
            ("result",),
            [((r,), events.total((r,))) for r in ("shown", "silent", "skipped")],
        )
        shown_entries = Family(
            "swarmq_knowledge_injected_entries",
            "counter",
            "Entries shown across all injections.",
            samples=[((), events.total(("entries_shown",)))],
        )
        last = Family(
            "swarmq_knowledge_injection_last_timestamp_seconds",
            "gauge",
            "When the last injection of each result was recorded (Unix time).",
            ("result",),
            [((r,), t) for (r,), t in sorted(events.maxima.items())],
        )
        acks = Family(
            "swarmq_knowledge_acknowledgements",
            "counter",
            "Acknowledgements of shown entries by verdict (the receipt journal's terminals).",
            ("verdict",),
            [((v,), receipts.total(("ack", v))) for v in ACK_VERDICTS],
        )
        return [
            entries,
            confirmations,
            recorded,
            added,
            sidecar,
            unreadable,
            stale,
            injections,
            shown_entries,
            last,
            acks,
        ]

    # -- flywheel -------------------------------------------------------------------------------

    def flywheel_metrics(self) -> dict[str, Any]:
        """``flywheel status``'s figures, recomputed at most every ``flywheel_every_seconds``."""
        every = self.roster.metrics.flywheel_every_seconds
        now = time.monotonic()
        if self._flywheel is not None and now - self._flywheel[0] < every:
            return self._flywheel[1]
        config = self.roster.flywheel
        metrics = compute_metrics(
            self.layout,
            now=datetime.fromtimestamp(self.clock(), UTC),
            days=config.metrics_days,
            stale_days=config.stale_days,
        )
        self._flywheel = (now, metrics)
        return metrics

    def flywheel(self) -> list[Family]:
        m = self.flywheel_metrics()
        gauges = [
            ("swarmq_flywheel_sigma", "σ: share of learnings cited in the window.", "sigma"),
            ("swarmq_flywheel_rho", "ρ: share of cited learnings with evidence of use.", "rho"),
            ("swarmq_flywheel_delta_days", "δ: average age of learnings in days.", "delta"),
            ("swarmq_flywheel_velocity", "Escape velocity σ·ρ − δ/100.", "velocity"),
            ("swarmq_flywheel_citations", "Citations in the window.", "citations_this_period"),
        ]
        out = [
            Family(name, "gauge", doc, samples=[((), float(m.get(key) or 0.0))])
            for name, doc, key in gauges
        ]
        out.append(
            Family(
                "swarmq_flywheel_above_escape_velocity",
                "gauge",
                "1 when σ·ρ exceeds δ/100 (knowledge compounds).",
                samples=[((), 1.0 if m.get("above_escape_velocity") else 0.0)],
            )
        )
        tiers = m.get("tier_counts") or {}
        out.append(
            Family(
                "swarmq_flywheel_artifacts",
                "gauge",
                "Learnings, patterns (promotions) and pool candidates by pool state.",
                ("tier",),
                [((str(k),), float(v)) for k, v in sorted(tiers.items())],
            )
        )
        forge = self._forge.refresh()
        out.append(
            Family(
                "swarmq_forge_runs",
                "counter",
                "Forge runs that recorded their result in the forge ledger.",
                samples=[((), forge.total(("runs",)))],
            )
        )
        out.append(
            Family(
                "swarmq_forge_candidates",
                "counter",
                "New candidates forge wrote to .agents/knowledge/pending.",
                samples=[((), forge.total(("new",)))],
            )
        )
        if ("runs",) in forge.maxima:
            out.append(
                Family(
                    "swarmq_forge_last_run_timestamp_seconds",
                    "gauge",
                    "When the last forge run finished (Unix time).",
                    samples=[((), forge.maxima[("runs",)])],
                )
            )
        return out

    # -- missions -------------------------------------------------------------------------------

    def _active_missions(self) -> _MissionFigures:
        try:
            stat = self._ledger_path.stat()
        except FileNotFoundError:
            return _MissionFigures()
        signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if self._ledger is not None and self._ledger[0] == signature:
            return self._ledger[1]
        figures = _MissionFigures()
        try:
            doc = json.loads(self._ledger_path.read_bytes())
        except (OSError, ValueError):
            doc = {}
        missions = doc.get("missions") if isinstance(doc, dict) else None
        for record in (missions or {}).values():
            if isinstance(record, dict):
                figures.add(record)
        self._ledger = (signature, figures)
        return figures

    def missions(self) -> list[Family]:
        self._index.refresh()
        figures = self._active_missions().merged(self._index.missions)
        states = Family(
            "swarmq_missions",
            "gauge",
            "Missions by state: the ledger's active ones plus every retired one.",
            ("state",),
            [((s.value,), figures.tally.total(("state", s.value))) for s in MissionState],
        )
        reaped = Family(
            "swarmq_missions_reaped",
            "counter",
            "Assignments the reaper abandoned (their worker died) and resumed elsewhere.",
            ("worker",),
            [((w.id,), figures.tally.total(("reaped", w.id))) for w in self.roster.workers],
        )
        dispatch = Family(
            "swarmq_mission_dispatch_seconds",
            "histogram",
            "Seconds from dispatch (assignment created) to the run starting on its worker.",
            buckets=DISPATCH_BUCKETS,
            histograms=[((), _cumulative(figures.dispatch), figures.dispatch_sum)],
        )
        run = Family(
            "swarmq_mission_run_seconds",
            "histogram",
            "Seconds an agent run took, started to ended.",
            buckets=RUN_BUCKETS,
            histograms=[((), _cumulative(figures.run), figures.run_sum)],
        )
        dead = self._dead.refresh()
        dead_letters = Family(
            "swarmq_dead_letters",
            "counter",
            "Messages moved to the dead_letter queue (<runtime>/dead-letter.jsonl).",
            samples=[((), sum(dead.sums.values()))],
        )
        return [states, reaped, dispatch, run, dead_letters]


def by_name(families: Iterable[Family]) -> dict[str, Family]:
    return {f.name: f for f in families}
