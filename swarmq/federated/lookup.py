"""``lookup`` over every store: the fused answer, and the flywheel artifacts behind it cited.

Looking is not confirming: the default citation is ``retrieved`` (exposure, which moves σ and
never promotes a candidate); only a type the caller chooses (``--cite-as helpful|applied|
reference``) confirms, as ``swarmq.flywheel.lookup`` always did. Only flywheel artifacts are
cited (a learning or candidate found, or the one a bridged knowledge entry came from); a
knowledge entry's counters and a memory note are left as they are.
"""

from __future__ import annotations

from swarmq.federated.finding import LOOKUP_PREFERENCE, Fused
from swarmq.federated.inject import cite_flywheel
from swarmq.federated.search import ask
from swarmq.federated.stores import Stores
from swarmq.flywheel.citations import CitationType
from swarmq.knowledge.query import QueryContext


def lookup(
    stores: Stores,
    query: str,
    *,
    session_id: str,
    limit: int = 10,
    cite: bool = True,
    citation_type: str = CitationType.RETRIEVED,
    agent_id: str | None = None,
    include_pool: bool = True,
) -> tuple[list[Fused], int]:
    """The fused answer for ``query`` and how many citations were recorded."""
    if citation_type not in CitationType.ALL:
        raise ValueError(
            f"unknown citation type {citation_type!r}; one of {sorted(CitationType.ALL)}"
        )
    found = ask(
        stores,
        QueryContext(text=query),
        limit=limit,
        include_pool=include_pool,
        prefer=LOOKUP_PREFERENCE,
    )
    cited = 0
    if cite and found:
        cited = cite_flywheel(
            stores, found, session_id, citation_type, query=query, agent_id=agent_id
        )
    return found, cited
