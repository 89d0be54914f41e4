"""Injection from every store judged leaving one workspace out, through the product's own
evaluation, with the learned relevance refitted per fold.

For every examined workspace of eval/knowledge/workspaces/queries.json the learned relevance is
fitted on the other workspaces' candidate rows (``fit_relevance.raw_model``: weights, and the
floor on their own leave-one-workspace-out predictions, simulated as this checkout's
``federated.inject.render`` shows records), put in place of ``federated.meaning.LEARNED`` for
the packaged WordLlama, and the left-out workspace's queries (tune and held) go through
``swarmq eval inject-every-store``'s evaluation with default settings. Run from two checkouts
(each with its own ``fit_relevance.py`` and ``swarmq``) on the same rows to compare a change
that has no parameter of its own, judged where no weight or floor was fitted.

    python eval/knowledge/relevance_features.py > rows.json
    python eval/knowledge/lowo_inject.py rows.json [VARIANT] > lowo.json

``VARIANT``: the learned relevance's features (``fit_relevance.SHIPPED`` unless given; ``min``
is the model without the rarity-weighted share; ``minilm`` fits it on MiniLM's cosines, rows
written with ``relevance_features.py --extra``, and injection then measures learnings and
patterns under the knowledge store's MiniLM, memory under MiniLM's floors of
``meaning.NOT_ADOPTED``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from fit_relevance import SHIPPED, raw_model  # this folder's sibling scripts
from folds import shipped_model_kept, workspace_folds

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated import meaning
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.knowledge.config import KnowledgeConfig

HERE = Path(__file__).parent


def main() -> None:
    rows: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    variant = sys.argv[2] if len(sys.argv) > 2 else SHIPPED
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    out: dict[str, Any] = {}
    model = meaning.MINILM if variant == "minilm" else meaning.WORDLLAMA
    floors = dict(meaning.DENSE_FLOORS)
    if model not in floors:
        meaning.DENSE_FLOORS[model] = meaning.NOT_ADOPTED[model]
    with shipped_model_kept():
        for name, one in workspace_folds(labels):
            fold = raw_model([q for q in rows if q["workspace"] != name], variant)
            meaning.LEARNED[model] = LearnedRelevance(**fold)
            result: dict[str, Any] = {"floor": round(fold["floor"], 4)}
            for split in ("tune", "held"):
                if not one.select(split):
                    continue
                got = evaluate_cross_store(one, split, KnowledgeConfig())
                result[split] = [got.top3.as_dict(), got.abstain.as_dict()]
            out[name] = result
            print(name, json.dumps(result), file=sys.stderr)
    meaning.DENSE_FLOORS.clear()
    meaning.DENSE_FLOORS.update(floors)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
