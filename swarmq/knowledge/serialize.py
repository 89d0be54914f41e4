"""JSON exactly as JavaScript's ``JSON.stringify`` writes it, so changed entries look native.

Unchanged entries are written back from their raw line and never pass through here. A changed
or new entry is serialised compactly, in the dict's key order, with non-ASCII text literal and
numbers in JavaScript's ``Number#toString`` form: ``1`` not ``1.0``, ``0.43999999999999995``
(Python's shortest repr has the same digits as JavaScript's), ``1e-7`` not ``1e-07``, and
``100000000000000000000`` not ``1e+20``. ``NaN`` and infinities become ``null`` as in JavaScript.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from swarmq.storage.boundedjson import loads_line

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_number(value: float) -> str:
    """``Number.prototype.toString`` for a double (shortest round-trip digits)."""
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    text = repr(abs(value))
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    # position of the decimal point relative to the digit string (value = 0.digits * 10**point)
    point = (
        len(whole) + exponent if whole != "0" else exponent - (len(frac) - len(frac.lstrip("0")))
    )
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    sign = "-" if value < 0 else ""
    if k <= point <= 21:
        body = digits + "0" * (point - k)
    elif 0 < point <= 21:
        body = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        body = "0." + "0" * (-point) + digits
    else:
        e = point - 1
        mark = "+" if e >= 0 else "-"
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + mark + str(abs(e))
    return sign + body


def _string(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if _LONE_SURROGATE.search(text):  # well-formed JSON.stringify escapes lone surrogates
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def dumps_js(value: Any) -> str:
    """Compact JSON of ``value`` in ``JSON.stringify`` form (key order kept)."""
    if _plain(value):  # the common case, written by the C encoder in one call
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if not _LONE_SURROGATE.search(text):
            return text
    parts: list[str] = []
    _emit(value, parts)
    return "".join(parts)


def _plain(value: Any) -> bool:
    """Whether :func:`json.dumps` writes ``value`` exactly as :func:`_emit` does: only plain
    dicts with string keys, lists, tuples, strings, ints, bools, ``None``, and floats whose
    ``repr`` is already JavaScript's form (not integral, ``1e-4 <= |x| < 1e16``, finite)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is float:
            if not 1e-4 <= abs(item) < 1e16 or item.is_integer():
                return False
        elif kind is dict:
            for key, inner in item.items():
                if type(key) is not str:
                    return False
                stack.append(inner)
        elif kind is list or kind is tuple:
            stack.extend(item)
        else:
            return False
    return True


def _emit(value: Any, out: list[str]) -> None:
    if value is None or value is True or value is False:
        out.append("null" if value is None else ("true" if value else "false"))
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(js_number(value))
    elif isinstance(value, Mapping):
        out.append("{")
        first = True
        for key, item in value.items():
            if not first:
                out.append(",")
            first = False
            out.append(_string(str(key)))
            out.append(":")
            _emit(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _emit(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot serialise {type(value).__name__} as JSON")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""One decoder for every line: ``json.loads`` with a keyword builds a new one per call, a
third of the parse time of a 10k-entry store."""


def loads_js(text: str) -> Any:
    """``JSON.parse``: like :func:`json.loads` but ``NaN``/``Infinity`` are errors, as in JS; a
    text nested or sized past the bounds of :mod:`~swarmq.storage.boundedjson` is refused too
    (:class:`~swarmq.storage.boundedjson.JsonBoundError`), never a ``RecursionError``."""
    return loads_line(text, _DECODER)
