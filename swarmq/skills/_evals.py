"""Validation fixtures for generated skills: required and forbidden phrases, strict improvement.

Fixtures live in ``.swarm/skills/evals/<slug>/*.json``; a file holds one case, an array of
cases, or ``{"cases": [...]}``, each with ``required_phrases`` and/or ``forbidden_phrases``
(case-insensitive substring tests). With no fixtures the gate fails open and says
``unevaluated``; a broken fixture set fails closed (``invalid_eval_set``) so a typo can never
wave a change through. With an incumbent skill the candidate must be at least as good on every
case and strictly better on one; without one it must satisfy every case.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.skills.layout import SkillLayout, UnsafeSkillPath

MAX_EVAL_FILES = 50
MAX_EVAL_FILE_BYTES = 64 * 1024
MAX_EVAL_CASES = 100
MAX_PHRASES_PER_CASE = 40
MAX_PHRASE_LENGTH = 160


@dataclass(frozen=True, slots=True)
class EvalCase:
    id: str
    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    task: str | None = None

    def score(self, content: str) -> tuple[float, list[str]]:
        """(required fraction minus 1 if any forbidden phrase appears, floored at 0; failures)."""
        text = content.lower()
        failures = [f"missing required phrase: {p}" for p in self.required if p.lower() not in text]
        hits = len(self.required) - len(failures)
        banned = [f"contains forbidden phrase: {p}" for p in self.forbidden if p.lower() in text]
        required_score = 1.0 if not self.required else hits / len(self.required)
        return max(0.0, required_score - (1.0 if banned else 0.0)), failures + banned


@dataclass(frozen=True, slots=True)
class CaseResult:
    id: str
    candidate_score: float
    candidate_failures: list[str]
    incumbent_score: float
    incumbent_failures: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "candidate_score": self.candidate_score,
            "candidate_failures": self.candidate_failures,
            "incumbent_score": self.incumbent_score,
            "incumbent_failures": self.incumbent_failures,
        }


@dataclass(frozen=True, slots=True)
class EvalSet:
    status: str
    """``missing``, ``loaded`` or ``invalid``."""
    files: tuple[str, ...] = ()
    cases: tuple[EvalCase, ...] = ()
    reason: str | None = None

    @property
    def fingerprint(self) -> str | None:
        """Identifies the judging fixtures: a rejection only holds for the set that made it."""
        if self.status != "loaded":
            return None
        text = json.dumps([[c.id, c.required, c.forbidden] for c in self.cases])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Evaluation:
    status: str
    """``unevaluated``, ``passed``, ``rejected`` or ``invalid_eval_set``."""
    passed: bool
    reason: str
    files: list[str] = field(default_factory=list)
    candidate_score: float = 0.0
    incumbent_score: float = 0.0
    cases: list[dict[str, Any]] = field(default_factory=list)
    fingerprint: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "passed": self.passed,
            "reason": self.reason,
            "files": self.files,
            "candidate_score": round(self.candidate_score, 4),
            "incumbent_score": round(self.incumbent_score, 4),
            "cases": self.cases,
        }


def _phrase(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text[:MAX_PHRASE_LENGTH] or None


def _phrases(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    out: dict[str, str] = {}
    for raw in value[:MAX_PHRASES_PER_CASE]:
        phrase = _phrase(raw)
        if phrase and phrase.lower() not in out:
            out[phrase.lower()] = phrase
    return tuple(out.values())


def _cases(parsed: Any, label: str) -> list[EvalCase]:
    if isinstance(parsed, list):
        raw = parsed
    elif isinstance(parsed, dict) and isinstance(parsed.get("cases"), list):
        raw = parsed["cases"]
    else:
        raw = [parsed]
    out = []
    for index, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            continue
        case = EvalCase(
            _phrase(item.get("id")) or f"{label}#{index}",
            _phrases(item.get("required_phrases")),
            _phrases(item.get("forbidden_phrases")),
            _phrase(item.get("task")),
        )
        if case.required or case.forbidden:
            out.append(case)
    return out


def load_eval_set(layout: SkillLayout, slug: str) -> EvalSet:
    try:
        root = layout.evals_path(slug)
    except UnsafeSkillPath as exc:
        return EvalSet("invalid", reason=str(exc))
    if not root.is_dir():
        return EvalSet("missing")
    names = sorted(n for n in os.listdir(root) if n.endswith(".json"))[:MAX_EVAL_FILES]
    if not names:
        return EvalSet("missing")
    files: list[str] = []
    cases: list[EvalCase] = []
    for name in names:
        path = root / name
        real = Path(os.path.realpath(path))
        if root not in real.parents:
            return EvalSet(
                "invalid", tuple(files), reason=f"eval fixture {name} resolves outside {root}"
            )
        if not real.is_file():
            continue
        if real.stat().st_size > MAX_EVAL_FILE_BYTES:
            return EvalSet(
                "invalid",
                tuple(files),
                reason=f"eval fixture {name} exceeds {MAX_EVAL_FILE_BYTES} bytes",
            )
        try:
            parsed = json.loads(real.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return EvalSet(
                "invalid", tuple(files), reason=f"eval fixture {path}: invalid JSON ({exc})"
            )
        files.append(str(path.relative_to(layout.workspace)))
        cases.extend(_cases(parsed, name))
        if len(cases) >= MAX_EVAL_CASES:
            break
    if not cases:
        return EvalSet(
            "invalid", tuple(files), reason=f"eval fixtures under {root} contain no valid case"
        )
    return EvalSet("loaded", tuple(files), tuple(cases[:MAX_EVAL_CASES]))


def evaluate(eval_set: EvalSet, candidate: str, incumbent: str | None = None) -> Evaluation:
    """Does ``candidate`` pass the fixtures (and strictly improve on ``incumbent``)?"""
    if eval_set.status == "missing":
        return Evaluation("unevaluated", True, "no eval fixtures for this skill")
    if eval_set.status == "invalid":
        return Evaluation(
            "invalid_eval_set", False, eval_set.reason or "invalid eval set", list(eval_set.files)
        )
    rows = [
        CaseResult(case.id, *case.score(candidate), *case.score(incumbent or ""))
        for case in eval_set.cases
    ]
    c_mean = sum(r.candidate_score for r in rows) / len(rows)
    i_mean = sum(r.incumbent_score for r in rows) / len(rows) if incumbent else 0.0
    if incumbent:
        passed = all(
            r.candidate_score >= r.incumbent_score
            and len(r.candidate_failures) <= len(r.incumbent_failures)
            for r in rows
        ) and any(
            r.candidate_score > r.incumbent_score
            or len(r.candidate_failures) < len(r.incumbent_failures)
            for r in rows
        )
        reason = (
            "candidate strictly improves the incumbent"
            if passed
            else "candidate does not strictly improve the incumbent on the eval cases"
        )
    else:
        passed = all(r.candidate_score >= 1 and not r.candidate_failures for r in rows)
        reason = "candidate satisfies every eval case" if passed else "candidate fails eval cases"
    return Evaluation(
        "passed" if passed else "rejected",
        passed,
        reason,
        list(eval_set.files),
        c_mean,
        i_mean,
        [r.as_dict() for r in rows],
        eval_set.fingerprint,
    )
