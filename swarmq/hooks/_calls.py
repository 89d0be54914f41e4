"""The two knowledge calls the hooks make besides ``inject``: the session-start facts and the
failure recall (``swarmq.knowledge.facts.session_start``, ``swarmq.knowledge.recall
.recall_error``), looked up when first used so a hook server runs (silent for those two) on a
tree where they are not present yet."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import cast

from swarmq.knowledge.inject import Injection
from swarmq.knowledge.project import KnowledgeStore


def _function(module: str, name: str) -> Callable[..., Injection] | None:
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return cast(Callable[..., Injection], found)


def session_start(knowledge: KnowledgeStore, *, session_id: str | None) -> Injection | None:
    call = _function("swarmq.knowledge.facts", "session_start")
    if call is None:
        return None
    return call(knowledge, session_id=session_id, record=True)


def recall_error(
    knowledge: KnowledgeStore, text: str, *, session_id: str | None
) -> Injection | None:
    call = _function("swarmq.knowledge.recall", "recall_error")
    if call is None:
        return None
    return call(knowledge, text, session_id=session_id, record=True)
