"""Forge's candidates by family, on every labelled forge set, now and at each set's first reading.

    python tools/forge_families.py dump OUT.json [--tree DIR] LABELS...
    python tools/forge_families.py report NOW.json [FIRST.json ...]

``dump`` forges every session of the labels files (one scratch workspace per file, sessions in
file-name order, default settings, as ``swarmq eval forge`` does) with the swarmq package found
on ``--tree`` (a ``git archive`` of an older commit, run in a subprocess with that tree on
PYTHONPATH) or the installed one, and writes each candidate with its set and session file.
``report`` scores them with today's labels of the sets dumped (no other labels file is read)
and prints, per family of candidate (the mined-call shape of a tool-error lesson, or the speaker
and type of a prose one), its precision; the
figures of the gates compared in docs/QUALITY.md; and a leave-one-user-out logistic model over
general features (numpy), fitted on today's candidates, applied to held-out users' candidates and
to each first reading's candidates with that set's users left out of the fit.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Record = dict[str, Any]
LABELS_DIR = Path(__file__).resolve().parent.parent / "eval" / "forge"


def dump(out: Path, labels: list[Path]) -> None:
    import yaml

    from swarmq.flywheel.store import AgentsLayout
    from swarmq.forge.config import ForgeConfig
    from swarmq.forge.extract import forge_transcript
    from swarmq.storage.locking import LocalLocks

    records: list[Record] = []
    for path in labels:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            layout = AgentsLayout(root / "project" / ".agents")
            locks = LocalLocks(root / "locks")
            for name in sorted(item["file"] for item in data["sessions"]):
                session = path.parent / "sessions" / name
                result = forge_transcript(session, layout, locks, ForgeConfig(), force=True)
                for c in result.found:
                    cand = c.as_dict() | {"content": c.content}
                    records.append({"set": path.name, "file": name, "cand": cand})
    out.write_text(json.dumps(records), encoding="utf-8")


def family(c: Record) -> str:
    """A candidate's family: how a mined failure was closed, or who said a prose one."""
    text, kind = c["content"], c["type"]
    if c.get("extractor") == "sequence":
        shapes = (
            ("The agent's model call failed", "seq:api"),
            ("run again unchanged", "seq:rerun"),
            ("escalated permissions", "seq:sandbox"),
            ("got past this error", "seq:installed"),
            ("the same call worked", "seq:retried"),
            ("worked instead", "seq:instead"),
            ("no retry worked", "seq:noretry"),
        )
        return next((name for cue, name in shapes if cue in text), "seq:fact")
    role = c.get("role", "?")
    if role == "user" and c["confidence"] == 0.7 and c.get("class") in ("decision", "workflow"):
        return "user:standing" if kind == "decision" else "user:diagnostic"
    return f"{role}:{kind}"


class Sets:
    """Today's labels of the sets that were dumped (only those: a set still blind is never read),
    to score any candidates against."""

    def __init__(self, names: set[str]) -> None:
        from swarmq.eval.forge import load_labels

        self.names = sorted(names)
        self.sessions = {
            s: {ls.file.name: ls for ls in load_labels(LABELS_DIR / s)} for s in self.names
        }

    def user(self, r: Record) -> str:
        return str(self.sessions[r["set"]][r["file"]].repo).split("/")[0].lower()

    def positive(self, r: Record) -> bool:
        lessons = self.sessions[r["set"]][r["file"]].lessons
        return any(lesson.matches(r["cand"]["content"]) for lesson in lessons)

    def totals(self, recs: list[Record], keep: list[bool], sets: list[str]) -> dict[str, float]:
        from swarmq.eval.forge import _matching

        groups: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, r in enumerate(recs):
            if keep[i]:
                groups[(r["set"], r["file"])].append(i)
        tp = fp = lessons = te = te_total = 0
        for s in sets:
            for name, session in self.sessions[s].items():
                lessons += len(session.lessons)
                te_total += sum(lesson.kind == "tool-error" for lesson in session.lessons)
                options = [
                    [j for j, lesson in enumerate(session.lessons) if lesson.matches(c)]
                    for c in (recs[i]["cand"]["content"] for i in groups.get((s, name), []))
                ]
                found = set(_matching(options))
                tp += len(found)
                fp += sum(1 for o in options if not o)
                te += sum(1 for j in found if session.lessons[j].kind == "tool-error")
        return {"tp": tp, "fp": fp, "lessons": lessons, "te": te, "te_total": te_total}


def shown(t: dict[str, float]) -> str:
    tp, fp, lessons, te, te_total = (int(t[k]) for k in ("tp", "fp", "lessons", "te", "te_total"))
    return (
        f"P {tp}/{tp + fp} = {tp / max(1, tp + fp):.3f}, R {tp}/{lessons} = {tp / max(1, lessons):.3f}"
        f", tool-error {te}/{te_total} = {te / max(1, te_total):.3f}"
    )


_REPORT = re.compile(
    r"^\W*(?:updated|added|created|clarified|authored|implemented|wrote|fixed|removed|"
    r"refactored|ran|verified|committed|only)\b",
    re.IGNORECASE,
)
_NOTE = re.compile(r"^\W*(?:\*\*)?(?:note|important|⚠|>|tip|warning)", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I’m|I'll|I’ll|we|we're|let me)\b")
FAMILIES = (
    "seq:instead",
    "seq:fact",
    "seq:sandbox",
    "seq:noretry",
    "seq:same",
    "seq:api",
    "user:standing",
    "user:diagnostic",
    "user:other",
    "assistant",
)
FEATURES = (*FAMILIES, "confidence", "log-length", "code-span", "cjk", "report", "note", "limit")


def features(c: Record) -> list[float]:
    from swarmq.forge._limits import states_a_limit

    fam = family(c)
    if fam in ("seq:retried", "seq:installed", "seq:rerun"):
        fam = "seq:same"
    elif fam.startswith("assistant:") or fam.startswith("summary"):
        fam = "assistant"
    elif not fam.startswith("seq:") and fam not in FAMILIES:
        fam = "user:other"
    text = c["content"]
    prose = 0.0 if fam.startswith("seq:") else 1.0
    wide = sum(ord(ch) > 127 for ch in text) / max(1, len(text))
    return [1.0 if fam == f else 0.0 for f in FAMILIES] + [
        prose * c["confidence"],
        prose * math.log(max(2, len(text))) / 6,
        prose * float("`" in text),
        prose * float(wide > 0.3),
        prose * float(_REPORT.search(text) is not None),
        prose * float(_NOTE.search(text) is not None),
        prose * float(states_a_limit(text)),
    ]


L2 = 1.0


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (a few hundred rows)."""
    w = np.zeros(x.shape[1] + 1)
    xb = np.hstack([x, np.ones((len(x), 1))])
    reg = np.eye(len(w)) * L2
    reg[-1, -1] = 0.0
    for _ in range(25):
        p = 1 / (1 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + reg @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        w -= np.linalg.solve(hess, grad)
    return w[:-1], float(w[-1])


def report(now_path: Path, first_paths: list[Path]) -> None:
    now: list[Record] = json.loads(now_path.read_text(encoding="utf-8"))
    sets = Sets({r["set"] for r in now})
    first: list[Record] = [r for p in first_paths for r in json.loads(p.read_text("utf-8"))]
    first_sets = sorted({r["set"] for r in first})
    held = [s for s in sets.names if s != "labels.yaml"]
    for name, recs, scope in (("now", now, held), ("first readings", first, first_sets)):
        table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for r in recs:
            if r["set"] in scope:
                table[family(r["cand"])][0 if sets.positive(r) else 1] += 1
        print(f"\n{name}: family, matched, not, precision")
        for fam, (a, b) in sorted(table.items(), key=lambda kv: -sum(kv[1])):
            print(f"  {fam:22s} {a:4d} {b:4d}  {a / (a + b):.2f}")
    gates: dict[str, Callable[[Record], bool]] = {
        "none": lambda r: True,
        "no agent prose": lambda r: not family(r["cand"]).startswith("assistant:"),
    }
    from swarmq.forge._limits import states_a_limit

    gates["agent prose only stating a limit"] = lambda r: (
        not family(r["cand"]).startswith("assistant:") or states_a_limit(r["cand"]["content"])
    )
    for name, gate in gates.items():
        print(
            f"\n{name}:\n  now, fresh + heldout2-16: {shown(sets.totals(now, [gate(r) for r in now], held))}"
        )
        print(
            f"  first readings: {shown(sets.totals(first, [gate(r) for r in first], first_sets))}"
        )
    x_now = np.array([features(r["cand"]) for r in now])
    y_now = np.array([float(sets.positive(r)) for r in now])
    users = [sets.user(r) for r in now]
    w, b = fit(x_now, y_now)
    print(
        "\nweights on all:",
        {f: round(float(v), 2) for f, v in zip(FEATURES, w, strict=True)},
        round(b, 2),
    )
    oof = np.zeros(len(now))
    for u in sorted(set(users)):
        train = np.array([v != u for v in users])
        w, b = fit(x_now[train], y_now[train])
        oof[~train] = 1 / (1 + np.exp(-(x_now[~train] @ w + b)))
    first_p = np.zeros(len(first))
    if first:
        x_first = np.array([features(r["cand"]) for r in first])
        for s in first_sets:
            left = {sets.user(r) for r in first if r["set"] == s}
            train = np.array([r["set"] != s and sets.user(r) not in left for r in now])
            w, b = fit(x_now[train], y_now[train])
            rows = np.array([r["set"] == s for r in first])
            first_p[rows] = 1 / (1 + np.exp(-(x_first[rows] @ w + b)))
    print("\nlogistic, threshold: leave-one-user-out now | first readings (their users left out)")
    for th in (0.0, 0.4, 0.5, 0.6, 0.7, 0.8):
        a = shown(sets.totals(now, list(oof >= th), held))
        f = shown(sets.totals(first, list(first_p >= th), first_sets)) if first else "-"
        print(f"  {th:.1f}: {a} | {f}")


def main() -> None:
    if sys.argv[1] == "dump":
        out, rest = Path(sys.argv[2]), sys.argv[3:]
        if rest[:1] == ["--tree"]:
            env = dict(os.environ, PYTHONPATH=rest[1])
            labels = [str(Path(p).resolve()) for p in rest[2:]]
            here = [sys.executable, __file__, "dump", str(out.resolve()), *labels]
            subprocess.run(here, env=env, check=True, cwd=rest[1])
            return
        dump(out, [Path(p).resolve() for p in rest])
    else:
        report(Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]])


if __name__ == "__main__":
    main()
