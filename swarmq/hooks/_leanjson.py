"""JSON on the hook wire without the ``json`` package, for the process that asks the resident
server one question: ``json`` imports ``re`` (and with it ``enum``, ``functools`` and
``collections``), 3-6 ms of such a process. ``json`` itself runs the C accelerator ``_json``
for both directions; this calls it directly (its string encoder, its scanner with the default
decoder's settings), so a value is written exactly as ``json.dumps(value, ensure_ascii=False)``
writes it and read exactly as ``json.loads`` reads it. Whatever these few lines do not cover (a
type other than the wire's, text the scanner refuses, an interpreter without ``_json``) is handed
to ``json``, imported then, which answers or raises as it always does."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's flag without importing typing (the type checker reads it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # another interpreter: json's pure-Python path, imported when needed
    _json = None  # type: ignore[assignment]

SPACE = " \t\n\r"
"""What ``json`` skips around a document (``json.decoder.WHITESPACE``)."""


class _Decoder:
    """The settings of ``json``'s default decoder, where ``_json.make_scanner`` reads them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


# The stub types the context as a scanner; the scanner reads only the attributes above.
_scan: Callable[[str, int], tuple[Any, int]] | None = (
    _json.make_scanner(_Decoder()) if _json is not None else None  # type: ignore[arg-type]
)


class _Other(Exception):
    """A value :func:`dumps` leaves to ``json``."""


def _write(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_json.encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif type(value) is int:
        out.append(int.__repr__(value))
    elif type(value) is dict:
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if type(key) is not str:
                raise _Other
            if i:
                out.append(", ")
            out.append(_json.encode_basestring(key))
            out.append(": ")
            _write(item, out)
        out.append("}")
    elif type(value) is list or type(value) is tuple:
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(", ")
            _write(item, out)
        out.append("]")
    else:
        raise _Other


def dumps(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False)``."""
    if _json is not None:
        out: list[str] = []
        try:
            _write(value, out)
        except (_Other, RecursionError):
            pass
        else:
            return "".join(out)
    import json

    return json.dumps(value, ensure_ascii=False)


def _skip(text: str, at: int) -> int:
    end = len(text)
    while at < end and text[at] in SPACE:
        at += 1
    return at


def loads(data: bytes | str) -> Any:
    """``json.loads(data)``: a document (bytes in UTF-8, or text) is scanned here; anything else,
    or anything the scanner refuses, is ``json``'s to read (or to refuse, with its own error)."""
    if _scan is not None:
        try:
            text = data if isinstance(data, str) else data.decode("utf-8")
            value, end = _scan(text, _skip(text, 0))
            if _skip(text, end) == len(text):
                return value
        except Exception:  # refused here: json says how (or reads what this does not)
            pass
    import json

    return json.loads(data)
