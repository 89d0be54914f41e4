"""JSON parsing with a nesting-depth bound and a size bound, for text read from files.

Python's :mod:`json` has no depth limit of its own: a 2 KB line of ``[[[[…`` makes its C scanner
raise :class:`RecursionError` (not a ``ValueError``), and a value nested a few hundred levels
deep parses but then overflows the stack of whatever walks it. A line read from a canonical file
or a transcript is data from elsewhere, so it is checked first: one deeper than
:data:`MAX_DEPTH` or longer than the caller's size bound is refused with
:class:`JsonBoundError`, a :class:`json.JSONDecodeError`, so every reader that already treats a
bad line as corrupt does the same with this one.

The depth check costs two ``str.count`` passes on an ordinary line: a line with no more opening
brackets than the bound cannot nest deeper. Only a line with more (code in a tool output, a long
array) is scanned properly, strings skipped, stopping as soon as the bound is crossed.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from swarmq.errors import InvalidInput

MAX_DEPTH = 128
"""Deepest nesting accepted. Real records nest about ten levels (a transcript's tool input
inside a message inside a record); 128 leaves room and stays far below the interpreter's
recursion limit, so code that walks a parsed value recursively is safe too."""

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Longest line accepted where a reader names no bound of its own: a knowledge entry is a few
hundred bytes, so a line of megabytes is damage, and parsing it would cost many times its size
in memory."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_DECODER = json.JSONDecoder()


class JsonBoundError(InvalidInput, json.JSONDecodeError):
    """A JSON text nested deeper than the bound, or longer than the size bound: bad input, and
    a ``JSONDecodeError`` so that readers treat it as any other unparsable line."""


def depth_error(text: str, max_depth: int = MAX_DEPTH) -> JsonBoundError | None:
    """The error to raise when ``text`` nests deeper than ``max_depth`` (``None`` when it does
    not). Brackets inside strings do not count; malformed text is left to the parser.

    No Python loop runs per character: strings and everything but brackets are removed by the
    regex engine, a run of more openers than the bound (the usual attack) is found by one more
    search, and otherwise the running depth is summed by ``itertools.accumulate`` (linear, in C).
    """
    if text.count("[") + text.count("{") <= max_depth:
        return None
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    run = re.search(f"[\\[{{]{{{max_depth + 1}}}", brackets)  # that many openers in a row
    if run is None and max(accumulate(map(_STEP.__getitem__, brackets)), default=0) <= max_depth:
        return None
    return JsonBoundError(f"nested deeper than {max_depth} levels", text, 0)


def loads_bounded(
    text: str | bytes,
    *,
    max_depth: int | None = MAX_DEPTH,
    max_chars: int | None = None,
    decoder: json.JSONDecoder | None = None,
) -> Any:
    """:func:`json.loads` of text read from a file, refusing (:class:`JsonBoundError`, a
    ``ValueError``) one nested deeper than ``max_depth`` or longer than ``max_chars``.
    ``decoder`` replaces the plain one (e.g. a decoder refusing ``NaN``). A whole file of its
    own (an index, a state record) has no size bound unless one is given; a line does.

    ``max_depth=None`` skips the pre-scan, for a large derived file swarmq wrote itself (an
    index of megabytes, read on every command, whose reader walks a fixed shape): its depth is
    then bounded only by the parser's recursion guard, whose ``RecursionError`` is refused as
    :class:`JsonBoundError` here in every mode."""
    if isinstance(text, bytes | bytearray):  # as json.loads decodes bytes
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    if text.startswith("\ufeff"):  # json.loads's own check, with its message
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    if max_chars is not None and len(text) > max_chars:
        raise JsonBoundError(f"line of {len(text)} characters exceeds {max_chars}", text, 0)
    if max_depth is not None:
        error = depth_error(text, max_depth)
        if error is not None:
            raise error
    try:
        return (decoder or _DECODER).decode(text)
    except RecursionError:
        raise JsonBoundError("nested too deeply to parse", text, 0) from None


def loads_line(text: str, decoder: json.JSONDecoder | None = None) -> Any:
    """One JSONL line's value under the line bounds (:data:`MAX_DEPTH`, :data:`MAX_LINE_BYTES`),
    as :func:`loads_bounded`: the common line, which cannot pass either bound, is decoded
    without the pre-scan (this runs on every line of every store and transcript)."""
    count = text.count
    if (
        count("[") + count("{") <= MAX_DEPTH
        and len(text) <= MAX_LINE_BYTES
        and text[:1] != "\ufeff"
    ):
        return (decoder or _DECODER).decode(text)
    return loads_bounded(text, max_chars=MAX_LINE_BYTES, decoder=decoder)
