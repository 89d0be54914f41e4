"""Why injection misses, leaving one workspace out: every task with a relevant record that
``lowo_inject.py`` scores as a miss, with its cause.

The same folds as ``lowo_inject.py`` (the learned relevance fitted and floored on the other
workspaces' rows, put in place for the packaged WordLlama); each missed task is then asked
again with that fold's model and no floor (every learning and pattern admitted, ranked by the
model; the knowledge store and memory keep their own floors) and the relevant record is
looked for in the wide answer. Causes, first that applies:

- ``not a candidate (its store)``: no store returns the relevant record even with the learned floor off
  (a knowledge entry under its store's lexical and dense floors, a memory note under memory's,
  a pool candidate without the share of words it needs);
- ``under the floor, first in its store``: a learning or pattern the model ranks first of its
  store, under the fold's floor (the floor alone cuts it);
- ``under the floor, 2nd-3rd in its store`` / ``under the floor, 4th+ in its store``: it is
  also outranked by other records of its store;
- ``admitted, ranked 4th+``: admitted, but three records (of any store) fuse ahead of it;
- ``admitted, not rendered``: admitted and in the first three fused, but the block's budget
  left it out.

    python eval/knowledge/relevance_features.py > rows.json
    python eval/knowledge/lowo_misses.py rows.json [VARIANT] > misses.json

``VARIANT`` as for ``lowo_inject.py``.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from fit_relevance import SHIPPED, raw_model  # this folder's sibling scripts
from folds import shipped_model_kept, workspace_folds

from swarmq.eval.cross_store import (
    TOP_K,
    Workspace,
    label_of,
    load_cross_store_labels,
    workspace_stores,
)
from swarmq.federated import meaning
from swarmq.federated.finding import Fused
from swarmq.federated.inject import prepare
from swarmq.federated.search import ask, injection_floors
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.query import QueryContext

HERE = Path(__file__).parent
WIDE = 200
"""Records the wide answer keeps (every learning of the largest examined workspace)."""


def _labels(item: Fused, root: Path) -> set[str]:
    return {label_of(m, root) for m in item.members}


def _cause(
    query: dict[str, Any], stores: Any, fold: dict[str, float], workspace: Workspace
) -> dict[str, Any]:
    config = KnowledgeConfig()
    relevant = set(query["relevant"])
    root = stores.workspace
    context = QueryContext(text=query["text"])
    prepared = prepare(stores, context)
    shown = [sorted(_labels(f, root)) for f in prepared.shown]
    admitted = [i for i, f in enumerate(prepared.candidates) if _labels(f, root) & relevant]
    floor = fold["floor"]
    meaning.LEARNED[meaning.WORDLLAMA] = LearnedRelevance(**{**fold, "floor": 0.0})
    try:
        wide = ask(stores, context, limit=WIDE, floors=injection_floors(config))
    finally:
        meaning.LEARNED[meaning.WORDLLAMA] = LearnedRelevance(**fold)
    found = [(i, f) for i, f in enumerate(wide) if _labels(f, root) & relevant]
    out: dict[str, Any] = {
        "workspace": query["workspace"],
        "split": query["split"],
        "text": query["text"],
        "relevant": sorted(relevant),
        "shown": shown,
        "floor": round(floor, 4),
    }
    if admitted:
        at = admitted[0]
        out["position"] = at + 1
        out["cause"] = "admitted, ranked 4th+" if at >= TOP_K else "admitted, not rendered"
        return out
    if not found:
        kinds = sorted({workspace.kind(label).value for label in relevant})
        out["cause"] = f"not a candidate ({', '.join(kinds)})"
        return out
    at, item = found[0]
    finding = next(m for m in item.members if label_of(m, root) in relevant)
    out["store"] = finding.store.value
    out["probability"] = round(finding.relevance, 4)
    out["store_rank"] = finding.rank
    out["position"] = at + 1
    if finding.store.value not in ("learning", "pattern"):
        out["cause"] = f"{finding.store.value}: found wide, not at injection"
    elif finding.rank == 1:
        out["cause"] = "under the floor, first in its store"
    elif finding.rank <= TOP_K:
        out["cause"] = "under the floor, 2nd-3rd in its store"
    else:
        out["cause"] = "under the floor, 4th+ in its store"
    return out


def main() -> None:
    rows: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    variant = sys.argv[2] if len(sys.argv) > 2 else SHIPPED
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig()
    misses: list[dict[str, Any]] = []
    with shipped_model_kept():
        for name, one in workspace_folds(labels):
            fold = raw_model([q for q in rows if q["workspace"] != name], variant)
            meaning.LEARNED[meaning.WORDLLAMA] = LearnedRelevance(**fold)
            with workspace_stores(one.workspaces[name], config) as stores:
                for query in one.queries:
                    if not query.get("relevant"):
                        continue
                    shown = prepare(stores, QueryContext(text=query["text"])).shown
                    top = set().union(*(_labels(f, stores.workspace) for f in shown[:TOP_K]))
                    if top & set(query["relevant"]):
                        continue
                    miss = _cause(query, stores, fold, one.workspaces[name])
                    misses.append(miss)
                    print(name, miss["cause"], query["text"][:60], file=sys.stderr)
    counts = Counter(m["cause"] for m in misses)
    print(json.dumps({"by_cause": dict(counts.most_common()), "misses": misses}, indent=1))


if __name__ == "__main__":
    main()
