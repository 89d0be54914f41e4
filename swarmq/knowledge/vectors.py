"""Entry vectors filled off the query path: the background catch-up of hybrid retrieval.

A packaged transformer (MiniLM) embeds an entry in ~28 ms of CPU, so the first query over a 10k
store that has no vectors yet would embed for minutes. A query therefore embeds at most a few
entries itself (:func:`~swarmq.knowledge._dense.inline_limit`) and ranks the others by their
words; this module fills the rest, in short batches (each its own SQLite write transaction on
the persisted index, so no reader waits on the model and a concurrent sync waits at most one
batch), from a process that can afford it: the resident hook server between requests, the
``maturity.embed`` task on a worker, ``swarmq knowledge embed``.

What is filled is derived data: the persisted index's vector rows (``knowledge.index.sqlite`` and
the files beside it), keyed by content, where every process finds them (a store loaded whole
looks them up instead of embedding, :meth:`~swarmq.knowledge._dense.DenseIndex.catch_up`). No
store file is written and no store lock is taken, so a fill never loses or delays an add; a
missing, stale or damaged vector file is detected by the index's own checks and refilled.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swarmq.knowledge._ftsindex import FileIndex, sidecar_path
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.store import TierStore

if TYPE_CHECKING:
    from swarmq.similarity.embedding import Embedder, Vectors

BATCH = 32
"""Entries embedded per transaction: ~1 s of CPU under MiniLM, the longest a concurrent index
writer waits."""


@dataclass(slots=True)
class FillReport:
    """What one fill did, per tier: entries embedded and entries still without a vector."""

    embedded: dict[str, int] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)
    stopped: bool = False
    """``stop()`` ended the fill (``missing`` may then be short of the truth)."""

    @property
    def done(self) -> bool:
        return not any(self.missing.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "embedded": self.embedded,
            "missing": self.missing,
            "done": self.done,
            "stopped": self.stopped,
        }


class _Counting:
    """The embedder, counting the texts it embeds (the fill's report)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.count = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.count += len(texts)
        return self.inner.embed(texts)


def fill(
    knowledge: KnowledgeStore,
    limit: int | None = None,
    *,
    batch: int = BATCH,
    stop: Callable[[], bool] | None = None,
) -> FillReport:
    """Embed up to ``limit`` entries (``None``: all) that have no vector yet, ``batch`` per
    transaction, tier by tier, until done or ``stop()`` says so. Nothing under lexical
    retrieval."""
    report = FillReport()
    embedder = knowledge.embedder
    if embedder is None:
        return report
    left = limit
    for store in knowledge.tiers:
        tier = str(store.tier)
        counting = _Counting(embedder)
        missing = 0
        while left is None or left > 0:
            if stop is not None and stop():
                report.stopped = True
                break
            step = batch if left is None else min(batch, left)
            before = counting.count
            missing = _fill_tier(store, counting, step, knowledge.config.persistent_index)
            done = counting.count - before
            if left is not None:
                left -= done
            if not missing or not done:
                break
        report.embedded[tier] = counting.count
        report.missing[tier] = missing
    return report


def _fill_tier(store: TierStore, embedder: Embedder, step: int, persisted: bool) -> int:
    """One batch for one tier: the persisted index's vectors, then this process's loaded
    mirror (which looks the new rows up rather than embedding them). Returns the entries still
    without a vector."""
    from swarmq.knowledge.query import dense_index

    missing = 0
    if persisted:
        try:
            index = FileIndex.open(
                store.files.knowledge, embedder=embedder, embed_limit=step, fill=True
            )
        except (OSError, sqlite3.Error):
            index = None
        if index is not None:
            with index:
                missing = index.vectors.missing if index.vectors is not None else 0
    mirror = store.tier_file.mirror
    if mirror.state is not None:
        with mirror.mutex:
            mirror.refresh()
            dense = dense_index(store, embedder, 0 if persisted else step)
            if not persisted:
                missing = len(dense.pending)
            elif dense.pending and not missing:
                dense_index(store, embedder, step)
                missing = len(dense.pending)
    return missing


def missing(knowledge: KnowledgeStore) -> dict[str, int | None]:
    """Entries per tier the persisted index holds no vector for under the model hybrid
    retrieval last caught up with, read without catching anything up (``None``: no vectors
    in step with the index yet, or no index); ``{}`` under lexical retrieval. For ``doctor`` and
    ``status``: it never loads the model."""
    config = knowledge.config
    if config.retrieval.value != "hybrid":
        return {}
    out: dict[str, int | None] = {}
    for store in knowledge.tiers:
        path = sidecar_path(store.files.knowledge)
        found: int | None = None
        with contextlib.suppress(sqlite3.Error):
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
            try:
                meta = dict(
                    db.execute(
                        "SELECT key, value FROM meta WHERE key IN ('gen', 'vec_gen', 'vec_missing')"
                    )
                )
            finally:
                db.close()
            if meta.get("vec_gen") is not None and meta.get("vec_gen") == meta.get("gen"):
                value = meta.get("vec_missing")
                found = value if isinstance(value, int) else 0
        out[str(store.tier)] = found
    return out
