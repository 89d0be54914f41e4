"""The asking process's own spellings, without ``json``, ``re`` or ``pathlib``, give exactly
what those modules give: JSON written as ``json.dumps(..., ensure_ascii=False)`` and read as
``json.loads``, paths as ``pathlib`` spells them (the state directory's name and the socket's,
which both sides must agree on byte for byte), the roster's ``${NAME}`` references as the
regular expression found them."""

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
