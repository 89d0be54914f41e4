"""The asking process's own spellings, without ``json``, ``re`` or ``pathlib``, give exactly
what those modules give: JSON written as ``json.dumps(..., ensure_ascii=False)`` and read as
``json.loads``, paths as ``pathlib`` spells them (the state directory's name and the socket's,
which both sides must agree on byte for byte), the roster's ``${NAME}`` references as the
regular expression found them, the roster as ``pathlib`` found it; and a hook imports none of
those modules."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmq.hooks import _leanjson
from swarmq.hooks._wire import socket_file, socket_path
from swarmq.hooks.client import config_file, find_config, parents
from swarmq.hooks.resident import references
from swarmq.storage.sha import sha256_hex
from swarmq.storage.statedir import (
    child,
    config_key,
    expanded,
    pure,
    state_root,
    swarm_state_dir,
    swarm_state_path,
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text() | st.integers(), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_dumps_writes_as_json_does(value: Any) -> None:
    assert _leanjson.dumps(value) == json.dumps(value, ensure_ascii=False)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.sampled_from(["", " ", "\n", " \t\r\n "]))
def test_loads_reads_as_json_does(value: Any, space: str) -> None:
    for text in (json.dumps(value, ensure_ascii=False), json.dumps(value)):
        data = (space + text + space).encode("utf-8")
        assert repr(_leanjson.loads(data)) == repr(json.loads(data))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b" ",
        b'{"a": 1} x',
        b'{"a": 1}{}',
        b'{"a": ',
        b"\xef\xbb\xbf{}",  # a UTF-8 BOM: json reads it from bytes
        '{"a": "\ud800"}'.encode("utf-8", "surrogatepass"),  # json decodes surrogatepass
        b"\xff",
        '"\x00"'.encode("utf-16-le"),
        b"[NaN, Infinity, -Infinity, 1e400, 01]",
        b'"tab\there"',  # a raw control character: refused (strict)
        b"[" * 100_000,
    ],
)
def test_loads_refuses_and_reads_as_json_does(data: bytes) -> None:
    try:
        expected: Any = ("value", repr(json.loads(data)))
    except (ValueError, RecursionError) as exc:
        expected = ("error", type(exc), str(exc))
    try:
        got: Any = ("value", repr(_leanjson.loads(data)))
    except (ValueError, RecursionError) as exc:
        got = ("error", type(exc), str(exc))
    assert got == expected


def test_dumps_leaves_other_types_to_json() -> None:
    class Named(str):
        pass

    for value in ({1.5: "x"}, {"a": 1.5}, [Named("n")], {("t",): 1}, {"a": {1, 2}}):
        try:
            expected: Any = json.dumps(value, ensure_ascii=False)
        except TypeError as exc:
            with pytest.raises(TypeError, match=re.escape(str(exc))):
                _leanjson.dumps(value)
        else:
            assert _leanjson.dumps(value) == expected


PATH_TEXT = st.lists(
    st.sampled_from(["", ".", "..", "a", "b c", "~", "~root", "é", "x.y"]), max_size=6
).map("/".join) | st.text(alphabet="/.~ab", max_size=12)


@settings(max_examples=600, deadline=None)
@given(PATH_TEXT)
def test_paths_are_spelled_as_pathlib_spells_them(text: str) -> None:
    assert pure(text) == str(PurePosixPath(text))
    try:
        want: Any = str(Path(text).expanduser())
    except RuntimeError:
        want = RuntimeError
    try:
        got: Any = expanded(text)
    except RuntimeError:
        got = RuntimeError
    assert got == want
    for name in ("hooks", "server.sock", ".local"):
        assert child(pure(text), name) == str(PurePosixPath(text) / name)


def _old_socket_path(state: Path) -> Path:
    """The socket's path as it was computed with pathlib."""
    path = state / "server.sock"
    if len(str(path)) <= 100:
        return path
    digest = sha256_hex(str(state).encode("utf-8"))[:16]
    return Path(os.environ.get("TMPDIR") or "/tmp") / f"swarmq-hooks-{os.getuid()}-{digest}.sock"


@pytest.mark.parametrize(
    ("state_env", "xdg", "home", "tmpdir"),
    [
        (None, None, "/home/u", None),
        (None, None, "/", None),
        (None, "/x//state/", "/home/u", None),
        ("~/st/./a/", None, "/home/u", "/tmp//t/"),
        ("rel/state", None, "/home/u", None),
        (".", None, "/home/u", None),
        ("/" + "long/" * 30, None, "/home/u", None),
        ("/" + "long/" * 30, None, "/home/u", "/var//tmp/"),
    ],
)
def test_state_and_socket_as_before(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    state_env: str | None,
    xdg: str | None,
    home: str,
    tmpdir: str | None,
) -> None:
    for name, value in (
        ("SWARMQ_STATE", state_env),
        ("XDG_STATE_HOME", xdg),
        ("HOME", home),
        ("TMPDIR", tmpdir),
    ):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    explicit, x = os.environ.get("SWARMQ_STATE"), os.environ.get("XDG_STATE_HOME")
    root = (
        Path(explicit).expanduser()
        if explicit
        else (Path(x).expanduser() if x else Path.home() / ".local" / "state") / "swarmq"
    )
    assert state_root() == root and str(state_root()) == str(root)
    for config in ("swarm.yaml", "./a/../swarm.yaml", str(tmp_path / "s.yaml"), "~/s.yaml"):
        key = sha256_hex(str(Path(config).expanduser().resolve()).encode("utf-8"))[:16]
        assert config_key(config) == key == config_key(Path(config))
        state = root / "hooks" / key
        assert swarm_state_path(config) == str(state) == str(swarm_state_dir(config))
        assert socket_file(swarm_state_path(config)) == str(_old_socket_path(state))
        assert socket_path(state) == _old_socket_path(state)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="${}aZ_9 -\n", max_size=40))
def test_references_as_the_regular_expression(text: str) -> None:
    assert references(text) == re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", text)


@settings(max_examples=400, deadline=None)
@given(PATH_TEXT)
def test_parents_as_pathlib_gives_them(text: str) -> None:
    assert parents(pure(text)) == [str(p) for p in PurePosixPath(text).parents]


def test_config_found_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "swarm.yaml").write_text("swarm: x\n")
    monkeypatch.delenv("SWARMQ_CONFIG", raising=False)
    for cwd in (tmp_path / "a" / "b" / "c", tmp_path / "a", tmp_path, None):
        found = config_file(None if cwd is None else f"{cwd}//./")
        old = _old_find_config(None if cwd is None else f"{cwd}//./")
        assert found == (None if old is None else str(old))
        assert find_config(None if cwd is None else str(cwd)) == (
            None if old is None else Path(old)
        )
    monkeypatch.chdir(tmp_path / "a" / "b")
    assert config_file(None) == str(_old_find_config(None)) == str(tmp_path / "a" / "swarm.yaml")
    assert config_file("c/..") is None is _old_find_config("c/..")  # ".." is not resolved
    monkeypatch.setenv("SWARMQ_CONFIG", "../swarm.yaml")
    assert config_file(None) == str(_old_find_config(None)) == "../swarm.yaml"
    monkeypatch.setenv("SWARMQ_CONFIG", "../none.yaml")
    assert config_file(None) is None is _old_find_config(None)


def _old_find_config(cwd: str | None) -> Path | None:
    """The roster's path as it was found with pathlib."""
    explicit = os.environ.get("SWARMQ_CONFIG")
    if explicit:
        path = Path(explicit).expanduser()
        return path if path.is_file() else None
    start = Path(cwd) if cwd else Path.cwd()
    for directory in (start, *start.parents):
        if (directory / "swarm.yaml").is_file():
            return directory / "swarm.yaml"
    return None


HOOK = """
import io, sys
started = set(sys.modules)
sys.argv = ["swarmq-hook", "claude-code"]
sys.stdin = io.TextIOWrapper(io.BytesIO({payload!r}))
from swarmq.hooks.client import main
try:
    main()
except SystemExit:
    pass
slow = {{"typing", "socket", "selectors", "json", "re", "pathlib", "contextlib",
        "swarmq.storage.spool", "dataclasses"}} & (set(sys.modules) - started)
assert not slow, f"slow imports: {{slow}}"
"""


@pytest.mark.parametrize(
    "event",
    [
        {"hook_event_name": "UserPromptSubmit", "prompt": "fix the build"},
        {"hook_event_name": "SessionStart"},
        {"hook_event_name": "PostToolUseFailure", "tool_input": {"command": "make"}, "error": "1"},
    ],
)
def test_a_hook_imports_no_slow_module(tmp_path: Path, event: dict[str, Any]) -> None:
    """Without ``site`` (an editable install's finder would hide them) and with no swarm here:
    the hook reads its event, finds no roster and says nothing, importing none of them."""
    import subprocess
    import sys

    from tests.support import REPO

    payload = json.dumps({**event, "cwd": str(tmp_path)}).encode()
    env = {k: v for k, v in os.environ.items() if k not in ("SWARMQ_CONFIG",)}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-S", "-c", HOOK.format(payload=payload)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
