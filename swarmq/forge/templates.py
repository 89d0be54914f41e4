"""Recognising text that is not knowledge because it is pasted, not learned.

Slash-command and skill templates, pasted specs and sub-agent prompts recur verbatim across
sessions, and across users; a lesson is said once, in its own words. Forge keeps a per-workspace
set of passage fingerprints (``.agents/ao/forge/passages.jsonl``: fingerprint and the transcript
key it was first seen under): a passage already seen under *another* transcript is a template.
Re-forging the same transcript sees its own passages under its own key, so it stays idempotent.
One session recorded twice is not repetition: Codex writes every prompt both to the session's
rollout and to ``history.jsonl``, so each fingerprint also keeps the session it was seen in
(``s``, when known), and a passage seen before only in the same session is not a template.

YAML front matter is not a passage at all: it is cut before a message is split.

One line of a pasted log is the tool's own knowledge: a diagnostic with a documented error code
that names its remedy (:func:`coded_diagnostics`), kept even when the rest of the log is not.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from swarmq.forge.follow import FollowedJsonl, followed
from swarmq.storage.atomic import append_jsonl
from swarmq.storage.locking import Lease

MIN_TEMPLATE_CHARS = 40
"""Shorter passages ("Done.", "Looks good") recur by chance, not by pasting."""

_FRONT_MATTER = re.compile(r"\A\s*---[ \t]*\r?\n(?:.*?\r?\n)??---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_WORDS = re.compile(r"\s+")


TEMPLATE_MARKERS = (
    "You **MUST** consider the user input before proceeding",  # spec-kit /speckit.* commands
    "Please analyze this codebase and create a CLAUDE.md file",  # Claude Code /init
    "Base directory for this skill:",  # Claude Code skill expansion
    "Your task is to create a detailed summary of the conversation so far",  # Claude Code /compact prompt
    "# AGENTS.md instructions for",  # Codex project instructions
    "<user_instructions>",
    "<environment_context>",
    "<command-message>",
)
"""Known openings or fixed sentences of text the tools paste into a conversation."""


def is_known_template(text: str) -> bool:
    """Whether a message carries one of the known Claude Code / Codex / spec-kit template markers."""
    return any(marker in text for marker in TEMPLATE_MARKERS)


_LOG_LINE = re.compile(
    r"^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}|\[?\d{1,2}:\d{2}:\d{2}\b|"  # timestamps
    r"\[?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\b[\]:]?|"  # levels
    r"at [\w$.<>/\\-]+[ (:]|File \"[^\"]+\", line \d+|Traceback \(most recent call last\)|"  # stack frames
    r"\w+(?:Error|Exception)\b:|npm (?:ERR|WARN)!|error(?:\[E\d+\])?:|warning:|-->|\||[{}\[\]]|"  # diagnostics
    r"(?:Compiling|Finished|Running|Downloading|Installing|Collecting|Building)\s+\S|"  # build tools
    r"\$ |> |>>> |\d+\s*\||[\w./-]+\.\w+:\d+(?::\d+)?\b|"  # prompts, listings, file:line
    r"(?:\*\s+)?(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b(?: -)?\s)"  # a commit (git log --oneline/--graph)
)
MIN_LOG_LINES = 3


_SHELL_PROMPT = re.compile(
    r"\s*(?:\([\w.-]+\) )?(?:PS [A-Za-z]:\\[^>\n]*>|[\w.-]+@[\w.-]+:[^$\n]*\$ )"
)
"""A terminal prompt (PowerShell's ``PS C:\\dir>``, bash's ``user@host:dir$``, either after the
name of an activated environment: ``(base) user@host:dir$``) opening a message."""


def is_pasted_log(text: str) -> bool:
    """Whether a user's message is mostly pasted machine output (log lines, a stack trace, a
    build or test run): a report of what happened, whose lesson, if any, comes later from
    whoever reads it. Needs at least three such lines making up half the message's lines, or
    a terminal session pasted from its prompt on."""
    if text.count("\n") < MIN_LOG_LINES - 1:
        return False
    if _SHELL_PROMPT.match(text):
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    logged = sum(1 for line in lines if _LOG_LINE.match(line))
    return logged >= MIN_LOG_LINES and logged * 2 >= len(lines)


_DIAGNOSTIC = re.compile(
    r"^[ \t>]*(?:[\w./\\-]+(?:\(\d+,\d+\)|:\d+(?::\d+)?)\s*:?\s*)?"  # "src/a.ts(3,5): "
    r"(?P<line>(?:error\[E\d{4}\]|error TS\d{4}|\[[A-Z][\w .-]{1,30}\])\s*:\s*[^\n]{20,400})$",
    re.MULTILINE,
)
"""A compiler's or library's diagnostic line: ``error[E0133]: …``, ``src/a.ts(3,5): error
TS2551: …``, ``[React Flow]: …``."""
_CODED = re.compile(r"\[E\d{4}\]|\bTS\d{4}\b|/errors?[#/]\d{2,4}\b")
_REMEDY = re.compile(
    r"\brequires?\b|\bplease use\b|\bdid you mean\b|\bmust be\b|\buse \S+(?: \S+){0,4} instead\b",
    re.IGNORECASE,
)


def coded_diagnostics(text: str) -> list[str]:
    """The diagnostic lines of ``text`` that carry a documented error code and name their own
    remedy ("… is unsafe and requires unsafe block", "Please use onNodesChange … error#015"):
    a rule of the tool, stated by the tool, kept even from a pasted log. An exception at the
    end of a traceback (no code) is what one program did, not a rule of the tool."""
    if "error" not in text and "]:" not in text:
        return []
    found: list[str] = []
    for match in _DIAGNOSTIC.finditer(text):
        line = match["line"].strip()
        if _CODED.search(line) and _REMEDY.search(line) and line not in found:
            found.append(line)
    return found


_HEADING_LINE = re.compile(r"^#{1,6} \S", re.MULTILINE)
MIN_DOCUMENT_HEADINGS = 3


def is_pasted_document(text: str) -> bool:
    """Whether a user's message is a whole document (a spec, a style guide, an AGENTS.md pasted
    after a slash command): three or more markdown headings. Its rules are a policy file's, said
    for every project alike, not something this session found out; people type prompts, they
    paste documents."""
    return text.count("\n#") + text.startswith("#") >= MIN_DOCUMENT_HEADINGS and (
        len(_HEADING_LINE.findall(text)) >= MIN_DOCUMENT_HEADINGS
    )


_REQUIREMENT = re.compile(
    r"\b(?:the|this|our) (?:system|app|application|ui|user interface|tool|service|platform|"
    r"product|website|site|dashboard|module|backend|frontend) (?:must|will|should|shall)\b",
    re.IGNORECASE,
)
MIN_REQUIREMENTS = 3


def is_specification(text: str) -> bool:
    """Whether a user's message specifies a product to build ("The application will house …",
    "The system must integrate …", three or more such sentences): a requirements document is
    the task this session works on, not something it found out."""
    lowered = text.lower()
    if " must " not in lowered and " will " not in lowered and " should " not in lowered:
        return False
    return len(_REQUIREMENT.findall(text)) >= MIN_REQUIREMENTS


def strip_front_matter(text: str) -> str:
    """``text`` without a leading YAML front matter block (``---`` … ``---``)."""
    if not text.lstrip().startswith("---"):
        return text
    return _FRONT_MATTER.sub("", text, count=1)


def fingerprint(passage: str) -> str:
    """16 hex digits of the passage, case and spacing ignored."""
    normal = _WORDS.sub(" ", passage.strip().lower())
    return hashlib.blake2b(normal.encode("utf-8", "replace"), digest_size=8).hexdigest()


def source_key(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8", "replace"), digest_size=6).hexdigest()


class PassageMemory(FollowedJsonl):
    """Where each passage fingerprint of the workspace was first seen, followed (see
    :mod:`swarmq.forge.follow`): a run over n transcripts reads the file once, not n times."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.first_seen: dict[str, tuple[str, str | None]] = {}
        """Fingerprint → (transcript key, session key or ``None``) where it was first seen."""

    def clear(self) -> None:
        self.first_seen.clear()

    def fold(self, value: Any) -> None:
        if (
            isinstance(value, dict)
            and isinstance(value.get("p"), str)
            and isinstance(value.get("k"), str)
        ):
            session = value.get("s")
            self.first_seen.setdefault(
                value["p"], (value["k"], session if isinstance(session, str) else None)
            )


class SeenPassages:
    """The workspace's passage fingerprints (brought up to date when one forge starts) plus the
    ones this forge saw first; the latter are appended under the store lock."""

    def __init__(self, path: Path, key: str) -> None:
        self.path = path
        self.key = source_key(key)
        self.new: dict[str, str | None] = {}
        """Fingerprint → session key, for the fingerprints first seen in this forge."""
        self.memory = followed(PassageMemory, path)
        with self.memory.lock:
            self.memory.refresh()

    def _owner(self, mark: str) -> tuple[str, str | None] | None:
        if mark in self.new:
            return self.key, self.new[mark]
        return self.memory.first_seen.get(mark)

    def is_template(self, passage: str, session: str | None = None) -> bool:
        """Whether ``passage`` was seen under another transcript of another (or an unknown)
        session; records it otherwise. ``session`` is the id of the session that said it."""
        if len(passage) < MIN_TEMPLATE_CHARS:
            return False
        mark = fingerprint(passage)
        said_in = source_key(session) if session else None
        owner = self._owner(mark)
        if owner is None:
            self.new[mark] = said_in
            return False
        key, first_session = owner
        return key != self.key and (first_session is None or first_session != said_in)

    def flush(self, lease: Lease | None) -> None:
        """Append the fingerprints first seen in this forge (the caller holds the store lock)."""
        if self.new:
            append_jsonl(
                self.path,
                (
                    {"p": mark, "k": self.key} | ({"s": s} if s else {})
                    for mark, s in self.new.items()
                ),
                lease=lease,
            )
            self.new.clear()
