"""No import circle anywhere in the repository: swarmq, the benchmarks and the tests.

``lint-imports`` keeps swarmq's packages acyclic with their siblings; this checks every module
of all three packages, imports inside functions and under ``TYPE_CHECKING`` included (grimp
records both), so a circle a lazy import hides is still a circle.
"""

from __future__ import annotations

import grimp

PACKAGES = ("swarmq", "bench", "tests")


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_circles_are_found() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_repository_imports_itself_in_a_circle() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    ours = {m for m in graph.modules if m.split(".")[0] in PACKAGES}
    edges = {m: graph.find_modules_directly_imported_by(m) & ours for m in ours}
    assert _circles(edges) == []
