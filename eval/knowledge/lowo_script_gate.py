"""The non-Latin term gate (``KnowledgeConfig.non_latin_needs_term``) judged leaving one
workspace out, with the learned relevance refitted per fold as its own run does.

For every examined workspace of eval/knowledge/workspaces/queries.json, the learned relevance
is fitted on the other workspaces' candidate rows (``fit_relevance.raw_model``: weights, and
the floor on their own leave-one-workspace-out predictions), put in place of
``federated.meaning.LEARNED`` for the packaged WordLlama, and the left-out workspace's queries
(tune and held) go through ``swarmq eval inject-every-store``'s evaluation with default
settings: once with the gate off (rows collected with it off: today's rule) and once with it on
(rows collected with it on). The gate itself has no parameter to fit; the folds refit only the
learned relevance, so both columns are judged where their weights were not fitted.

    python eval/knowledge/relevance_features.py > rows-on.json          # this branch
    python eval/knowledge/relevance_features.py > rows-off.json         # gate off (main)
    python eval/knowledge/lowo_script_gate.py rows-off.json rows-on.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from fit_relevance import raw_model  # this folder's sibling scripts
from folds import shipped_model_kept, workspace_folds

from swarmq.eval.cross_store import evaluate_cross_store, load_cross_store_labels
from swarmq.federated import meaning
from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.knowledge.config import KnowledgeConfig

HERE = Path(__file__).parent


def main() -> None:
    off_rows: list[dict[str, Any]] = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    on_rows: list[dict[str, Any]] = json.loads(Path(sys.argv[2]).read_text("utf-8"))
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    out: dict[str, Any] = {}
    with shipped_model_kept():
        for name, one in workspace_folds(labels):
            result: dict[str, Any] = {}
            for label, rows, gate in (("today", off_rows, False), ("gate", on_rows, True)):
                train = [q for q in rows if q["workspace"] != name]
                meaning.LEARNED[meaning.WORDLLAMA] = LearnedRelevance(**raw_model(train))
                config = KnowledgeConfig(non_latin_needs_term=gate)
                for split in ("tune", "held"):
                    if not one.select(split):
                        continue
                    got = evaluate_cross_store(one, split, config)
                    result.setdefault(split, {})[label] = [
                        got.top3.as_dict(),
                        got.abstain.as_dict(),
                    ]
            out[name] = result
            print(name, json.dumps(result), file=sys.stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
