"""One entry point for every transcript format: detect, then stream messages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from swarmq.transcripts._claude import read_claude
from swarmq.transcripts._codex import read_codex_history, read_codex_rollout
from swarmq.transcripts._lines import DEFAULT_MAX_LINE_BYTES
from swarmq.transcripts._markdown import read_markdown
from swarmq.transcripts.detect import detect_format
from swarmq.transcripts.model import (
    Message,
    MessageKind,
    ReadReport,
    ToolSink,
    TranscriptFormat,
)

Reader = Callable[..., Iterator[Message]]

READERS: dict[TranscriptFormat, Reader] = {
    TranscriptFormat.CLAUDE_CODE: read_claude,
    TranscriptFormat.CODEX_ROLLOUT: read_codex_rollout,
    TranscriptFormat.CODEX_HISTORY: read_codex_history,
    TranscriptFormat.MARKDOWN: read_markdown,
}


TOOL_FORMATS = frozenset({TranscriptFormat.CLAUDE_CODE, TranscriptFormat.CODEX_ROLLOUT})


class Transcript:
    """A transcript file opened for one streaming pass; ``report`` fills in as it is read."""

    def __init__(
        self,
        path: Path | str,
        fmt: TranscriptFormat | str | None = None,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path}: no such transcript file")
        self.format = TranscriptFormat(fmt) if fmt is not None else detect_format(self.path)
        self.max_line_bytes = max_line_bytes
        self.report = ReadReport(self.path, self.format)

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    def messages(
        self, skip: frozenset[MessageKind] = frozenset(), tools: ToolSink | None = None
    ) -> Iterator[Message]:
        """Stream the messages; call once (the report counts a single pass). Messages of the
        kinds in ``skip`` keep their index but are not built; skipped tool calls and results of
        the formats that have them (Claude Code, Codex rollouts) are handed to ``tools``."""
        reader = READERS[self.format]
        if tools is not None and self.format in TOOL_FORMATS:
            return reader(
                self.path, self.report, max_line_bytes=self.max_line_bytes, skip=skip, tools=tools
            )
        return reader(self.path, self.report, max_line_bytes=self.max_line_bytes, skip=skip)


def open_transcript(
    path: Path | str,
    fmt: TranscriptFormat | str | None = None,
    *,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Transcript:
    """Open ``path``, detecting its format unless ``fmt`` names it."""
    return Transcript(path, fmt, max_line_bytes=max_line_bytes)
