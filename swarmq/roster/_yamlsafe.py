"""Parsing swarm.yaml safely: positions for every value, and limits a hostile file cannot pass.

libyaml composes the document (aliases stay shared nodes); :class:`Marks` then records the
line and column of every value and key, finds duplicate keys (which PyYAML would silently
collapse), and counts depth and the nodes the document stands for once aliases are expanded,
without expanding them, so an alias bomb or 5,000-deep nesting is one located error in
milliseconds instead of gigabytes, a minute, or a RecursionError.
"""

from __future__ import annotations

import gc
from typing import Any

import yaml

Loc = tuple[str | int, ...]


class Marks:
    """Line/column of every value (and key) in the document, by location tuple."""

    def __init__(self) -> None:
        self.values: dict[Loc, tuple[int, int]] = {}
        self.keys: dict[Loc, tuple[int, int]] = {}
        self.duplicates: list[tuple[Loc, int, int, int]] = []
        self.nodes = 0
        self._seen: dict[
            int, tuple[int, int]
        ] = {}  # id(collection node) -> (expanded size, height)

    def walk(self, node: yaml.Node, loc: Loc, depth: int = 1) -> tuple[int, int]:
        """Record marks, and count what the document stands for once aliases are expanded,
        without expanding them: an aliased node is walked once and then only counted.
        Raises :class:`YamlLimit` at the first node past :data:`MAX_DEPTH` or
        :data:`MAX_NODES`. Returns the node's ``(expanded size, height)``."""
        known = self._seen.get(id(node))
        if known is not None:  # an alias of a node already walked
            self.nodes += known[0]
            if self.nodes > MAX_NODES:
                raise YamlLimit(
                    None,
                    None,
                    f"aliases expand the document past {MAX_NODES:,} nodes; refusing an alias bomb",
                    node.start_mark,
                )
            if depth - 1 + known[1] > MAX_DEPTH:
                raise YamlLimit(
                    None, None, f"an alias nests deeper than {MAX_DEPTH} levels", node.start_mark
                )
            return known
        if depth > MAX_DEPTH:
            raise YamlLimit(None, None, f"nesting deeper than {MAX_DEPTH} levels", node.start_mark)
        self.nodes += 1
        self.values[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
        size = height = 1
        if isinstance(node, yaml.MappingNode):
            self._seen[id(node)] = (1, MAX_DEPTH + 1)  # a node reached again while walked: a cycle
            seen: dict[str, int] = {}
            for key_node, value_node in node.value:
                key = str(key_node.value)
                line = key_node.start_mark.line + 1
                if key in seen:
                    self.duplicates.append(
                        ((*loc, key), line, key_node.start_mark.column + 1, seen[key])
                    )
                seen[key] = line
                self.keys[(*loc, key)] = (line, key_node.start_mark.column + 1)
                child = self.walk(value_node, (*loc, key), depth + 1)
                size, height = size + child[0], max(height, child[1] + 1)
        elif isinstance(node, yaml.SequenceNode):
            self._seen[id(node)] = (1, MAX_DEPTH + 1)
            for index, item in enumerate(node.value):
                child = self.walk(item, (*loc, index), depth + 1)
                size, height = size + child[0], max(height, child[1] + 1)
        else:
            return 1, 1
        self._seen[id(node)] = (size, height)
        if self.nodes > MAX_NODES:
            raise YamlLimit(None, None, f"more than {MAX_NODES:,} nodes", node.start_mark)
        return size, height

    def find(self, loc: Loc, *, key: bool = False) -> tuple[int | None, int | None]:
        table = self.keys if key else self.values
        probe = loc
        while probe:
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            probe = probe[:-1]
        return self.values.get((), (None, None))


MAX_ROSTER_BYTES = 16 * 1024 * 1024
"""A roster larger than this is refused before parsing (a 120,000-worker roster is ~8 MB)."""
MAX_DEPTH = 64
"""Deepest nesting, aliases included (real rosters nest about six levels)."""
MAX_NODES = 5_000_000
"""Most nodes the document may stand for once every alias is expanded (a billion-laughs bomb
stands for billions while it is only a few hundred bytes)."""


class YamlLimit(yaml.MarkedYAMLError):
    """The document is beyond one of the limits above; located at the node that crossed it."""


class _PureLoader(yaml.SafeLoader):
    """Without libyaml: PyYAML's composer recurses per level and its scanner looks ahead across
    open flow collections, so depth is stopped here, before either runs away."""

    _depth = 0

    def fetch_flow_collection_start(self, token_class: Any) -> None:
        if self.flow_level >= MAX_DEPTH:
            raise YamlLimit(None, None, f"nesting deeper than {MAX_DEPTH} levels", self.get_mark())
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                event: Any = self.peek_event()  # type: ignore[no-untyped-call]
                raise YamlLimit(
                    None, None, f"nesting deeper than {MAX_DEPTH} levels", event.start_mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_FastLoader: Any = getattr(yaml, "CSafeLoader", _PureLoader)
"""libyaml when present: the pure-Python scanner takes most of a minute on a 120,000-worker
roster, libyaml seconds; both give the same nodes and marks (libyaml stops nesting at 1,000
levels itself, and :class:`Marks` at :data:`MAX_DEPTH`)."""


def parse_yaml(text: str, file: str) -> tuple[Any, Marks]:
    """Compose (aliases stay shared nodes), check the limits while recording marks, and only
    then build Python objects. The cyclic collector is paused meanwhile: a large roster
    allocates millions of objects that all survive, and its passes over them made parsing
    quadratic."""
    loader = _FastLoader(text)
    collecting = gc.isenabled()
    gc.disable()
    try:
        node = loader.get_single_node()
        marks = Marks()
        if node is None:
            return None, marks
        marks.walk(node, ())
        return loader.construct_document(node), marks
    finally:
        loader.dispose()
        if collecting:
            gc.enable()
