"""Consolidation and injection judged on labelled real opencode-swarm stores.

The labels (``eval/knowledge/labels.json``) name entries of the stores beside them
(``stores/*.jsonl``, byte-for-byte copies of public repositories' ``.swarm/knowledge.jsonl``).
Both evaluations run on one *merged* store of every entry, as a knowledge store linked by all
those projects would hold them: each entry's ``project_name`` is set to its repository's name
(real stores use plan titles and blanks there), nothing else is changed. Every labelled item
carries a ``split``; ``held`` items are never tuned on and are the figures that count.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.items import ActionKind
from swarmq.consolidation.knowledge import consolidate_tier
from swarmq.errors import InvalidInput
from swarmq.eval.metrics import Counts, HitRate
from swarmq.federated.inject import inject
from swarmq.federated.stores import Stores
from swarmq.knowledge.config import DenseModel, KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext
from swarmq.knowledge.serialize import dumps_js
from swarmq.knowledge.vectors import fill
from swarmq.storage.locking import LocalLocks

SPLITS = ("held", "tune", "all")
TOP_K = 3


class LabelError(InvalidInput):
    """A labels file that cannot be used, naming the file and the item."""


@dataclass(frozen=True)
class Labels:
    path: Path
    stores: Path
    duplicates: list[dict[str, Any]]
    apart: list[dict[str, Any]]
    queries: list[dict[str, Any]]

    def select(self, items: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
        return items if split == "all" else [i for i in items if i.get("split") == split]


def load_labels(path: Path) -> Labels:
    """Read and check a labels file: every id it names must be in its stores."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise LabelError(f"{path}: cannot read labels: {exc}") from exc
    stores = path.parent / str(data.get("stores", "stores"))
    if not stores.is_dir():
        raise LabelError(f"{path}: no stores directory {stores}")
    labels = Labels(
        path,
        stores,
        list(data.get("duplicates", [])),
        list(data.get("apart", [])),
        list(data.get("queries", [])),
    )
    known = {entry["id"] for entry, _ in _entries(stores)}
    for group, items in (("duplicates", labels.duplicates), ("apart", labels.apart)):
        for n, item in enumerate(items):
            for key in ("a", "b"):
                if item.get(key) not in known:
                    raise LabelError(
                        f"{path}: {group}[{n}].{key} = {item.get(key)!r} is in no store"
                    )
    for n, query in enumerate(labels.queries):
        missing = [i for i in query.get("relevant", []) if i not in known]
        if missing or not isinstance(query.get("text"), str):
            raise LabelError(f"{path}: queries[{n}] has no text or names unknown ids {missing}")
    return labels


def _entries(stores: Path) -> Iterator[tuple[dict[str, Any], str]]:
    for path in sorted(stores.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                yield json.loads(line), path.stem


@contextmanager
def merged_store(labels: Labels, config: KnowledgeConfig | None = None) -> Iterator[KnowledgeStore]:
    """Every entry of every store in one swarm store (in a temporary directory)."""
    with tempfile.TemporaryDirectory(prefix="swarmq-eval-") as tmp:
        root = Path(tmp)
        swarm = root / "project" / ".swarm"
        swarm.mkdir(parents=True)
        lines = []
        for entry, store in _entries(labels.stores):
            entry["project_name"] = store
            lines.append(dumps_js(entry))
        (swarm / "knowledge.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
        cfg = (config or KnowledgeConfig()).model_copy(update={"swarm_max_entries": None})
        yield KnowledgeStore(
            swarm,
            locks=LocalLocks(root / "locks"),
            config=cfg,
            data_dir=root / "data",
            project_name="eval",
        )


class _Groups:
    """Union-find over the entries that actions joined."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        while self.parent.get(x, x) != x:
            x = self.parent[x]
        return x

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


@dataclass
class ConsolidationFigures:
    split: str
    duplicates: dict[str, Counts] = field(default_factory=dict)
    """Per kind: tp = labelled duplicate merged, fn = left apart."""
    apart: dict[str, HitRate] = field(default_factory=dict)
    """Per kind: hits = pairs neither merged nor superseded (must be every one)."""
    actions: dict[str, int] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return sum(self.duplicates.values(), Counts()).recall

    @property
    def violations(self) -> int:
        total = sum(self.apart.values(), HitRate())
        return total.total - total.hits

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "duplicate_recall": round(self.recall, 4),
            "apart_violations": self.violations,
            "actions": self.actions,
            "duplicates": {k: v.as_dict() for k, v in sorted(self.duplicates.items())},
            "apart": {k: v.as_dict() for k, v in sorted(self.apart.items())},
            "misses": self.misses,
        }


def evaluate_consolidation(
    labels: Labels, split: str = "held", config: ConsolidationConfig | None = None
) -> ConsolidationFigures:
    """Plan a consolidation of the merged store (nothing written) and score it on the labels."""
    figures = ConsolidationFigures(split)
    with merged_store(labels) as knowledge:
        report = consolidate_tier(
            knowledge.swarm, config or ConsolidationConfig(), scope="eval", dry_run=True
        )
        lessons = {e.id: e.lesson for e in knowledge.swarm.read().entries}
    joined = _Groups()
    explain: dict[tuple[str, str], dict[str, Any]] = {}
    for action in report.plan.actions:
        figures.actions[action.kind.value] = figures.actions.get(action.kind.value, 0) + 1
        if action.kind is not ActionKind.LINK:
            joined.join(action.keep, action.other)
            explain[_key(action.keep, action.other)] = {
                "kind": action.kind.value,
                "reason": action.reason.value,
                "similarity": round(action.similarity, 4),
            }
    for item in labels.select(labels.duplicates, split):
        merged = joined.find(item["a"]) == joined.find(item["b"])
        figures.duplicates[item["kind"]] = figures.duplicates.get(item["kind"], Counts()) + (
            Counts(tp=1) if merged else Counts(fn=1)
        )
        if not merged:
            figures.misses.append(
                {
                    "label": "duplicate",
                    "kind": item["kind"],
                    "a": lessons[item["a"]],
                    "b": lessons[item["b"]],
                }
            )
    for item in labels.select(labels.apart, split):
        together = joined.find(item["a"]) == joined.find(item["b"])
        figures.apart[item["kind"]] = figures.apart.get(item["kind"], HitRate()) + HitRate(
            0 if together else 1, 1
        )
        if together:
            figures.misses.append(
                {
                    "label": "apart",
                    "kind": item["kind"],
                    "a": lessons[item["a"]],
                    "b": lessons[item["b"]],
                    "action": explain.get(_key(item["a"], item["b"])),
                }
            )
    return figures


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


@dataclass
class InjectionFigures:
    split: str
    top3: HitRate = field(default_factory=HitRate)
    """Queries with a relevant entry that got one in the first three injected."""
    abstain: HitRate = field(default_factory=HitRate)
    """Queries with nothing relevant that got nothing injected."""
    latency_ms: list[float] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self, verbose: bool = False) -> dict[str, Any]:
        ordered = sorted(self.latency_ms)
        out: dict[str, Any] = {
            "split": self.split,
            "top3": self.top3.as_dict(),
            "abstain": self.abstain.as_dict(),
            "p50_ms": round(ordered[len(ordered) // 2], 3) if ordered else None,
        }
        if verbose:
            out["details"] = self.details
        return out


def evaluate_injection(
    labels: Labels, split: str = "held", config: KnowledgeConfig | None = None
) -> InjectionFigures:
    """Inject (read-only) for every labelled query over the merged store, through the
    federated injection every entry point uses (the eval workspace has no other store)."""
    figures = InjectionFigures(split)
    with merged_store(labels, config) as knowledge:
        # the steady state a workspace reaches: the background catch-up has embedded every
        # entry (a slow model's queries embed only a few themselves)
        fill(knowledge)
        lessons = {e.id: e.lesson for e in knowledge.swarm.read().entries}
        for query in labels.select(labels.queries, split):
            started = time.perf_counter()
            stores = Stores(knowledge.swarm.files.knowledge.parent.parent, knowledge)
            fused = inject(stores, QueryContext(text=query["text"]), record_it=False).shown
            shown = [f.finding.ranked for f in fused if f.finding.ranked is not None]
            figures.latency_ms.append((time.perf_counter() - started) * 1000)
            ids = [r.entry.id for r in shown]
            relevant = set(query["relevant"])
            if relevant:
                hit = bool(relevant & set(ids[:TOP_K]))
                figures.top3 += HitRate(int(hit), 1)
            else:
                hit = not ids
                figures.abstain += HitRate(int(hit), 1)
            figures.details.append(
                {
                    "query": query["text"],
                    "ok": hit,
                    "relevant": len(relevant),
                    "shown": [
                        {
                            "id": r.entry.id[:8],
                            "score": round(r.score, 3),
                            "relevant": r.entry.id in relevant,
                            "lesson": lessons[r.entry.id][:90],
                        }
                        for r in shown
                    ],
                }
            )
    return figures


def evaluate_retrieval_modes(
    labels: Labels, split: str = "held", dense_model: DenseModel | None = None
) -> dict[str, InjectionFigures]:
    """Injection under the default (hybrid) retrieval and the lexical one, same queries;
    hybrid on ``dense_model`` when one is named, else on the default model."""
    model = dense_model or KnowledgeConfig().model
    return {
        mode.value: evaluate_injection(
            labels, split, KnowledgeConfig(retrieval=mode, dense_model=model)
        )
        for mode in (Retrieval.HYBRID, Retrieval.LEXICAL)
    }
