"""Run transactions through the persisted index whatever the mirror's state.

A store's transaction reads through its index only when this process has not loaded the store
and the index exists (:meth:`TierFile._transaction_index`); most tests load the store by adding
to it first. With ``SWARMQ_TEST_TXN_INDEX=1`` (tests/conftest.py) every transaction on a store
file that exists builds or opens its index and goes through it, so the suites of transactions,
stores and crash points can be run once on each path."""

from __future__ import annotations

import os

import pytest

from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge._tierfile import TierFile

ENV = "SWARMQ_TEST_TXN_INDEX"


def _always(self: TierFile) -> FileIndex | None:
    if not self.config.persistent_index:
        return None
    return FileIndex.open(self.files.knowledge)


def force_index_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TierFile, "_transaction_index", _always)


def forced() -> bool:
    return os.environ.get(ENV) == "1"
