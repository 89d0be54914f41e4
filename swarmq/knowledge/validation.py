"""The validation gate: opencode-swarm's three layers plus directive fields and actionability.

``ValidationMode.OPENCODE`` reproduces the verdicts and reasons of opencode-swarm as it is today
(its 7.x line, read from ``src/hooks/knowledge-validator.ts``): destructive commands, security
degrading and injection patterns are refused; the word ``format``, backtick spans, ``kill -9`` /
``pkill`` / ``killall`` and ``$(...)`` are warnings (stored, flagged for review); a possible
contradiction is a warning and needs the opposing words to share a neighbour. As upstream, the
first finding wins, so a warning pattern hides a later security or injection pattern.
``ValidationMode.STRICT`` refuses more destructive commands, checks every refusal before any
warning, and judges contradictions on whole words without stop words. The older (6.x) rules that
refused any backtick span are not kept: they refused lessons opencode-swarm stores today.
"""

from __future__ import annotations

import math
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from swarmq.knowledge.config import ValidationMode
from swarmq.knowledge.contradiction import (
    ContradictionIndex,
    has_contradiction,
    normalize_semantic,
)
from swarmq.knowledge.model import Category, DirectivePriority
from swarmq.knowledge.tags import JS_SPACE

REASON_TOO_SHORT = "lesson too short (min 15 chars)"
REASON_TOO_LONG = "lesson too long (max 280 chars)"
REASON_SCOPE = "invalid scope: must be 'global' or 'stack:<name>'"
REASON_CONFIDENCE = "confidence out of range [0.0, 1.0]"
REASON_DANGEROUS = "dangerous command pattern detected"
REASON_SECURITY = "security-degrading instruction detected"
REASON_INJECTION = "injection pattern detected"
REASON_CONTRADICTION = "possible contradiction with an existing lesson with shared tags"
REASON_REVIEW = "potentially dangerous command pattern queued for review"
REASON_VAGUE = "lesson may be too vague (no tech reference or action verb)"

INVISIBLE = "\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
_JS_SPACES = re.compile(f"{JS_SPACE}+")

_DANGEROUS_ERRORS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.ASCII | flags)
    for p, flags in (
        (r"\brm\s+-rf\b", 0),
        (r"\bsudo\s+rm\b", 0),
        (r"\bmkfs\b", 0),
        (r"\bdd\s+if=", 0),
        (r":\(\)\s*\{", 0),
        (r"\bchmod\s+-R\s+777\b", re.IGNORECASE),
        (r"\bdeltree\b", 0),
        (r"\brmdir\s+/s\b", 0),
    )
)
"""opencode-swarm's ``DANGEROUS_COMMAND_ERROR_PATTERNS``: refused."""
_DANGEROUS_WARNINGS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.ASCII)
    for p in (
        r"\bformat\b",
        r"\bkill\s+-9\b",
        r"\bpkill\b",
        r"\bkillall\b",
        r"`[^`]*`",
        r"\$\([^)]*\)",
    )
)
"""``DANGEROUS_COMMAND_WARNING_PATTERNS``: stored, flagged for review (since 7.x)."""
_DANGEROUS_STRICT: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.ASCII | re.IGNORECASE)
    for p in (
        r"\brm\s+(?:-[a-z]*r[a-z]*f[a-z]*|-[a-z]*f[a-z]*r[a-z]*|-r\s+-f|-f\s+-r|--recursive\s+--force)\b",
        r"\bsudo\s+rm\b",
        r"\bformat\s+(?:[a-z]:|/dev/)",
        r"\bmkfs(?:\.[a-z0-9]+)?\b",
        r"\bdd\s+if=",
        r":\(\)\s*\{",
        r"\bchmod\s+(?:-R\s+)?0?777\b",
        r"\bdeltree\b",
        r"\brmdir\s+/s\b",
        r"\bkill\s+-9\b",
        r"\bpkill\b",
        r"\bkillall\b",
        r"\b(?:curl|wget)\b[^|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b",
        r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z])",
        r"\bshred\b",
        r"\bwipefs\b",
        r"\$\([^)]*\b(?:rm|curl|wget|sudo|dd|mkfs|chmod|kill)\b[^)]*\)",
    )
)
_WARNINGS_STRICT: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.ASCII) for p in (r"\bformat\b", r"`[^`]*`", r"\$\([^)]*\)")
)
_SECURITY: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"disable\s+.{0,50}firewall",
        r"turn\s+off\s+.{0,50}security",
        r"skip\s+.{0,50}auth",
        r"bypass\s+.{0,50}auth",
        r"ignore\s+.{0,50}certificate",
        r"disable\s+.{0,50}tls",
        r"disable\s+.{0,50}ssl",
        r"no\s+.{0,50}validation",
        r"disable\s+.{0,50}2fa",
        r"remove\s+.{0,50}password",
    )
)
_INJECTION: tuple[re.Pattern[str], ...] = (
    re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f\x0d]"),
    re.compile(f"[{INVISIBLE}]"),
    re.compile(rf"\Asystem{JS_SPACE}*:", re.IGNORECASE),
    re.compile(r"<script", re.IGNORECASE),
    re.compile(r"javascript:", re.IGNORECASE),
    re.compile(r"\beval\(", re.IGNORECASE | re.ASCII),
    re.compile(r"\b__proto__\b", re.ASCII),
    re.compile(r"\bconstructor\[", re.ASCII),
    re.compile(r"\.prototype\["),
)
TECH_WORDS = frozenset(
    [
        "git",
        "docker",
        "typescript",
        "bun",
        "vitest",
        "node",
        "python",
        "react",
        "sql",
        "api",
        "hook",
        "test",
        "schema",
        "config",
        "file",
        "function",
        "class",
        "module",
        "import",
        "export",
    ]
)
ACTION_WORDS = frozenset(
    [
        "use",
        "avoid",
        "prefer",
        "run",
        "check",
        "always",
        "never",
        "ensure",
        "call",
        "write",
        "add",
        "remove",
        "update",
        "set",
        "enable",
        "disable",
    ]
)
_SCOPE = re.compile(r"^stack:[a-zA-Z0-9_-]{1,64}\Z")
_CATEGORIES = frozenset(c.value for c in Category)


@dataclass(frozen=True, slots=True)
class ValidationResult:
    """``validateLesson``'s verdict: layer and reason of the first failure (or warning)."""

    valid: bool
    layer: Literal[1, 2, 3] | None = None
    reason: str | None = None
    severity: Literal["error", "warning"] | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


OK = ValidationResult(True)


def js_length(text: str) -> int:
    """``String#length``: UTF-16 code units (an emoji counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # a lone surrogate counts 1


def _safety_text(text: str) -> str:
    return _JS_SPACES.sub(" ", _INVISIBLE.sub(" ", unicodedata.normalize("NFKC", text))).lower()


def check_structure(
    lesson: object, category: object, scope: object, confidence: object
) -> ValidationResult:
    """Layer 1."""
    if not isinstance(lesson, str) or not lesson or js_length(lesson) < 15:
        return ValidationResult(False, 1, REASON_TOO_SHORT, "error")
    if js_length(lesson) > 280:
        return ValidationResult(False, 1, REASON_TOO_LONG, "error")
    if category not in _CATEGORIES:
        shown = "undefined" if category is None else category
        return ValidationResult(False, 1, f"invalid category: {shown}", "error")
    if not (scope == "global" or (isinstance(scope, str) and _SCOPE.match(scope))):
        return ValidationResult(False, 1, REASON_SCOPE, "error")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or math.isnan(confidence)
        or not 0.0 <= confidence <= 1.0
    ):
        return ValidationResult(False, 1, REASON_CONFIDENCE, "error")
    return OK


def check_safety(lesson: str, mode: ValidationMode = ValidationMode.OPENCODE) -> ValidationResult:
    """Layer 2: dangerous commands, security-degrading instructions, prompt injection; a
    review-worthy command pattern is a warning (valid)."""
    text = _safety_text(lesson)
    review = ValidationResult(True, 2, REASON_REVIEW, "warning")
    if mode is ValidationMode.OPENCODE:
        if any(p.search(text) for p in _DANGEROUS_ERRORS):
            return ValidationResult(False, 2, REASON_DANGEROUS, "error")
        if any(p.search(text) for p in _DANGEROUS_WARNINGS):
            return review
    elif any(p.search(text) for p in _DANGEROUS_STRICT):
        return ValidationResult(False, 2, REASON_DANGEROUS, "error")
    if any(p.search(text) for p in _SECURITY):
        return ValidationResult(False, 2, REASON_SECURITY, "error")
    if any(p.search(lesson) for p in _INJECTION):
        return ValidationResult(False, 2, REASON_INJECTION, "error")
    if mode is ValidationMode.STRICT and any(p.search(text) for p in _WARNINGS_STRICT):
        return review
    return OK


def is_vague(lesson: str) -> bool:
    words = normalize_semantic(lesson).split(" ")
    return not any(w in TECH_WORDS or w in ACTION_WORDS for w in words)


def validate_lesson(
    lesson: object,
    *,
    category: object,
    scope: object = "global",
    confidence: object = 0.5,
    existing: ContradictionIndex | Iterable[str] = (),
    mode: ValidationMode = ValidationMode.OPENCODE,
) -> ValidationResult:
    """``validateLesson``: layers 1, 2 and 3 in order; the first failure wins."""
    result = check_structure(lesson, category, scope, confidence)
    if not result.valid:
        return result
    assert isinstance(lesson, str)
    result = check_safety(lesson, mode)
    if not result.valid:
        return result
    if result.severity is not None:  # a warning: upstream returns the first finding
        return result
    return check_semantics(lesson, existing, mode)


def check_semantics(
    lesson: str,
    existing: ContradictionIndex | Iterable[str] = (),
    mode: ValidationMode = ValidationMode.OPENCODE,
) -> ValidationResult:
    """Layer 3: a possible contradiction, then vagueness; both are warnings."""
    if isinstance(existing, ContradictionIndex):
        contradiction = existing.contradicted(lesson)
    else:
        contradiction = has_contradiction(lesson, existing, mode)
    if contradiction:
        return ValidationResult(True, 3, REASON_CONTRADICTION, "warning")
    if is_vague(lesson):
        return ValidationResult(True, 3, REASON_VAGUE, "warning")
    return OK


# -- v2 directive fields and actionability ------------------------------------------------------

ACTIONABLE_STRING_MAX = 200
ACTIONABLE_LIST_MAX = 20
SKILL_PATH_PREFIXES = (
    ".opencode/skills/generated/",
    ".swarm/skills/proposals/",
    ".swarm/skills/candidates/",
)
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}\Z")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
_SOURCE_REF_FORBIDDEN = re.compile(r"(\.\./|\.\.\\|\x00|[\x00-\x1f\x7f])")


def _clean_short(value: object) -> bool:
    return (
        isinstance(value, str)
        and 0 < js_length(value) <= ACTIONABLE_STRING_MAX
        and not _CONTROL.search(value)
    )


def valid_skill_path(value: object) -> bool:
    if not isinstance(value, str) or not value or js_length(value) > 256 or "\x00" in value:
        return False
    if posixpath.isabs(value) or ".." in value:
        return False
    return value.replace("\\", "/").startswith(SKILL_PATH_PREFIXES)


def validate_directive_fields(fields: Mapping[str, Any]) -> list[str]:
    """``validateActionableFields``: every problem with the v2 fields present (empty = valid)."""
    errors: list[str] = []

    def check_list(name: str, item_ok: Any, what: str) -> None:
        if name not in fields:
            return
        value = fields[name]
        if not isinstance(value, list):
            errors.append(f"{name} must be an array")
            return
        if len(value) > ACTIONABLE_LIST_MAX:
            errors.append(f"{name} exceeds {ACTIONABLE_LIST_MAX} items")
        if not all(item_ok(item) for item in value):
            errors.append(f"{name} contains invalid {what}")

    for name in ("triggers", "required_actions", "forbidden_actions", "verification_checks"):
        check_list(name, _clean_short, "string")
    for name in ("applies_to_agents", "applies_to_tools"):
        check_list(name, lambda v: isinstance(v, str) and _NAME.match(v) is not None, "name")
    check_list(
        "source_refs",
        lambda v: _clean_short(v) and not _SOURCE_REF_FORBIDDEN.search(v),
        "value",
    )
    if "source_knowledge_ids" in fields:
        ids = fields["source_knowledge_ids"]
        if not isinstance(ids, list):
            errors.append("source_knowledge_ids must be an array")
        elif not all(isinstance(i, str) and 0 < len(i) <= 64 for i in ids):
            errors.append("source_knowledge_ids contains invalid value")
    if "directive_priority" in fields and fields["directive_priority"] not in {
        p.value for p in DirectivePriority
    }:
        errors.append("directive_priority must be low|medium|high|critical")
    if "generated_skill_slug" in fields and not (
        isinstance(fields["generated_skill_slug"], str)
        and _SLUG.match(fields["generated_skill_slug"])
    ):
        errors.append("generated_skill_slug must be a kebab-case slug")
    if "generated_skill_path" in fields and not valid_skill_path(fields["generated_skill_path"]):
        errors.append("generated_skill_path must be repo-local under allowed prefix")
    if "enforcement_mode" in fields and fields["enforcement_mode"] not in ("warn", "enforce"):
        errors.append("enforcement_mode must be warn|enforce")
    return errors


ActionabilityReason = Literal["missing_predicate", "missing_scope", "missing_predicate_and_scope"]


def check_actionability(entry: Mapping[str, Any]) -> ActionabilityReason | None:
    """Layer 5: ``None`` when the entry has a predicate and a scope, else why not."""

    def non_empty(key: str) -> bool:
        value = entry.get(key)
        return isinstance(value, list) and len(value) > 0

    predicate = (
        non_empty("forbidden_actions")
        or non_empty("required_actions")
        or non_empty("verification_checks")
        or (
            isinstance(entry.get("verification_predicate"), str)
            and bool(entry["verification_predicate"].strip())
        )
    )
    scope = non_empty("applies_to_tools") or non_empty("applies_to_agents")
    if predicate and scope:
        return None
    if not predicate and not scope:
        return "missing_predicate_and_scope"
    return "missing_predicate" if not predicate else "missing_scope"


# -- hostile lessons: knowledge is data, never instructions --------------------------------------

REASON_HOSTILE = "hostile lesson quarantined for review: {what}"
_HOSTILE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(pattern, re.IGNORECASE))
    for what, pattern in (
        (
            "instruction override",
            r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|every\s+|the\s+|"
            r"your\s+|my\s+|of\s+)*(?:previous|prior|above|earlier|preceding|system|original|"
            r"other|existing|current)?\s*(?:instructions?|directives?|prompts?|rules|guidelines|"
            r"guardrails|system\s+prompt)\b",
        ),
        (
            "instruction override",
            r"\b(?:you\s+are\s+now\s+(?:in\s+)?(?:dan|developer\s+mode|jailbroken|unrestricted)|"
            r"new\s+system\s+prompt|do\s+not\s+(?:tell|inform|alert)\s+the\s+user)\b",
        ),
        (
            "piped download",
            r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]{0,300}\|\s*"
            r"(?:sudo\s+)?(?:(?:ba|z|da|k|fi|c)?sh|python[0-9.]*|perl|ruby|node|iex|"
            r"invoke-expression|pwsh|powershell)\b",
        ),
        (
            "piped download",
            r"(?:\biex\b|\binvoke-expression\b)\s*\(?\s*\(?\s*(?:iwr|irm|invoke-webrequest|"
            r"invoke-restmethod|new-object\s+(?:system\.)?net\.webclient)",
        ),
        (
            "piped download",
            r"\b(?:ba|z)?sh\s+(?:-c\s+[\"']?\$\(|<\(\s*)(?:curl|wget)\b",
        ),
        (
            "credential exfiltration",
            r"\b(?:send|post|upload|exfiltrate|forward|transmit|email|e-mail|leak|share|copy|paste|"
            r"submit|report|sync|push)\w*\b[^\n]{0,80}?(?:api[\s_-]*keys?|tokens?|secrets?|"
            r"passwords?|credentials?|\.env\b|ssh\s+keys?|id_rsa|private\s+keys?|aws_\w+|"
            r"cookies?)\b[^\n]{0,80}?(?:\bto\b|https?://|\bat\b|webhook|@)",
        ),
        (
            "credential exfiltration",
            r"\b(?:curl|wget|nc|ncat|scp|rsync|http|httpie)\b[^\n]{0,200}?(?:@?\.env\b|id_rsa|"
            r"\.aws/credentials|\$\{?[A-Z_]*(?:KEY|TOKEN|SECRET|PASSWORD)\b)",
        ),
        (
            "unknown host",
            r"\b(?:https?|ftp|wss?)://(?!(?:127\.|10\.|192\.168\.|0\.0\.0\.0|localhost))"
            r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}",
        ),
        (
            "unknown host",
            r"\b(?:pastebin\.com|ngrok(?:-free)?\.(?:io|app)|webhook\.site|requestbin|"
            r"pipedream\.net|transfer\.sh|burpcollaborator\.net|interact\.sh|oast\.\w+|"
            r"trycloudflare\.com|hookbin\.com|beeceptor\.com)\b",
        ),
    )
)
"""Lessons that would make the agent act against its user, whatever validation mode runs: an
order to drop its instructions, a script piped from the network into a shell, a credential sent
somewhere, a raw public IP address or a known capture endpoint (paste sites, tunnels, request
bins) to contact. None is a lesson a project learns; each is quarantined, not lost, so an
operator can restore a false alarm (``swarmq knowledge restore``)."""


def check_hostile(lesson: str) -> ValidationResult:
    """OK, or a layer-2 error naming why ``lesson`` is quarantined for review. Separate from
    :func:`validate_lesson`, which keeps opencode-swarm's verdicts."""
    text = _safety_text(lesson)
    for what, pattern in _HOSTILE:
        if pattern.search(text):
            return ValidationResult(False, 2, REASON_HOSTILE.format(what=what), "error")
    return OK
