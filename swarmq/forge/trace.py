"""A tracing tool-failure miner, for diagnosis (``swarmq.eval.forge_stages``): forge run with it
records every tool result, the failures the miner opened or refused to open (and the line of
``_failed`` that refused), what it gave up without a lesson, and every sequence it closed.
Nothing in forge uses it; it exists so an evaluation can say at which stage a lesson is lost.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any
from unittest import mock

from swarmq.forge import extract
from swarmq.forge._calls import call_texts
from swarmq.forge._sequences import Sequence, SequenceMiner

OUTPUT_CHARS = 4000
"""How much of each tool result the trace keeps (the error of a failing call is near its top)."""


@dataclass
class Seen:
    """One tool result as the miner got it."""

    tool: str
    call: str
    output: str
    failed: bool = False
    gate: str = ""
    """For a failed call the miner did not open: the line of ``_failed`` that said no."""
    opened: bool = False


@dataclass
class Trace:
    results: list[Seen] = field(default_factory=list)
    opened: list[tuple[str, str]] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    """Calls of failures given up without a lesson."""
    sequences: list[Sequence] = field(default_factory=list)


def _gate_tracer(trace: list[int]) -> Any:
    code = SequenceMiner._failed.__code__

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            trace.append(frame.f_lineno)
        return local

    def outer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code is code else None

    return outer


def _tracing_miner(trace: Trace) -> type[SequenceMiner]:
    class Tracing(SequenceMiner):
        def result(
            self,
            text: str,
            is_error: bool,
            index: int,
            line_no: int,
            timestamp: str | None,
            call_id: str | None = None,
        ) -> None:
            pending = self.pending_calls
            raw: Any = ""
            tool = "tool"
            for name, value, waiting in pending:
                if call_id is None or waiting == call_id:
                    tool, raw = name, value
                    break
            trace.results.append(Seen(tool, call_texts(raw)[1], text[:OUTPUT_CHARS]))
            super().result(text, is_error, index, line_no, timestamp, call_id)

        def _failed(
            self, tool: str, call: str, raw: Any, output: str, index: int, whole: str = ""
        ) -> bool:
            lines: list[int] = []
            before = sys.gettrace()
            sys.settrace(_gate_tracer(lines))
            try:
                opened = super()._failed(tool, call, raw, output, index, whole)
            finally:
                sys.settrace(before)
            if trace.results:
                seen = trace.results[-1]
                seen.failed, seen.opened = True, opened
                if not opened:
                    seen.gate = _gate_name(lines[-1] if lines else 0)
            return opened

        def _open(
            self,
            tool: str,
            call: str,
            error: str,
            index: int,
            whole: str,
            signature: str,
            usage: str = "",
        ) -> bool:
            opened = super()._open(tool, call, error, index, whole, signature, usage)
            if opened:
                trace.opened.append((call, error))
            return opened

        def _give_up(self, failure: Any) -> None:
            before = len(self.unresolved), len(self.closed)
            super()._give_up(failure)
            if (len(self.unresolved), len(self.closed)) == before:
                trace.given_up.append(failure.call)

        def drain(self) -> Iterator[Sequence]:
            for sequence in super().drain():
                trace.sequences.append(sequence)
                yield sequence

        def finish(self) -> Iterator[Sequence]:
            for sequence in super().finish():
                if sequence not in trace.sequences:
                    trace.sequences.append(sequence)
                yield sequence

    return Tracing


_GATE_LINES: dict[int, str] = {}


def _gate_name(line: int) -> str:
    """The source line of ``_failed`` that returned, shortened: the gate."""
    if not _GATE_LINES:
        source, first = inspect.getsourcelines(SequenceMiner._failed)
        for offset, text in enumerate(source):
            _GATE_LINES[first + offset] = text.strip()
    if line == 0:
        return "repeated"
    text = _GATE_LINES.get(line, "?")
    if "_unworded(" in text:
        return "unworded: no changed call of the same program worked"
    if "_open(" in text:
        return "repeated"  # _open said no: the signature was opened before
    if "#" in text:  # the gate's own comment, on its return line
        return f"L{line}: " + text.split("#", 1)[1].strip()[:70]
    for back in range(line - 1, line - 16, -1):  # else the condition that led here
        above = _GATE_LINES.get(back, "")
        if above.startswith("if ") or above.startswith("or ") or above.startswith("("):
            cond = " ".join(_GATE_LINES.get(n, "") for n in range(back, min(back + 3, line)))
            return f"L{line}: if {cond[:70]}"
    return f"L{line}: {text[:70]}"


@contextmanager
def traced(trace: Trace) -> Iterator[None]:
    """Forge, while in this block, mines tool failures with a miner that records into
    ``trace``."""
    with mock.patch.object(extract, "SequenceMiner", _tracing_miner(trace)):
        yield
