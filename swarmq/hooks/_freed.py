"""Freed heap memory handed back to the system by a long-lived process between its requests.

A request of the resident server allocates and frees tens of MB (postings, trigger phrases, a
1M store's lexical hits, numpy buffers of the scans), on a new thread each (one connection,
one thread), so glibc serves them from several arenas. What is freed stays mapped in those
arenas: ~15 MB of a 1M server after twenty searches and injections, counted in its resident
memory, which issue 28 holds to 300 MB. ``malloc_trim(0)`` returns the free pages of every
arena (~1 ms); the live objects are untouched, so no answer changes. Elsewhere than glibc
(macOS, musl) there is nothing to call and nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import cache


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def release_freed() -> bool:
    """Hand the C heap's free pages back to the system; ``False`` where that cannot be done."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
