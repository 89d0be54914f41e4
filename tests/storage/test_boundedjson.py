"""Depth and size bounds of JSON read from files: refused as a ``JSONDecodeError``, never a
``RecursionError``, and no ordinary text refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmq.storage.boundedjson import MAX_DEPTH, JsonBoundError, depth_error, loads_bounded
from swarmq.storage.jsonl import CorruptLine, JsonlLine, read_jsonl


@pytest.mark.parametrize(
    "text",
    [
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1),
        "[{" * 70 + "}]" * 70,
        "[" * 5000 + "]" * 5000,
        "[" * 5000,  # not even closed
        '[["x"],' + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "]",
    ],
)
def test_deeper_than_the_bound_is_refused(text: str) -> None:
    assert depth_error(text) is not None
    with pytest.raises(JsonBoundError, match="nested deeper than"):
        loads_bounded(text)
    with pytest.raises(json.JSONDecodeError):
        loads_bounded(text)


@pytest.mark.parametrize(
    "text",
    [
        "[" * MAX_DEPTH + "]" * MAX_DEPTH,
        '{"code": "' + "[{" * 5000 + '"}',  # brackets inside a string do not nest
        '{"q": "a \\" [[[[ \\\\", "b": [' + "[1]," * 5000 + "[2]]}",  # escapes, wide arrays
        "[" + ",".join(["[" * 100 + "]" * 100] * 50) + "]",
    ],
)
def test_within_the_bound_parses_as_json_does(text: str) -> None:
    assert depth_error(text) is None
    assert loads_bounded(text) == json.loads(text)
    assert loads_bounded(text.encode()) == json.loads(text.encode())


def test_the_size_bound() -> None:
    with pytest.raises(JsonBoundError, match="exceeds 10"):
        loads_bounded('["0123456789"]', max_chars=10)
    assert loads_bounded('["0123456789"]') == ["0123456789"]


def test_a_deep_jsonl_line_is_a_corrupt_line_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"n": 1}\n' + "[" * 2000 + "]" * 2000 + '\n{"n": 3}\n', encoding="utf-8")
    read = read_jsonl(path)
    assert [line.value for line in read.lines] == [{"n": 1}, {"n": 3}]
    (bad,) = read.corrupt
    assert isinstance(bad, CorruptLine) and not isinstance(bad, JsonlLine)
    assert bad.line_no == 2 and "nested deeper than" in bad.error


def test_without_the_pre_scan_the_parser_guard_still_refuses() -> None:
    """``max_depth=None`` (a large derived index) parses a value past the bound, and turns the
    parser's ``RecursionError`` on a really deep one into the same refusal."""
    assert loads_bounded("[" * 200 + "]" * 200, max_depth=None) is not None
    with pytest.raises(JsonBoundError, match="nested too deeply to parse"):
        loads_bounded("[" * 100_000 + "]" * 100_000, max_depth=None)
