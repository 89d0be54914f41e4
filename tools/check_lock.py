"""Check that requirements/lock.txt still agrees with pyproject.toml.

Every requirement of the package and of its `dev` extra must be pinned in the lock, at a version
its specifier admits. Offline on purpose: CI fails when someone edits one file and not the other,
not when PyPI publishes something new. Refresh the lock with the command in the README.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock.txt"


def lock_pins(text: str) -> dict[str, list[tuple[Version, Requirement]]]:
    """Pins by canonical name; a universal lock may pin one name twice under exclusive markers."""
    pins: dict[str, list[tuple[Version, Requirement]]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        req = Requirement(line)
        spec = list(req.specifier)
        if len(spec) != 1 or spec[0].operator != "==":
            sys.exit(f"{LOCK}:{number}: not an exact pin: {raw.strip()!r}")
        pins.setdefault(canonicalize_name(req.name), []).append((Version(spec[0].version), req))
    return pins


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    pins = lock_pins(LOCK.read_text())
    env = default_environment()
    problems: list[str] = []
    for text in wanted:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        found = [
            (version, pin)
            for version, pin in pins.get(canonicalize_name(req.name), [])
            if pin.marker is None or pin.marker.evaluate(env)
        ]
        if not found:
            problems.append(f"{req.name}: required by pyproject.toml ({text!r}) but not pinned")
            continue
        for version, _ in found:
            if not req.specifier.contains(version, prereleases=True):
                problems.append(f"{req.name}: lock pins {version}, pyproject.toml asks {text!r}")
    for problem in problems:
        print(f"requirements/lock.txt: {problem}", file=sys.stderr)
    if problems:
        print("refresh it: see 'Dependencies' in README.md", file=sys.stderr)
        return 1
    print(f"requirements/lock.txt agrees with pyproject.toml ({len(wanted)} requirements)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
