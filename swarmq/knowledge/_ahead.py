"""A query's embedding computed beside the lexical half of its search.

A search first opens each tier's index and reads the postings, trigger phrases and keys of the
query's words (SQLite), and needs the query's vector only after that, for the dense
candidates. The embedding (onnxruntime, about 10 ms of a 78-token query under MiniLM) releases
the GIL, as SQLite does, so it runs on a thread of its own meanwhile and the ranking waits for
it only where it needs it. The vector is the embedder's, computed from the same text: only when
it is computed changes.

Past the prefilter's threshold (:data:`~swarmq.knowledge._vecindex.PREFILTER_ROWS`) the dense
candidates' nearest rows (sign bits, the candidates' codes, the survivors' rows: no lexical hit
needed) are found as soon as the vector is there, on a thread of their own (:class:`Ahead`),
while the lexical reads go on; numpy's kernels, like SQLite, release the GIL.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from swarmq.similarity.embedding import Embedder, Vectors

DENSE_AHEAD = True
"""Whether a search finds the prefilter's nearest rows beside its lexical reads (:class:`Ahead`);
off, they are found in line when the ranking asks (the same answer, later)."""

_POOLS: dict[str, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def _pool(name: str = "query-embed") -> ThreadPoolExecutor:
    """The process's one thread of ``name``, started on first use and kept (a resident server
    would otherwise pay a thread's start on every search)."""
    with _POOL_LOCK:
        pool = _POOLS.get(name)
        if pool is None:
            from concurrent.futures import ThreadPoolExecutor  # only once a query embeds

            pool = _POOLS[name] = ThreadPoolExecutor(1, thread_name_prefix=name)
        return pool


def _forget_pool() -> None:
    """In a forked child: the parent's threads do not exist there, so start new ones."""
    global _POOLS, _POOL_LOCK
    _POOLS, _POOL_LOCK = {}, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


class PendingVector:
    """``embedder``'s vector of ``text``, being computed; :meth:`vector` waits for it (and
    raises what the embedding raised)."""

    __slots__ = ("_future", "embedder")

    def __init__(self, embedder: Embedder, text: str) -> None:
        self.embedder = embedder
        self._future: Future[Vectors] = _pool().submit(embedder.embed, [text])

    def vector(self) -> Vectors:
        row: Vectors = self._future.result()[0]
        return row


class Ahead:
    """``find`` (the nearest rows of a tier's vectors to the query) run on the dense thread as
    soon as ``pending``'s vector is there; :meth:`result` waits for it. :meth:`wait` is called
    before the tier's index closes, so the thread never reads a closed file."""

    __slots__ = ("_future",)

    def __init__(self, pending: PendingVector, find: Callable[[Vectors], dict[int, float]]) -> None:
        self._future: Future[dict[int, float]] = _pool("dense-ahead").submit(
            lambda: find(pending.vector())
        )

    def result(self) -> dict[int, float]:
        return self._future.result()

    def wait(self) -> None:
        """Wait for the work to end, whatever it raised (a search that did not ask for it, as
        one whose index turned out stale, has already its own error to report)."""
        self._future.exception()
