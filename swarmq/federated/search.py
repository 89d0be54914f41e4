"""Ask every store one question and answer with one fused list (nothing is recorded)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from swarmq.federated.finding import PREFERENCE, Fused, Store
from swarmq.federated.fuse import fuse
from swarmq.federated.stores import (
    Floors,
    Stores,
    ask_flywheel,
    ask_knowledge,
    ask_memory,
)
from swarmq.knowledge.config import KnowledgeConfig
from swarmq.knowledge.query import QueryContext

if TYPE_CHECKING:
    from swarmq.federated.meaning import Meaning


FLYWHEEL_SHARE = 0.45
"""The least word share a learning or pattern needs to be injected: above the knowledge
store's floor because a learning file is long and topical (a dozen headings, file names and
the words of its whole story), so two of a five-word task's words turn up in unrelated ones
(a publishing-workflow fix met a learning on accuracy tracking at 2/5). Chosen leaving one
workspace out (eval/knowledge/calibrate_flywheel.py; docs/QUALITY.md, "Issue 26: more
workspaces with learnings")."""


def injection_floors(config: KnowledgeConfig) -> Floors:
    """Injection holds the flywheel and memory to the knowledge store's own lexical floor, so
    a task nothing is relevant to stays silent in every store, not only in ``.swarm/``; the
    flywheel at least to :data:`FLYWHEEL_SHARE`. Under hybrid retrieval, learnings and
    patterns are admitted and ranked by their learned relevance where the meaning's model has
    one (``Floors.learned``; docs/QUALITY.md, "Issue 26: a learned relevance for learnings and
    patterns")."""
    floor = max(Floors().flywheel, config.inject_min_relevance)
    return Floors(flywheel=max(floor, FLYWHEEL_SHARE), memory=floor, learned=True)


def _meaning(stores: Stores, text: str, floors: Floors) -> Meaning | None:
    """The query's meaning when the workspace ranks by it (hybrid retrieval) and a store that
    matches on words is there to use it: under the knowledge store's model when its floors for
    these stores are set (or given), else under the packaged WordLlama, whose floors are
    (MiniLM, the default where installed, has none in use: a cosine floor set on one model's
    scale means nothing on another's, and MiniLM's own, calibrated, rank worse on the held split
    and would cost a fresh process seconds: ``meaning.NOT_ADOPTED``)."""
    knowledge = stores.knowledge
    if knowledge is None or (stores.agents is None and stores.memory is None):
        return None
    embedder = knowledge.embedder
    if embedder is None:
        return None
    from swarmq.federated.meaning import (  # numpy: hybrid only
        DENSE_FLOORS,
        WORDLLAMA,
        packaged_meaning,
        query_meaning,
    )

    if floors.dense is None and embedder.name not in DENSE_FLOORS:
        from swarmq.similarity.packaged import packaged_embedder

        # loaded, like the query's vector, only once a record is measured against it
        return packaged_meaning(WORDLLAMA, lambda: packaged_embedder("wordllama"), text)
    return query_meaning(embedder, text, floors.dense)


def ask(
    stores: Stores,
    context: QueryContext,
    *,
    limit: int,
    floors: Floors | None = None,
    include_pool: bool = True,
    prefer: Sequence[Store] = PREFERENCE,
) -> list[Fused]:
    """The ``limit`` best facts for ``context`` from every store, one result per fact (every
    forced directive kept, as the knowledge store keeps them)."""
    floors = floors or Floors()
    meaning = _meaning(stores, context.text, floors)
    learned = None
    if floors.learned and meaning is not None:
        from swarmq.federated.meaning import learned_relevance  # numpy: hybrid only

        learned = learned_relevance(meaning)
    answers = [
        ask_knowledge(stores, context, limit),
        ask_flywheel(
            stores,
            context.text,
            limit,
            floors.flywheel,
            include_pool=include_pool,
            meaning=meaning,
            learned=learned,
        ),
        ask_memory(stores, context.text, limit, floors.memory, meaning=meaning),
    ]
    threshold = stores.knowledge.config.dedup_threshold if stores.knowledge is not None else 0.6
    fused = fuse(answers, dedup_threshold=threshold, prefer=prefer)
    forced = sum(1 for f in fused if any(m.forced for m in f.members))
    return fused[: max(limit, forced)]
