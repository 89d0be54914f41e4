"""Streaming readers for agent transcripts: Claude Code, Codex (rollouts and history), Markdown."""

from swarmq.transcripts.detect import TranscriptFormatError, detect_format
from swarmq.transcripts.model import (
    MINABLE_KINDS,
    Message,
    MessageKind,
    ReadReport,
    ToolSink,
    TranscriptFormat,
)
from swarmq.transcripts.reader import Transcript, open_transcript

__all__ = [
    "MINABLE_KINDS",
    "Message",
    "MessageKind",
    "ReadReport",
    "ToolSink",
    "Transcript",
    "TranscriptFormat",
    "TranscriptFormatError",
    "detect_format",
    "open_transcript",
]
