"""Loading swarm.yaml with errors written for people.

YAML syntax errors name ``file:line:column``; schema errors name the dotted path (with the
worker's id where there is one), the offending value and what was expected, at the line where
the value sits. Duplicate mapping keys, which PyYAML would silently collapse, are errors too;
size, depth and alias limits are enforced by :mod:`swarmq.roster._yamlsafe`.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from swarmq.errors import SwarmqError
from swarmq.profiles.config import WorkerProfile
from swarmq.roster._yamlsafe import MAX_ROSTER_BYTES, Loc, Marks, YamlLimit, parse_yaml
from swarmq.roster.schema import Roster, Severity, StrictModel

CONFIG_ENV = "SWARMQ_CONFIG"
DEFAULT_CONFIG = "swarm.yaml"


@dataclass(frozen=True)
class RosterProblem:
    """One thing wrong with a roster, located as precisely as the file allows."""

    severity: Severity
    path: str
    message: str
    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        label = f"{self.path}: " if self.path else ""
        return f"{where}: {self.severity}: {label}{self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
        }


class RosterError(SwarmqError):
    """A roster that cannot be used; carries every error found, not just the first."""

    def __init__(self, problems: list[RosterProblem]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        super().__init__("\n".join(str(p) for p in errors) or "invalid roster")


@dataclass
class RosterReport:
    """The outcome of loading: the roster when usable, and every problem found."""

    file: Path
    roster: Roster | None
    problems: list[RosterProblem] = field(default_factory=list)

    @property
    def errors(self) -> list[RosterProblem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[RosterProblem]:
        return [p for p in self.problems if p.severity == "warning"]


def find_config(path: Path | str | None = None) -> Path:
    """Explicit path, else ``$SWARMQ_CONFIG``, else ``./swarm.yaml``."""
    if path is not None:
        return Path(path)
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else Path(DEFAULT_CONFIG)


# ---------------------------------------------------------------------------------------------
# Paths and environment

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class _ExpandError(ValueError):
    pass


def expand(value: str, env: Mapping[str, str]) -> str:
    """``${VAR}``, ``${VAR:-default}`` and a leading ``~``."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env and env[name] != "":
            return env[name]
        if default is not None:
            return default
        raise _ExpandError(f"environment variable {name} is not set (use ${{{name}:-default}})")

    out = _VAR.sub(substitute, value)
    if out.startswith("~"):
        home = env.get("HOME") or os.path.expanduser("~")
        out = home + out[1:] if out == "~" or out.startswith("~/") else os.path.expanduser(out)
    return out


def default_hive_dir(env: Mapping[str, str]) -> Path:
    """opencode-swarm's data dir on Linux and other Unix systems."""
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_DATA_HOME")
    return Path(xdg if xdg else os.path.join(home, ".local", "share")) / "opencode-swarm"


_EXPANDED: tuple[Loc, ...] = (
    ("workspace",),
    ("redis_url",),
    ("broker_url",),
    ("paths", "profiles"),
    ("paths", "runtime"),
    ("paths", "shared"),
    ("paths", "hive"),
    ("llm", "base_url"),
)


def _expand_fields(data: dict[str, Any], env: Mapping[str, str]) -> list[tuple[Loc, str]]:
    failures: list[tuple[Loc, str]] = []
    targets: list[Loc] = list(_EXPANDED)
    workers = data.get("workers")
    if isinstance(workers, list):
        targets += [("workers", i, "agent", "cwd") for i in range(len(workers))]
    for loc in targets:
        parent: Any = data
        for part in loc[:-1]:
            if isinstance(parent, dict) and isinstance(part, str):
                parent = parent.get(part)
            elif isinstance(parent, list) and isinstance(part, int) and part < len(parent):
                parent = parent[part]
            else:
                parent = None
            if parent is None:
                break
        last = loc[-1]
        if isinstance(parent, dict) and isinstance(parent.get(last), str):
            try:
                parent[last] = expand(parent[last], env)
            except _ExpandError as exc:
                failures.append((loc, str(exc)))
    return failures


def resolve_paths(roster: Roster, base: Path, env: Mapping[str, str]) -> None:
    """Make every root absolute and fill the documented defaults."""

    def absolute(path: Path) -> Path:
        return Path(os.path.normpath(path if path.is_absolute() else base / path))

    home = Path(env.get("HOME") or os.path.expanduser("~"))
    roster.workspace = absolute(roster.workspace) if roster.workspace else base
    paths = roster.paths
    paths.profiles = absolute(paths.profiles) if paths.profiles else home / ".hermes" / "profiles"
    paths.runtime = absolute(paths.runtime) if paths.runtime else roster.workspace / ".runtime"
    paths.shared = (
        absolute(paths.shared) if paths.shared else home / ".openclaw" / "workspace" / "memory"
    )
    paths.hive = absolute(paths.hive) if paths.hive else default_hive_dir(env)
    for worker in roster.workers:
        if worker.agent is not None and worker.agent.cwd is not None:
            worker.agent.cwd = absolute(worker.agent.cwd)


# ---------------------------------------------------------------------------------------------
# Error formatting


def dotted(loc: Loc, data: Any = None) -> str:
    """``('workers', 2, 'queues', 0)`` → ``workers[2](swarm3).queues[0]``."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            if isinstance(node, list) and part < len(node):
                node = node[part]
                if isinstance(node, dict) and isinstance(node.get("id"), str):
                    out += f"({node['id']})"
            else:
                node = None
        else:
            label = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else repr(part)
            if label != part:
                out += f"[{label}]"
            else:
                out += f".{part}" if out else part
            node = node.get(part) if isinstance(node, dict) else None
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _model_fields_at(loc: Loc) -> list[str]:
    """Field names accepted at ``loc``, for "did you mean" suggestions."""
    model: Any = Roster
    for part in loc:
        if isinstance(part, int) or model is None:
            continue
        info = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if info is None:
            return []
        annotation = info.annotation
        model = _model_in(annotation)
    return list(model.model_fields) if model is not None and hasattr(model, "model_fields") else []


def _model_in(annotation: Any) -> Any:
    """The roster's own model (or the worker entry) in ``annotation``: the ones hints cover."""
    if isinstance(annotation, type) and issubclass(annotation, (StrictModel, WorkerProfile)):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _problems_from_validation(
    exc: ValidationError, data: Any, marks: Marks, file: str
) -> list[RosterProblem]:
    problems: list[RosterProblem] = []
    for err in exc.errors():
        loc: Loc = tuple(
            p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))
        )
        kind = err["type"]
        if kind == "extra_forbidden":
            key = str(loc[-1])
            allowed = _model_fields_at(loc[:-1])
            guess = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            known = f"; allowed here: {', '.join(allowed)}" if allowed and not guess else ""
            line, col = marks.find(loc, key=True)
            problems.append(
                RosterProblem(
                    "error", dotted(loc, data), f"unknown key {key!r}{hint}{known}", file, line, col
                )
            )
            continue
        line, col = marks.find(loc)
        message = str(err["msg"]).removeprefix("Value error, ")
        if kind == "missing":
            message = "required key is missing"
        elif "input" in err and not isinstance(err["input"], dict | list):
            message = f"got {_short(err['input'])}: {message}"
        problems.append(RosterProblem("error", dotted(loc, data), message, file, line, col))
    return problems


# ---------------------------------------------------------------------------------------------
# Entry points


def load_report(
    path: Path | str | None = None, *, env: Mapping[str, str] | None = None
) -> RosterReport:
    """Load and check a roster; never raises for bad content, reports it instead."""
    from swarmq.roster.checks import check_roster  # cross-field rules, kept apart

    env = os.environ if env is None else env
    file = find_config(path)
    shown = str(file)
    try:
        size = file.stat().st_size
        if size > MAX_ROSTER_BYTES:
            return RosterReport(
                file,
                None,
                [
                    RosterProblem(
                        "error",
                        "",
                        f"{size:,} bytes is larger than the {MAX_ROSTER_BYTES:,}-byte limit "
                        "of a roster; refusing to parse it",
                        shown,
                    )
                ],
            )
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RosterReport(file, None, [RosterProblem("error", "", "file not found", shown)])
    except (OSError, UnicodeDecodeError) as exc:
        return RosterReport(file, None, [RosterProblem("error", "", f"cannot read: {exc}", shown)])
    try:
        data, marks = parse_yaml(text, shown)
    except YamlLimit as exc:
        mark = exc.problem_mark
        return RosterReport(
            file,
            None,
            [
                RosterProblem(
                    "error",
                    "",
                    f"YAML limit: {exc.problem}",
                    shown,
                    mark.line + 1 if mark else None,
                    mark.column + 1 if mark else None,
                )
            ],
        )
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = mark.column + 1 if mark else None
        what = " ".join(str(x) for x in (exc.context, exc.problem) if x)
        ctx = exc.context_mark
        if ctx is not None and mark is not None and ctx.line != mark.line:
            what += f" (the construct began at line {ctx.line + 1}, column {ctx.column + 1})"
        return RosterReport(
            file, None, [RosterProblem("error", "", f"YAML syntax: {what}", shown, line, col)]
        )
    except yaml.YAMLError as exc:
        return RosterReport(file, None, [RosterProblem("error", "", f"YAML: {exc}", shown)])

    problems = [
        RosterProblem(
            "error", dotted(loc), f"duplicate key (first defined at line {first})", shown, line, col
        )
        for loc, line, col, first in marks.duplicates
    ]
    if not isinstance(data, dict):
        kind = "empty" if data is None else type(data).__name__
        problems.append(
            RosterProblem(
                "error", "", f"expected a mapping at the top level, got {kind}", shown, 1, 1
            )
        )
        return RosterReport(file, None, problems)

    for loc, message in _expand_fields(data, env):
        line, col = marks.find(loc)
        problems.append(RosterProblem("error", dotted(loc, data), message, shown, line, col))
    if env.get("REDIS_URL"):
        data["redis_url"] = env["REDIS_URL"]
    try:
        roster = Roster.model_validate(data)
    except ValidationError as exc:
        problems += _problems_from_validation(exc, data, marks, shown)
        return RosterReport(file, None, problems)
    if any(p.severity == "error" for p in problems):
        return RosterReport(file, None, problems)
    resolve_paths(roster, file.resolve().parent, env)
    for problem in check_roster(roster):
        line, col = marks.find(problem.loc, key=problem.at_key)
        problems.append(
            RosterProblem(
                problem.severity, dotted(problem.loc, data), problem.message, shown, line, col
            )
        )
    usable = not any(p.severity == "error" for p in problems)
    return RosterReport(file, roster if usable else None, problems)


def load_roster(path: Path | str | None = None, *, env: Mapping[str, str] | None = None) -> Roster:
    """Load a roster or raise :class:`RosterError` listing every error."""
    report = load_report(path, env=env)
    if report.roster is None:
        raise RosterError(report.problems)
    return report.roster
