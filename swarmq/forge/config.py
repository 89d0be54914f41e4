"""The ``forge:`` section of swarm.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_MIN_CONFIDENCE = 0.6
"""openknowledge's threshold: passages classified below it are not candidates."""


class ForgeLLMConfig(BaseModel):
    """Optional LLM extraction on top of the deterministic classifier (off by default)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    """Needs ``llm.provider`` other than ``none`` and a quota named by ``quota``."""
    quota: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")] = "forge"
    """The daily budget forge spends from: its own, so forging never starves the curator's
    ``enrichment``. Declare it under ``quotas:`` (e.g. ``forge: {max_calls_per_day: 20}``)."""
    max_input_chars: Annotated[int, Field(ge=1000, le=400_000)] = 24_000
    """How much of a transcript (its summaries first, then its latest text) one call sees."""
    max_candidates: Annotated[int, Field(ge=1, le=100)] = 12


class ForgeConfig(BaseModel):
    """How transcripts are mined for candidates."""

    model_config = ConfigDict(extra="forbid")

    min_confidence: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_MIN_CONFIDENCE
    """openknowledge's threshold: passages below it are not candidates."""
    roles: list[str] = Field(default_factory=lambda: ["assistant", "user", "system", "unknown"])
    """Speakers whose text is mined (``unknown`` is text with no speaker, e.g. notes)."""
    include_sidechains: bool = True
    """Mine sub-agent (Task tool) messages stored in the parent session."""
    summary_bonus: Annotated[float, Field(ge=0.0, le=0.5)] = 0.05
    """Confidence added to passages of compaction and session summaries (already distilled)."""
    max_line_bytes: Annotated[int, Field(ge=1024)] = 64 * 1024 * 1024
    """Transcript lines longer than this are skipped and reported."""
    mine_tool_errors: bool = True
    """Mine error → retry → success sequences of tool calls (see ``forge.sequences``)."""
    sequence_confidence: Annotated[float, Field(ge=0.0, le=0.99)] = 0.75
    """Confidence of a mined failure/solution pair (one with the agent's reason gets +0.1)."""
    unresolved_penalty: Annotated[float, Field(ge=0.0, le=0.99)] = 0.15
    """Confidence taken from a failure about the machine that no retry fixed (no proof of a cure)."""
    retry_window: Annotated[int, Field(ge=1, le=50)] = 4
    """Later calls of the same tool within which a different, successful call counts as the retry."""
    max_narrated: Annotated[int, Field(ge=0, le=100)] = 3
    """At most this many lessons of one session taken from the agent's own prose (the most
    confident; ``0`` keeps all): an agent that narrates many diagnoses is debugging its own
    code, and its narration is the work, not lessons (measured in docs/QUALITY.md: on the
    held-apart sets most such sessions' passages were task-specific, on the labelled development
    set the cap costs 2 of 96 lessons)."""
    narration_needs_witness: bool = True
    """A passage of the agent's own prose is a candidate only when it names something a failed
    call of the session showed (a program, file, identifier or error; ``forge._witness``): on
    sessions of users no rule was written on, the agent's other prose was narration of its work
    far more often than a lesson (docs/QUALITY.md). Needs ``mine_tool_errors``."""
    narration_needs_limit: bool = True
    """A passage of the agent's own prose is a candidate only when it states a limit of the
    machine (a program not installed, a refusal, something blocked; ``forge._limits``): on the
    Claude Code and Codex sessions of users no rule was written on, the agent's other prose was
    a lesson about one time in seven (docs/QUALITY.md). Markdown notes, which a person may have
    written and no labelled set holds, are not gated."""
    template_memory: bool = True
    """Reject passages already seen in another transcript of the workspace (pasted templates)."""
    transcript_roots: list[Path] = Field(default_factory=list)
    """When set, ``forge.extract`` only reads transcripts inside these directories (e.g.
    ``~/.claude/projects``, ``~/.codex/sessions``); empty means any readable file."""
    llm: ForgeLLMConfig = Field(default_factory=ForgeLLMConfig)
