"""Lazy package faces: every exported name resolves to its home, and an export named like its
submodule (``inject``) stays the export however the submodule was first imported."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from types import ModuleType

import pytest

from tests.support import REPO

LAZY = ["swarmq.llm", "swarmq.consolidation", "swarmq.flywheel",
        "swarmq.forge", "swarmq.knowledge"]  # fmt: skip


@pytest.mark.parametrize("package", LAZY)
def test_every_export_resolves_to_its_home(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        assert not isinstance(value, ModuleType), name
        home = sys.modules[module._lazy_exports[name]]
        assert getattr(home, name) is value
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = module.nope


def fresh(code: str) -> object:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, check=True)  # fmt: skip
    return json.loads(done.stdout)


@pytest.mark.parametrize(("package", "name"), [("swarmq.knowledge", "inject"),
                                               ("swarmq.flywheel", "lookup")])  # fmt: skip
def test_submodule_imported_first_does_not_shadow_the_export(package: str, name: str) -> None:
    code = (f"import json, types, {package}.{name}\nfrom {package} import {name}\n"
            f"import {package} as p\nprint(json.dumps([isinstance({name}, types.FunctionType), "
            f"p.{name} is {name}, {name}.__module__]))")  # fmt: skip
    assert fresh(code) == [True, True, f"{package}.{name}"]


def test_a_config_module_imports_only_its_own() -> None:
    code = (
        "import json, sys, swarmq.consolidation.config, swarmq.llm.config\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('numpy', 'httpx')))))"
    )
    assert fresh(code) == []
