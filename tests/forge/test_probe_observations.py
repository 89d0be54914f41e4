"""Failed probes of missing paths, resolved in the session, kept as observations, not lessons.

Small Codex-shaped and Claude Code-shaped sessions written for these tests (the shapes of
eval/replay/histories-h13, whose misses this mechanism answers): forge writes no candidate
for them and records one observation per path the session resolved, found elsewhere or shown
absent; a path the session then created, or one never resolved, leaves nothing. Real files,
file locks (forge offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swarmq.flywheel.probes import ABSENT, FOUND, observations, recalled
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.extract import forge_transcript
from swarmq.knowledge.missing import missing_paths, same_path
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession


def codex_session(path: Path, session: str, steps: list[tuple[str, str, int]]) -> Path:
    """A current Codex rollout: ``(command, output, exit_code)`` shell calls, after a request."""
    lines: list[dict[str, Any]] = [
        {
            "timestamp": "2025-11-23T09:11:44.000Z",
            "type": "session_meta",
            "payload": {"id": session, "cwd": "/work/app", "originator": "codex_cli_rs"},
        },
        {
            "timestamp": "2025-11-23T09:11:45.000Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Allow the host in the Vite config"}],
            },
        },
    ]
    for n, (command, output, code) in enumerate(steps):
        call_id = f"call_{n}"
        lines.append(
            {
                "timestamp": f"2025-11-23T09:12:{n:02d}.000Z",
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell_command",
                    "arguments": json.dumps({"command": command, "workdir": "/work/app"}),
                    "call_id": call_id,
                },
            }
        )
        lines.append(
            {
                "timestamp": f"2025-11-23T09:12:{n:02d}.500Z",
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": f"Exit code: {code}\nWall time: 0 seconds\nOutput:\n{output}",
                },
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


VITE = [
    (
        "sed -n '1,200p' vite.config.js",
        "sed: can't read vite.config.js: No such file or directory\n",
        2,
    ),
    ('rg --files -g "vite.config.*"', "apps/web/vite.config.mjs\n", 0),
    ("sed -n '1,200p' apps/web/vite.config.mjs", 'import { defineConfig } from "vite"\n', 0),
]
SRC = [
    (
        'rg -n "process" src',
        "rg: src: IO error for operation on src: No such file or directory (os error 2)\n",
        2,
    ),
    ("ls apps", "api\nweb\n", 0),
    ('rg -n "process" apps -g"*.js"', "apps/web/src/lib/api.js:17:    if (process.env) {\n", 0),
]


def _forge(tmp_path: Path, transcript: Path) -> tuple[AgentsLayout, Any]:
    layout = AgentsLayout(tmp_path / "ws" / ".agents")
    locks = LocalLocks(tmp_path / "locks")
    return layout, forge_transcript(transcript, layout, locks, force=True)


def test_missing_path_found_elsewhere_is_an_observation_not_a_candidate(tmp_path: Path) -> None:
    transcript = codex_session(tmp_path / "rollout-a.jsonl", "sess-a", VITE + SRC)
    layout, result = _forge(tmp_path, transcript)
    assert not any("vite.config" in c.content or "`src`" in c.content for c in result.found)
    seen = {o.missing: o for o in observations(layout)}
    assert set(seen) == {"vite.config.js", "src"}
    vite = seen["vite.config.js"]
    assert vite.resolution == FOUND and vite.found == "apps/web/vite.config.mjs"
    assert vite.statement() == (
        "`sed -n '1,200p' vite.config.js` failed: `vite.config.js` does not exist here; "
        "the file is `apps/web/vite.config.mjs`."
    )
    assert vite.session_id in ("sess-a", "rollout-a")  # the session's id, else its file's name
    assert vite.source.endswith("rollout-a.jsonl:4")
    assert seen["src"].found == "apps/web/src"
    assert "it is `apps/web/src`" in seen["src"].statement()
    # forged again (forced): the same observations, not twice
    forge_transcript(transcript, layout, LocalLocks(tmp_path / "locks"), force=True)
    assert len(list(observations(layout))) == 2


def test_absent_from_its_folder_listing(tmp_path: Path) -> None:
    steps = [
        ("cat docs/setup.md", "cat: docs/setup.md: No such file or directory\n", 1),
        ("ls docs", "README.md\narchitecture.md\n", 0),
    ]
    layout, _ = _forge(tmp_path, codex_session(tmp_path / "r.jsonl", "sess-b", steps))
    (only,) = observations(layout)
    assert only.resolution == ABSENT and only.found == "ls docs"
    assert "`docs/setup.md` does not exist here (`ls docs` does not list it)" in only.statement()


def test_created_or_unresolved_paths_leave_nothing(tmp_path: Path) -> None:
    steps = [
        ("cat notes/todo.md", "cat: notes/todo.md: No such file or directory\n", 1),
        ("mkdir -p notes && touch notes/todo.md", "", 0),
        ("ls build/out.txt", "ls: cannot access 'build/out.txt': No such file or directory\n", 2),
        ("echo done", "done\n", 0),
    ]
    layout, _ = _forge(tmp_path, codex_session(tmp_path / "r.jsonl", "sess-c", steps))
    assert list(observations(layout)) == []


def test_a_read_tool_that_finds_the_file_elsewhere(tmp_path: Path) -> None:
    session = ClaudeSession()
    session.bash(
        "/repo/config/app.yaml",
        "<tool_use_error>File does not exist.</tool_use_error>",
        error=True,
        tool="Read",
    )
    session.bash("find /repo -name app.yaml", "/repo/deploy/config/app.yaml\n")
    layout, result = _forge(tmp_path, session.write(tmp_path / "claude.jsonl"))
    (only,) = observations(layout)
    assert only.found == "/repo/deploy/config/app.yaml" and only.missing == "/repo/config/app.yaml"
    assert result.found == [] or all("app.yaml" not in c.content for c in result.found)


def test_the_same_missing_path_whichever_program_looked() -> None:
    sed = "$ sed -n '1,200p' vite.config.js\nsed: can't read vite.config.js: No such file or directory"
    cat = "$ cat apps/web/vite.config.js\ncat: apps/web/vite.config.js: No such file or directory"
    cd = "$ cd apps/web && cat vite.config.js\ncat: vite.config.js: No such file or directory"
    keys = {m.key for text in (sed, cat, cd) for m in missing_paths(text)}
    assert keys == {"vite.config.js"}
    assert same_path("vite.config.js", "apps/web/vite.config.js")
    assert not same_path("a/src", "b/src")
    # not a probe: a script that fails on a missing file has another cause
    assert missing_paths("$ python x.py\npython: can't open file 'x.py': No such file") == ()
    assert missing_paths("$ cd nope && npm test\nbash: cd: nope: No such file or directory")


def test_recalled_only_for_other_sessions_and_the_same_path(tmp_path: Path) -> None:
    layout, _ = _forge(tmp_path, codex_session(tmp_path / "r.jsonl", "sess-a", VITE))
    later = missing_paths(
        "$ cat apps/web/vite.config.js\ncat: apps/web/vite.config.js: No such file or directory"
    )
    assert [o.found for o in recalled(layout, later, session_id="sess-b")] == [
        "apps/web/vite.config.mjs"
    ]
    own = observations(layout).__next__().session_id
    assert recalled(layout, later, session_id=f"rollout-2025-{own}") == []  # its own session
    other = missing_paths("$ cat vite.config.ts\ncat: vite.config.ts: No such file or directory")
    assert recalled(layout, other, session_id="sess-b") == []


def test_where_it_is_says_more_than_where_it_is_not(tmp_path: Path) -> None:
    layout = AgentsLayout(tmp_path / ".agents")
    first = codex_session(tmp_path / "a.jsonl", "sess-a", VITE)
    later = [
        (
            "cat apps/web/vite.config.js",
            "cat: apps/web/vite.config.js: No such file or directory\n",
            1,
        ),
        ("ls apps/web", "package.json\nsrc\nvite.svg\n", 0),
    ]
    second = codex_session(tmp_path / "b.jsonl", "sess-b", later)
    for transcript in (first, second):
        forge_transcript(transcript, layout, LocalLocks(tmp_path / "locks"), force=True)
    assert {o.resolution for o in observations(layout)} == {FOUND, ABSENT}
    again = missing_paths("$ cat vite.config.js\ncat: vite.config.js: No such file or directory")
    assert [o.found for o in recalled(layout, again, session_id="sess-c")] == [
        "apps/web/vite.config.mjs"
    ]
