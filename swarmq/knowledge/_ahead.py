"""A query's embedding computed beside the lexical half of its search.

A search first opens each tier's index and reads the postings, trigger phrases and keys of the
query's words (SQLite), and needs the query's vector only after that, for the dense
candidates. The embedding (onnxruntime, about 10 ms of a 78-token query under MiniLM) releases
the GIL, as SQLite does, so it runs on a thread of its own meanwhile and the ranking waits for
it only where it needs it. The vector is the embedder's, computed from the same text: only when
it is computed changes.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from swarmq.similarity.embedding import Embedder, Vectors

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The process's one embedding thread, started on first use and kept (a resident server
    would otherwise pay a thread's start on every search)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor  # only once a query embeds

            _POOL = ThreadPoolExecutor(1, thread_name_prefix="query-embed")
        return _POOL


def _forget_pool() -> None:
    """In a forked child: the parent's thread does not exist there, so start a new one."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


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
