"""Package faces that import their members on first use, so importing one light submodule
(a ``config`` the roster needs) does not import the whole package (numpy, httpx, every store).

A package calls :func:`lazy_package` instead of importing its members::

    lazy_package(__name__, {"factory": ("build_provider",), "ledger": ("LLMLedger",)})

and keeps the same imports under ``if TYPE_CHECKING:`` for type checkers. ``from pkg import
name`` and ``pkg.name`` then work as before, importing ``pkg.factory`` at that moment.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any


class LazyPackage(ModuleType):
    """A package module whose exported names are imported from their submodules on first use."""

    _lazy_exports: Mapping[str, str]
    """Exported name → the module defining it."""

    def __getattr__(self, name: str) -> Any:
        module = self.__dict__.get("_lazy_exports", {}).get(name)
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        ModuleType.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing a submodule binds it on its package. Where an export has the submodule's
        # name (the function ``inject`` of the module ``inject``) the export wins, as it does
        # in an eager ``from .inject import inject``.
        exports = self.__dict__.get("_lazy_exports", {})
        if isinstance(value, ModuleType) and exports.get(name) == value.__name__:
            value = getattr(value, name)
        ModuleType.__setattr__(self, name, value)


def lazy_package(package: str, members: Mapping[str, Sequence[str]]) -> None:
    """Make ``package`` (a ``__name__``) lazy: ``members`` maps each submodule (relative name)
    to the names it exports."""
    module = sys.modules[package]
    module.__class__ = LazyPackage
    exports = {name: f"{package}.{sub}" for sub, names in members.items() for name in names}
    ModuleType.__setattr__(module, "_lazy_exports", exports)
