"""The learned relevance judged leaving one workspace out through the product's own injection.

For every examined workspace of eval/knowledge/workspaces/queries.json (``EXAMINED``; any
other is held apart and never read), the model is fitted
(``fit_relevance.py``: weights on the other workspaces' candidate rows, the floor on their own
leave-one-workspace-out predictions), put in place of ``federated.meaning.LEARNED`` for the
packaged WordLlama, and the left-out workspace's queries (tune and held: both are examined) go
through ``swarmq eval inject-every-store``'s evaluation, ``federated.inject.prepare`` with
default settings; beside it, the same queries under the floors alone (``Floors.learned``
off: the rule before the model). So the figures are the injection's own, budget and fusion
included, not a simulation of them.

    python eval/knowledge/relevance_features.py > rows.json
    python eval/knowledge/lowo_relevance.py rows.json
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from fit_relevance import raw_model  # this folder's sibling scripts
from folds import shipped_model_kept, workspace_folds

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated import meaning, search
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.knowledge.config import KnowledgeConfig

HERE = Path(__file__).parent


def main() -> None:
    rows: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig()
    floors_only = replace(search.injection_floors(config), learned=False)
    out: dict[str, Any] = {}
    with shipped_model_kept():
        for name, one in workspace_folds(labels):
            train = [q for q in rows if q["workspace"] != name]
            model = LearnedRelevance(**raw_model(train))
            meaning.LEARNED[meaning.WORDLLAMA] = model
            result: dict[str, Any] = {"model": [round(v, 4) for v in _values(model)]}
            for split in ("tune", "held"):
                if not one.select(split):
                    continue
                learned = evaluate_cross_store(one, split, config)
                before = evaluate_cross_store(one, split, config, floors_only)
                result[split] = {
                    "floors": [before.top3.as_dict(), before.abstain.as_dict()],
                    "learned": [learned.top3.as_dict(), learned.abstain.as_dict()],
                }
            out[name] = result
            print(name, json.dumps(result), file=sys.stderr)
    print(json.dumps(out, indent=1))


def _values(model: LearnedRelevance) -> tuple[float, ...]:
    return (model.intercept, model.share, model.cosine, model.title, model.floor, model.rare)


if __name__ == "__main__":
    main()
