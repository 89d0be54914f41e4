"""A failed call run again asking it to say more is a look, not a cure.

After ``claude auth`` failed, the agent ran ``claude auth --verbose`` (or ``DEBUG=* claude
auth``) to see why. Whatever that run prints, it changes nothing the failed call depended on: a
verbosity switch only adds output. When it happens to exit 0 (the program took the flag as a
prompt, or the failure was a fluke), the miner read it as "``claude auth --verbose`` worked
instead", a false lesson that the next session would follow. So a call that is a failed call of
the session plus only such switches is a look for every open failure, as ``which`` or ``cat``
are: it neither cures them nor counts as a remedy tried.
"""

from __future__ import annotations

import re

_LOUDER_FLAGS = frozenset(
    {
        "--verbose",
        "-v",
        "-vv",
        "-vvv",
        "--debug",
        "--trace",
        "--log-level=debug",
        "--loglevel=debug",
    }
)
"""Switches that only make a program say more (``-d`` is left out: ``docker run -d`` detaches)."""
_LOUDER_ENV = re.compile(r"^(?:DEBUG|VERBOSE|TRACE|RUST_LOG|RUST_BACKTRACE)=\S*$")
"""Environment assignments that only make a program say more (``DEBUG=* claude auth``)."""
_QUOTES = "'\""


def _words(call: str) -> list[str]:
    return [w.strip(_QUOTES) for w in call.split()]


def asks_more(call: str, failed: str) -> bool:
    """Whether ``call`` is ``failed`` again with only verbosity switches (or assignments) added:
    ``claude auth --verbose`` after ``claude auth``; not the same call, nor one with any other
    word changed."""
    now, before = _words(call), _words(failed)
    if not before or len(now) <= len(before):
        return False
    added = list(now)
    for word in before:  # every word of the failed call, in order
        if word not in added:
            return False
        added.remove(word)
    if not added or not all(w in _LOUDER_FLAGS or _LOUDER_ENV.match(w) for w in added):
        return False
    kept = [w for w in now if w not in added]
    return kept == before


__all__ = ["asks_more"]
