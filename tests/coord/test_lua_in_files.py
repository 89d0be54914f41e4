"""Lua lives only in ``swarmq/coord/lua/``: no Python module of swarmq carries a script inline."""

from __future__ import annotations

import re
from pathlib import Path

import swarmq
from swarmq.coord.connection import lua_source

PACKAGE = Path(swarmq.__file__).parent
LUA_CALL = re.compile(r"redis\.(p?call)\s*\(")


def test_no_python_module_holds_inline_lua() -> None:
    inline = [
        str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if LUA_CALL.search(p.read_text())
    ]
    assert inline == []


def test_every_lua_file_loads() -> None:
    for path in sorted((PACKAGE / "coord" / "lua").glob("*.lua")):
        assert LUA_CALL.search(lua_source(path.stem)), path.name
