"""The beat's schedule: the roster's ``schedule:`` entries plus the jobs a deployed swarm needs
without anyone writing them.

One default so far: ``maturity.embed`` when hybrid retrieval's model leaves entry vectors to the
background. MiniLM (``knowledge.dense_model: auto`` where its packages are installed) embeds an
entry in ~28 ms of CPU, so a query embeds at most a few entries itself and ranks a backlog by its
words alone; an endpoint (``llm.embedding_model``) costs a request per batch. Without a filler
on the beat, a swarm whose operator never ran ``swarmq knowledge embed`` and whose agents use no
hook server would rank by words for ever. WordLlama embeds a 20k-entry store inline in about a
second, so nothing is scheduled for it.

A default is left out when the roster schedules the same task itself (its cadence wins), when
``knowledge.embed_every_seconds`` is 0, or when no worker consumes the task's queue (messages
would only pile up in the broker; ``swarmq roster validate`` warns about the queue anyway).
"""

from __future__ import annotations

from swarmq.knowledge.config import DenseModel, Retrieval
from swarmq.names import MATURITY_EMBED
from swarmq.roster.schema import Roster, ScheduleEntry

EMBED_ENTRY = MATURITY_EMBED
"""The default entry's name (the task's own, as the ``schedule:`` shorthand names entries)."""


def fills_vectors(roster: Roster) -> bool:
    """Whether hybrid retrieval's model leaves entry vectors to a background fill."""
    knowledge = roster.knowledge
    if not knowledge.enabled or knowledge.retrieval != Retrieval.HYBRID:
        return False
    return bool(roster.llm.embedding_model) or knowledge.model == DenseModel.MINILM


def default_schedule(roster: Roster) -> dict[str, ScheduleEntry]:
    """The default entries this roster gets (none it already schedules itself)."""
    out: dict[str, ScheduleEntry] = {}
    every = roster.knowledge.embed_every_seconds
    if every > 0 and fills_vectors(roster) and _unscheduled(roster, MATURITY_EMBED):
        consumed = {q for w in roster.workers for q in w.all_queues()}
        if "maturity" in consumed:
            out[EMBED_ENTRY] = ScheduleEntry(task=MATURITY_EMBED, every=every)
    return out


def effective_schedule(roster: Roster) -> dict[str, ScheduleEntry]:
    """What the beat runs: the roster's entries, then the defaults it does not replace."""
    return {**default_schedule(roster), **roster.schedule}


def _unscheduled(roster: Roster, task: str) -> bool:
    return all(entry.task != task for entry in roster.schedule.values())
