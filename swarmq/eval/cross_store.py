"""Federated injection judged on labelled real workspaces holding more than one store.

The labels (``eval/knowledge/workspaces/queries.json``) name workspaces laid out beside them as
their repositories commit them (``.swarm/knowledge.jsonl``, ``.agents/learnings`` and
``.agents/patterns``, Swarm2 memory roots) and, per query, the records a developer would want
shown: a knowledge entry by its id, a learning, pattern or memory note by its path relative to
the workspace (a memory note: any line of that file). Each workspace is copied to a temporary
directory first (the stores write sidecars and a search index beside themselves), then every
query runs through ``federated.inject.prepare``, the path every entry point uses, read-only.

A shown record counts as relevant when it, or a copy of its fact another store holds beside it
(``also_in``), is labelled. Figures come per split, per store kind (of the labelled records)
and per workspace; ``held`` items are never tuned on.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.errors import InvalidInput
from swarmq.eval.metrics import HitRate
from swarmq.federated.finding import Finding, Fused, Store
from swarmq.federated.inject import prepare
from swarmq.federated.stores import Floors, Stores
from swarmq.flywheel.store import AgentsLayout
from swarmq.knowledge.config import DenseModel, KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.knowledge.vectors import fill
from swarmq.profiles.search import MemorySearch
from swarmq.storage.locking import LocalLocks

SPLITS = ("held", "tune", "all")
TOP_K = 3


class CrossStoreLabelError(InvalidInput):
    """A cross-store labels file that cannot be used, naming the file and the item."""


@dataclass(frozen=True)
class Workspace:
    """One labelled workspace: its directory and where its memory roots are (relative)."""

    name: str
    root: Path
    profiles: str | None = None
    shared: str | None = None

    def kind(self, label: str) -> Store:
        """The store a labelled record lives in."""
        if label.startswith(".agents/learnings/"):
            return Store.LEARNING
        if label.startswith(".agents/patterns/"):
            return Store.PATTERN
        if self.profiles and label.startswith(self.profiles.rstrip("/") + "/"):
            return Store.WORKER_MEMORY
        if self.shared and label.startswith(self.shared.rstrip("/") + "/"):
            return Store.SHARED_MEMORY
        return Store.SWARM


@dataclass(frozen=True)
class CrossStoreLabels:
    path: Path
    workspaces: dict[str, Workspace]
    queries: list[dict[str, Any]]

    def select(self, split: str) -> list[dict[str, Any]]:
        return [q for q in self.queries if split == "all" or q.get("split") == split]


def _known(workspace: Workspace) -> set[str]:
    """Every label a query of ``workspace`` may name: entry ids and store file paths."""
    known: set[str] = set()
    store = workspace.root / ".swarm" / "knowledge.jsonl"
    if store.is_file():
        for line in store.read_text("utf-8").splitlines():
            if line.strip():
                known.add(str(json.loads(line)["id"]))
    roots = [".agents/learnings", ".agents/patterns", workspace.profiles, workspace.shared]
    for rel in roots:
        if rel is None:
            continue
        base = workspace.root / rel
        for path in base.rglob("*") if base.is_dir() else ():
            if path.is_file() and path.suffix in (".md", ".jsonl"):
                known.add(path.relative_to(workspace.root).as_posix())
    return known


def load_cross_store_labels(path: Path) -> CrossStoreLabels:
    """Read and check a labels file: every workspace exists and every label is a record of
    its query's workspace."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise CrossStoreLabelError(f"{path}: cannot read labels: {exc}") from exc
    workspaces: dict[str, Workspace] = {}
    for name, spec in dict(data.get("workspaces", {})).items():
        root = path.parent / name
        if not root.is_dir():
            raise CrossStoreLabelError(f"{path}: no workspace directory {root}")
        memory = dict(spec.get("memory") or {})
        workspaces[name] = Workspace(name, root, memory.get("profiles"), memory.get("shared"))
    known = {name: _known(ws) for name, ws in workspaces.items()}
    queries = list(data.get("queries", []))
    for n, query in enumerate(queries):
        name = query.get("workspace")
        if name not in workspaces or not isinstance(query.get("text"), str):
            raise CrossStoreLabelError(f"{path}: queries[{n}] has no text or no known workspace")
        missing = [r for r in query.get("relevant", []) if r not in known[name]]
        if missing:
            raise CrossStoreLabelError(f"{path}: queries[{n}] names unknown records {missing}")
    return CrossStoreLabels(path, workspaces, queries)


@contextmanager
def workspace_stores(workspace: Workspace, config: KnowledgeConfig) -> Iterator[Stores]:
    """The workspace's stores, read from a temporary copy (an absent ``.swarm/`` is an empty
    knowledge store, as a roster's workspace without one has)."""
    with tempfile.TemporaryDirectory(prefix="swarmq-xstore-") as tmp:
        root = Path(tmp) / workspace.name
        shutil.copytree(workspace.root, root)
        swarm = root / ".swarm"
        swarm.mkdir(exist_ok=True)
        knowledge = KnowledgeStore(
            swarm,
            locks=LocalLocks(Path(tmp) / "locks"),
            config=config,
            data_dir=Path(tmp) / "data",
            project_name=workspace.name,
        )
        fill(knowledge)  # the steady state: the background catch-up has embedded every entry
        agents = AgentsLayout(root / ".agents")
        memory = None
        if workspace.profiles or workspace.shared:
            profiles = root / (workspace.profiles or ".profiles")
            shared = root / (workspace.shared or ".shared")
            profiles.mkdir(parents=True, exist_ok=True)
            shared.mkdir(parents=True, exist_ok=True)
            memory = MemorySearch(profiles, shared)
        yield Stores(root, knowledge, agents if agents.root.is_dir() else None, memory)


def label_of(finding: Finding, root: Path) -> str:
    """The label naming ``finding``'s record: an entry id, else its path in the workspace."""
    if finding.ranked is not None:
        return finding.ranked.entry.id
    if finding.hit is not None:
        return finding.hit.cite_as
    where = finding.location.rsplit(":", 1)[0]
    real = os.path.realpath(where)
    try:
        return Path(real).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return where


@dataclass
class CrossStoreFigures:
    split: str
    retrieval: str
    top3: HitRate = field(default_factory=HitRate)
    abstain: HitRate = field(default_factory=HitRate)
    by_kind: dict[str, HitRate] = field(default_factory=dict)
    """Per store kind of the labelled records: a relevant record of that kind in the top 3."""
    by_workspace: dict[str, dict[str, HitRate]] = field(default_factory=dict)
    shown_by_kind: dict[str, int] = field(default_factory=dict)
    """How many shown records (first three) came from each store."""
    latency_ms: list[float] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)

    def _count(self, workspace: str, figure: str, hit: bool) -> None:
        table = self.by_workspace.setdefault(workspace, {})
        table[figure] = table.get(figure, HitRate()) + HitRate(int(hit), 1)

    def as_dict(self, verbose: bool = False) -> dict[str, Any]:
        ordered = sorted(self.latency_ms)
        out: dict[str, Any] = {
            "split": self.split,
            "retrieval": self.retrieval,
            "top3": self.top3.as_dict(),
            "abstain": self.abstain.as_dict(),
            "by_kind": {k: v.as_dict() for k, v in sorted(self.by_kind.items())},
            "by_workspace": {
                w: {k: v.as_dict() for k, v in sorted(t.items())}
                for w, t in sorted(self.by_workspace.items())
            },
            "shown_by_kind": dict(sorted(self.shown_by_kind.items())),
            "p50_ms": round(ordered[len(ordered) // 2], 3) if ordered else None,
        }
        if verbose:
            out["details"] = self.details
        return out


def _labels(fused: Fused, root: Path) -> set[str]:
    return {label_of(member, root) for member in fused.members}


def evaluate_cross_store(
    labels: CrossStoreLabels,
    split: str = "held",
    config: KnowledgeConfig | None = None,
    floors: Floors | None = None,
) -> CrossStoreFigures:
    """Inject (read-only) every query of ``split`` over its workspace's stores and score the
    first three records shown (``floors``: injection's own unless a calibration tries
    others)."""
    cfg = config or KnowledgeConfig()
    figures = CrossStoreFigures(split, cfg.retrieval.value)
    chosen = labels.select(split)
    for name, workspace in sorted(labels.workspaces.items()):
        queries = [q for q in chosen if q["workspace"] == name]
        if not queries:
            continue
        with workspace_stores(workspace, cfg) as stores:
            for query in queries:
                started = time.perf_counter()
                shown = prepare(stores, QueryContext(text=query["text"]), floors=floors).shown
                figures.latency_ms.append((time.perf_counter() - started) * 1000)
                _score(figures, workspace, stores.workspace, query, shown)
    return figures


def _score(
    figures: CrossStoreFigures,
    workspace: Workspace,
    root: Path,
    query: dict[str, Any],
    shown: list[Fused],
) -> None:
    relevant = set(query.get("relevant", []))
    top = shown[:TOP_K]
    found = set().union(*(_labels(f, root) for f in top)) if top else set()
    for item in top:
        store = item.finding.store.value
        figures.shown_by_kind[store] = figures.shown_by_kind.get(store, 0) + 1
    if relevant:
        hit = bool(relevant & found)
        figures.top3 += HitRate(int(hit), 1)
        figures._count(workspace.name, "top3", hit)
        for kind in sorted({workspace.kind(r).value for r in relevant}):
            of_kind = {r for r in relevant if workspace.kind(r).value == kind}
            figures.by_kind[kind] = figures.by_kind.get(kind, HitRate()) + HitRate(
                int(bool(of_kind & found)), 1
            )
    else:
        hit = not shown
        figures.abstain += HitRate(int(hit), 1)
        figures._count(workspace.name, "abstain", hit)
    figures.details.append(
        {
            "workspace": workspace.name,
            "query": query["text"],
            "ok": hit,
            "relevant": len(relevant),
            "shown": [
                {
                    "store": f.finding.store.value,
                    "label": label_of(f.finding, root),
                    "relevant": bool(_labels(f, root) & relevant),
                    "score": round(f.score, 4),
                    "relevance": round(f.finding.relevance, 3),
                    "text": " ".join(f.finding.text.split())[:90],
                }
                for f in shown
            ],
        }
    )


def evaluate_cross_store_modes(
    labels: CrossStoreLabels, split: str = "held", dense_model: DenseModel | None = None
) -> dict[str, CrossStoreFigures]:
    """The default (hybrid) retrieval and the lexical one, same queries."""
    model = dense_model or KnowledgeConfig().model
    return {
        mode.value: evaluate_cross_store(
            labels, split, KnowledgeConfig(retrieval=mode, dense_model=model)
        )
        for mode in (Retrieval.HYBRID, Retrieval.LEXICAL)
    }
