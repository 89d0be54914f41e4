"""Indexes kept on a store's mirror: near-duplicate bigrams and contradiction features."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from swarmq.knowledge._loaded import LoadedFile
from swarmq.knowledge.contradiction import ContradictionIndex
from swarmq.knowledge.dedup import BigramIndex
from swarmq.knowledge.model import Entry


class DedupListener:
    def __init__(self) -> None:
        self.index = BigramIndex()

    def reset(self) -> None:
        self.index = BigramIndex()

    def on_add(self, slot: int, entry: Entry) -> None:
        self.index.add(slot, entry.lesson)

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None:
        if old.lesson != new.lesson:
            self.index.replace(slot, new.lesson)

    def on_remove(self, slot: int, entry: Entry) -> None:
        self.index.remove(slot)


class ContradictionListener:
    def __init__(self, index: ContradictionIndex) -> None:
        self.index = index

    def reset(self) -> None:
        self.index = ContradictionIndex(self.index.mode)

    def on_add(self, slot: int, entry: Entry) -> None:
        self.index.add(entry.lesson)

    def on_replace(self, slot: int, old: Entry, new: Entry) -> None:
        if old.lesson != new.lesson:
            self.index.remove(old.lesson)
            self.index.add(new.lesson)

    def on_remove(self, slot: int, entry: Entry) -> None:
        self.index.remove(entry.lesson)


def mirror_index(mirror: LoadedFile, name: str, factory: Callable[[], Any]) -> Any:
    """The index ``name`` of a mirror, built and subscribed on first use."""
    index = mirror.indexes.get(name)
    if index is None:
        index = mirror.indexes[name] = factory()
        mirror.subscribe(index)
    return index
