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
import re
from typing import Any

import yaml

from swarmq.storage.boundedjson import loads_bounded

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


_FLAT_KEY = re.compile(r"^([A-Za-z0-9_.-]+):(?:[ \t]+(.*?))?[ \t]*$")
_INT = re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9]*)?\.[0-9]+(?:[eE][-+][0-9]+)?$")
_BOOLS = {
    **dict.fromkeys(("true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"), True),
    **dict.fromkeys(("false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"), False),
}
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_YAML_SIGILS = ("[", "{", "&", "*", "!", "|", ">", "%", "@", "`")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _flat_scalar(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for a plain one-line scalar as YAML 1.1 reads it; ``(False, None)`` when
    only a real YAML parser can say (flow collections, anchors, block scalars)."""
    if text in _NULLS:
        return True, None
    if text in _BOOLS:
        return True, _BOOLS[text]
    if _INT.match(text):
        return True, int(text)
    if _FLOAT.match(text):
        return True, float(text)
    if text[0] in "\"'":
        if len(text) >= 2 and text[-1] == text[0]:
            if text[0] == "'":
                return True, text[1:-1].replace("''", "'")
            try:
                return True, loads_bounded(text)
            except ValueError:
                return False, None
        return False, None
    if text.startswith(_YAML_SIGILS) or ": " in text or " #" in text:
        return False, None
    return True, text


def parse_front_matter(lines: list[str]) -> dict[str, Any]:
    """Typed values of the front matter. Flat ``key: scalar`` blocks (what AgentOps writes) are
    read directly; anything else goes to a YAML parser; text that is not valid YAML at all
    falls back to AgentOps' line-wise ``key: value`` reading."""
    out: dict[str, Any] = {}
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _FLAT_KEY.match(line)
        if match is None:
            break
        ok, value = _flat_scalar(match.group(2) or "")
        if not ok:
            break
        out[match.group(1).lower()] = value
    else:
        return out
    raw = "\n".join(lines)
    try:
        loaded = yaml.load(raw, Loader=_Loader) if raw.strip() else {}
    except yaml.YAMLError:
        loaded = None
    if isinstance(loaded, dict):
        return {str(k).lower(): v for k, v in loaded.items()}
    out = {}
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
