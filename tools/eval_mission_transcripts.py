"""What a mission's forge finds in Claude Code's own session against what ``claude -p`` prints.

Before issue 30 a mission forged the agent's stdout; with the README's Claude Code line
(``claude -p … --permission-mode acceptEdits``, text output) that is the final answer alone.
For every labelled Claude Code session of ``eval/forge/`` this forges (a) the session file and
(b) what print mode prints for it (its last assistant text, which is what the stand-in
``tests/agents/claude`` prints), each in its own scratch workspace, and scores both against the
same labels (``swarmq.eval.forge.score``). Report per labels file; ``labels-fresh.yaml`` is the
held-out split (never tuned on), ``labels.yaml`` is development data.

    python tools/eval_mission_transcripts.py [--json]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from swarmq.eval.forge import load_labels, score
from swarmq.eval.metrics import Counts
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig
from swarmq.forge.extract import forge_transcript
from swarmq.storage.locking import LocalLocks

REPO = Path(__file__).resolve().parent.parent
LABELS = {
    "held-out (labels-fresh.yaml)": REPO / "eval" / "forge" / "labels-fresh.yaml",
    "development (labels.yaml)": REPO / "eval" / "forge" / "labels.yaml",
}


def printed(session: Path) -> str:
    """What ``claude -p`` (text output) prints for this session: its last assistant text."""
    last = ""
    for line in session.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") != "assistant":
            continue
        content = (record.get("message") or {}).get("content")
        blocks = (
            [content]
            if isinstance(content, str)
            else [
                b.get("text", "")
                for b in content or []
                if isinstance(b, dict) and b.get("type") == "text"
            ]
        )
        text = "\n".join(b for b in blocks if b.strip())
        if text.strip():
            last = text
    return last + "\n"


def run(labels: Path) -> dict[str, Any]:
    sessions = [s for s in load_labels(labels) if s.format == "claude-code"]
    totals: dict[str, Counts] = {"session": Counts(), "stdout": Counts()}
    tool_fixes = {"session": 0, "stdout": 0}
    with tempfile.TemporaryDirectory(prefix="swarmq-mission-transcripts-") as scratch:
        root = Path(scratch)
        for variant in ("session", "stdout"):
            layout = AgentsLayout(root / variant / "project" / ".agents")
            locks = LocalLocks(root / variant / "locks")
            for session in sorted(sessions, key=lambda s: s.file.name):
                source = session.file
                if variant == "stdout":
                    source = root / variant / f"{session.file.stem}.log"
                    source.parent.mkdir(parents=True, exist_ok=True)
                    source.write_text(printed(session.file), encoding="utf-8")
                result = forge_transcript(source, layout, locks, ForgeConfig(), force=True)
                found = list(result.found)
                tool_fixes[variant] += sum(1 for c in found if "worked instead" in c.content)
                outcome = score(session, (c.as_dict() | {"content": c.content} for c in found))
                totals[variant] = totals[variant] + outcome.counts
    return {
        "sessions": len(sessions),
        "lessons": sum(len(s.lessons) for s in sessions),
        **{
            v: c.as_dict() | {"error_then_fix_candidates": tool_fixes[v]} for v, c in totals.items()
        },
    }


def main() -> None:
    report = {name: run(path) for name, path in LABELS.items()}
    if "--json" in sys.argv:
        print(json.dumps(report, indent=2))
        return
    for name, data in report.items():
        print(f"{name}: {data['sessions']} Claude Code sessions, {data['lessons']} lessons")
        for variant in ("session", "stdout"):
            d = data[variant]
            print(
                f"  {variant:8} tp {d['tp']:3} fp {d['fp']:3} fn {d['fn']:3}  "
                f"P {d['precision']:.2f} R {d['recall']:.2f}  "
                f"error→fix candidates {d['error_then_fix_candidates']}"
            )


if __name__ == "__main__":
    main()
