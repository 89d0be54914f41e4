"""Content hashing and Markdown front matter, compatible with AgentOps' files.

The content hash is the dedup key across forge, pool promotion and the promoted index: the
*canonical body* (the last ``## What We Learned`` section, else the text after the front
matter), lower-cased with every whitespace run collapsed to one space, SHA-256 in hex. Pending
blocks and promoted artifacts nest that section, so a candidate and the learning it became
hash alike.

Front matter is read leniently (hand-written files are not always valid YAML) and updated line
by line, so keys swarmq does not know survive a rewrite byte for byte.
"""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

WHAT_WE_LEARNED = "## What We Learned"


def split_front_matter(text: str) -> tuple[list[str] | None, str]:
    """``(front-matter lines, body)``; ``None`` when the text does not open with ``---``."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return lines[1:index], "\n".join(lines[index + 1 :])
    return None, text


def canonical_content_body(markdown: str) -> str:
    """The semantic body of a candidate or artifact, as used for hashing and display."""
    _, body = split_front_matter(markdown)
    lines = body.split("\n")
    start = -1
    for index, line in enumerate(lines):
        if line.strip() == WHAT_WE_LEARNED:
            start = index + 1
    if start >= 0:
        end = len(lines)
        for index in range(start, len(lines)):
            if lines[index].strip().startswith("## "):
                end = index
                break
        section = "\n".join(lines[start:end]).strip()
        if section:
            return section
    return body.strip()


def content_hash(markdown: str) -> str:
    """Lower-case hex SHA-256 of the normalised canonical body (AgentOps ``ContentHash``)."""
    normalised = " ".join(canonical_content_body(markdown).split()).lower()
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def parse_front_matter(lines: list[str]) -> dict[str, Any]:
    """Typed values when the block is YAML, else AgentOps' line-wise ``key: value`` reading."""
    raw = "\n".join(lines)
    try:
        value = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError:
        value = None
    if isinstance(value, dict):
        return {str(k).lower(): v for k, v in value.items()}
    out: dict[str, Any] = {}
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or ":" not in stripped:
            continue
        key, _, rest = stripped.partition(":")
        out[key.strip().lower()] = rest.strip().strip("\"'")
    return out


def read_front_matter(text: str) -> dict[str, Any]:
    lines, _ = split_front_matter(text)
    return parse_front_matter(lines) if lines is not None else {}


def update_front_matter(text: str, updates: dict[str, object]) -> str:
    """Set ``key: value`` lines: replace a line starting ``key:``, else append to the block.

    A file without front matter gets one. Values are written unquoted, as Go's ``%v`` does.
    """
    lines, body = split_front_matter(text)
    if lines is None:
        block = [f"{key}: {_scalar(value)}" for key, value in updates.items()]
        return "---\n" + "\n".join(block) + "\n---\n\n" + text.lstrip("\n")
    new_lines = list(lines)
    for key, value in updates.items():
        rendered = f"{key}: {_scalar(value)}"
        for index, line in enumerate(new_lines):
            if line.startswith(f"{key}:"):
                new_lines[index] = rendered
                break
        else:
            new_lines.append(rendered)
    return "---\n" + "\n".join(new_lines) + "\n---\n" + body


def _scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
