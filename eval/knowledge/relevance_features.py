"""Collect, for every labelled cross-store query, every candidate record every store offers
under relaxed flywheel and memory floors, with the per-candidate measures a learned relevance
can weigh, and what today's injection shows (for the comparison).

The candidates are the fused answer of ``federated.search.ask`` with the flywheel's and
memory's share floors at 0 (every learning, pattern and memory line memory search finds is
a candidate; the knowledge store keeps its own floors), so the rows are what a model deciding
"which of these, if any" would see at injection time. Measured per candidate (its standing
finding and the members of its fact): word share of the task's content words, the cosine of
its text and of its title under the flywheel's model (packaged WordLlama), its length, its
store kind, its rank in its store and overall, its share of the task's words weighted by their
rarity among the workspace's learnings and patterns, and the same measures relative to the query's
other candidates. Nothing is written to the workspaces (each is copied first).

    python eval/knowledge/relevance_features.py [--extra] > /tmp/rows.json

With ``--extra``, every row also carries its text's and title's cosine under the packaged MiniLM
(``lcos``, ``ltcos``) and the multilingual model (``mcos``, ``mtcos``), which
``fit_relevance.py``'s dense variants read (minutes: the multilingual model embeds each long
text in about 0.2 s).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from swarmq.eval.cross_store import (
    TOP_K,
    label_of,
    load_cross_store_labels,
    workspace_stores,
)
from swarmq.federated.finding import Fused, Store
from swarmq.federated.inject import _shown_safely, prepare, record_lines
from swarmq.federated.search import _meaning, ask, injection_floors
from swarmq.federated.stores import Floors
from swarmq.flywheel.artifacts import learning_files
from swarmq.flywheel.lookup import LookupHit, _parsed, meaning_text, rare_share, rarity, words
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.query import QueryContext
from swarmq.knowledge.render import (
    ACK_HINT,
    CLOSE_TAG,
    MIN_CLIPPED_DISPLAY,
    OPEN_TAG,
    lines_size,
)

HERE = Path(__file__).parent
EXAMINED = (
    "chromatic-harness",
    "clai",
    "clipsanitizer",
    "fixflags",
    "intel-force",
    "kamra",
    "line-stamp",
    "product-template",
    "sequencetree4",
    "x-cartographer",
    "yosi-swarm",
)
"""The workspaces the model is fitted and judged on: the examined ones (tune and held, all read;
the last four added were read once blind, docs/QUALITY.md "Issue 26: the four new held
workspaces, read once"). Any other workspace of the labels file is held apart and never read
here."""
LIMIT = 12
"""Candidates each store offers (the fused list is cut to this too; injection's own limit is
its budget's entry count, 5 by default)."""


EXTRA: list[Any] = []
"""Further models whose cosines each row carries (``--extra``), beside the flywheel's."""
COLUMN = {"use-multilingual-v3": "m", "all-minilm-l6-v2-onnx-int8-dynamic": "l"}
"""The column prefix of each further model's cosines (``mcos``/``mtcos``, ``lcos``/``ltcos``)."""


def _kind(store: Store) -> str:
    if store in (Store.SWARM, Store.HIVE):
        return "knowledge"
    if store in (Store.LEARNING, Store.PATTERN):
        return "flywheel"
    if store == Store.CANDIDATE:
        return "candidate"
    return "memory"


def _entry(hit: LookupHit) -> tuple[str, str, str, frozenset[str], str] | None:
    """A learning's or pattern's entry as ``lookup`` parsed it (id, title, body, content words,
    meaning text)."""
    parsed = _parsed(Path(hit.path))
    if parsed is None or hit.kind == "candidate":
        return None
    return next((e for e in parsed.entries if e[0] == hit.id), None)


def _corpus(stores: Any) -> list[frozenset[str]]:
    """Every learning's and pattern's content words, as ``lookup`` reads them (what
    ``rarity`` counts)."""
    layout = stores.agents
    if layout is None or not layout.root.is_dir():
        return []
    out: list[frozenset[str]] = []
    for path in learning_files(layout.learnings, layout.patterns):
        parsed = _parsed(path)
        if parsed is not None:
            out.extend(entry[3] for entry in parsed.entries)
    return out


def _rows(
    fused: list[Fused],
    query: str,
    meaning: Any,
    root: Path,
    display: int,
    corpus: list[frozenset[str]],
) -> list[dict[str, Any]]:
    wanted = words(query)
    weights = rarity(wanted, corpus)
    texts: list[str] = []
    titles: list[str] = []
    found_words: list[frozenset[str]] = []
    for item in fused:
        f = item.finding
        entry = _entry(f.hit) if f.hit is not None else None
        if entry is not None:  # measured exactly as flywheel.lookup measures it
            _, title, _, searchable, meaning_of = entry
            texts.append(meaning_of)
            titles.append(title)
            found_words.append(searchable)
        else:
            title = f.hit.title if f.hit is not None else ""
            texts.append(meaning_text(title, f.text) if f.hit is not None else f.text)
            titles.append(title)
            found_words.append(frozenset(words(f"{title}\n{f.text}")))
    cos = meaning.cosines(texts) if meaning is not None else [0.0] * len(texts)
    named = [i for i, t in enumerate(titles) if t.strip()]
    tcos_values = meaning.cosines([titles[i] for i in named]) if meaning is not None else []
    tcos = dict(zip(named, tcos_values, strict=True))
    extra = {}
    for model in EXTRA:
        vector = model.embed([query])[0]
        body = model.embed(texts) @ vector if texts else []
        head = model.embed([titles[i] for i in named]) @ vector if named else []
        extra[model.name] = (body, dict(zip(named, head, strict=True)))
    rows = []
    for position, item in enumerate(fused):
        f = item.finding
        found = found_words[position]
        share = len(wanted & found) / len(wanted) if wanted else 0.0
        rows.append(
            {
                "labels": sorted(label_of(m, root) for m in item.members),
                "store": f.store.value,
                "kind": _kind(f.store),
                "kinds": sorted({_kind(m.store) for m in item.members}),
                "forced": any(m.forced for m in item.members),
                "share": share,
                "rare": rare_share(weights, found),
                "cos": cos[position],
                "tcos": tcos.get(position),
                "relevance": f.relevance,
                "words": len(found),
                "rank": min(m.rank for m in item.members),
                "position": position + 1,
                "rrf": item.score,
                "utility": f.hit.utility if f.hit is not None else None,
                "qwords": len(wanted),
                "text": " ".join(f.text.split())[:80],
                "cost": lines_size(record_lines(item, display, with_also=False)),
                "least_cost": lines_size(record_lines(item, MIN_CLIPPED_DISPLAY, with_also=False)),
                "safe": _shown_safely(f),
                **{
                    f"{COLUMN[name]}cos": float(body[position]) for name, (body, _) in extra.items()
                },
                **{
                    f"{COLUMN[name]}tcos": (float(head[position]) if position in head else None)
                    for name, (_, head) in extra.items()
                },
            }
        )
    return rows


def candidate_rows(
    stores: Any, text: str, config: KnowledgeConfig, corpus: list[frozenset[str]]
) -> list[dict[str, Any]]:
    """Every record every store offers ``text`` under relaxed flywheel and memory floors, as
    rows of measures (:func:`_rows`)."""
    relaxed = Floors(flywheel=0.0, memory=0.0)
    fused = ask(stores, QueryContext(text=text), limit=LIMIT, floors=relaxed)
    meaning = _meaning(stores, text, relaxed)
    return _rows(fused, text, meaning, stores.workspace, config.max_lesson_display_chars, corpus)


def main() -> None:
    if "--extra" in sys.argv[1:]:
        from swarmq.similarity.multilingual import multilingual_embedder
        from swarmq.similarity.packaged import packaged_embedder

        EXTRA.extend([multilingual_embedder(), packaged_embedder("minilm")])
    labels = load_cross_store_labels(HERE / "workspaces" / "queries.json")
    config = KnowledgeConfig()
    today = replace(injection_floors(config), learned=False)  # the floors alone
    out: list[dict[str, Any]] = []
    for name, workspace in sorted(labels.workspaces.items()):
        if name not in EXAMINED:
            continue
        queries = [q for q in labels.queries if q["workspace"] == name]
        with workspace_stores(workspace, config) as stores:
            for query in queries:
                context = QueryContext(text=query["text"])
                prepared = prepare(stores, context, floors=today)
                shown = prepared.shown
                admitted = {
                    label_of(m, stores.workspace) for f in prepared.candidates for m in f.members
                }
                relevant = set(query.get("relevant", []))
                rows = candidate_rows(stores, query["text"], config, _corpus(stores))
                budget = prepared.budget
                header = [OPEN_TAG, f"trace_id: {prepared.trace_id}", ACK_HINT]
                for row in rows:
                    row["relevant"] = bool(relevant & set(row["labels"]))
                    row["admitted_today"] = bool(admitted & set(row["labels"]))
                today_top = [
                    sorted(label_of(m, stores.workspace) for m in f.members) for f in shown[:TOP_K]
                ]
                out.append(
                    {
                        "workspace": name,
                        "split": query["split"],
                        "text": query["text"],
                        "has_relevant": bool(relevant),
                        "today_shown": len(shown),
                        "today_ok": (
                            any(relevant & set(labs) for labs in today_top)
                            if relevant
                            else not shown
                        ),
                        "candidates": rows,
                        "max_entries": budget.max_entries,
                        "max_chars": budget.max_chars,
                        "empty": lines_size(header) + len(CLOSE_TAG),
                    }
                )
                print(name, query["split"], len(rows), file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
