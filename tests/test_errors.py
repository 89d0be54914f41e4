"""The one error family: every area's root sits under SwarmqError, each in the right family."""

from __future__ import annotations

import pytest

from swarmq.api.app import FAMILY_STATUS
from swarmq.client import DispatchError
from swarmq.completion.port import CompletionError
from swarmq.coord.connection import RedisUnavailable
from swarmq.coord.quota_types import QuotaError
from swarmq.errors import Conflict, InvalidInput, NotFound, SwarmqError, Unavailable
from swarmq.knowledge.errors import (
    EntryNotFound,
    InvalidEntry,
    KnowledgeError,
    RevisionConflict,
)
from swarmq.llm.errors import AttemptError, LLMConfigError
from swarmq.missions.dispatch import MissionConflict
from swarmq.missions.ledger import LedgerCorrupt, MissionNotFound
from swarmq.missions.states import TransitionError
from swarmq.profiles.access import MemoryRequestError
from swarmq.profiles.search import SearchError
from swarmq.roster.loader import RosterError
from swarmq.storage.locking import CommitUnconfirmed, LockError
from swarmq.storage.paths import UnsafePathError


@pytest.mark.parametrize(
    "root",
    [
        KnowledgeError,
        LockError,
        QuotaError,
        RosterError,
        AttemptError,
        LLMConfigError,
        CompletionError,
        DispatchError,
        RedisUnavailable,
    ],
)
def test_every_area_root_is_a_swarmq_error(root: type[Exception]) -> None:
    assert issubclass(root, SwarmqError)


def _status(exc: type[Exception]) -> int:
    """What the API answers: the first family in the MRO, as Starlette looks handlers up."""
    return next(FAMILY_STATUS[c] for c in exc.__mro__ if c in FAMILY_STATUS)  # type: ignore[index]


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (UnsafePathError, 400),
        (MemoryRequestError, 400),
        (SearchError, 400),
        (InvalidEntry, 400),
        (TransitionError, 409),
        (MissionConflict, 409),
        (CommitUnconfirmed, 409),
        (RevisionConflict, 409),
        (MissionNotFound, 404),
        (EntryNotFound, 404),
        (LedgerCorrupt, 503),
        (DispatchError, 503),
        (LockError, 503),
        (RedisUnavailable, 503),
    ],
)
def test_api_status_per_family(exc: type[Exception], status: int) -> None:
    assert _status(exc) == status


def test_families_keep_the_builtin_bases_callers_catch() -> None:
    # Code that caught ValueError / LookupError / KeyError / RuntimeError still catches these.
    assert issubclass(InvalidInput, ValueError) and issubclass(NotFound, LookupError)
    assert issubclass(EntryNotFound, KeyError) and issubclass(TransitionError, ValueError)
    assert issubclass(LockError, RuntimeError) and not issubclass(Unavailable, ValueError)
    assert not issubclass(Conflict, Unavailable)


INTERNAL: dict[str, str] = {
    "swarmq.curation._reply.ReplyRejected": "a model reply refused; enrich records it, never raises it",
    "swarmq.forge.llm.InvalidReply": "a model reply refused; llm_candidates records it",
    "swarmq.missions.claim.ClaimRefused": "a speculative start the runner declines and logs",
    "swarmq.roster._yamlsafe.YamlLimit": "a YAML error the loader turns into a RosterError",
    "swarmq.skills.improver.InventoryFailed": "reported in the ImproveReport, never raised out",
    "swarmq.tasks.missions.MissionFailed": "ends a Celery task as FAILURE inside the worker",
    "swarmq.workers.base.DeadLettered": "ends a Celery task whose message went to dead letters",
    "swarmq.workers.restart_watch.BrokerRestarted": (
        "raised on a worker's event loop so Celery reconnects its consumer; never leaves it"
    ),
}
"""Exception classes that never leave swarmq to a caller: each is caught where it is raised or
ends a Celery task inside the worker. A private class (``_Name``) is internal by its name."""


def _exception_classes() -> dict[str, type[BaseException]]:
    import importlib
    import inspect
    import pkgutil

    import swarmq

    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(swarmq.__path__, "swarmq."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not name.startswith("_")
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_a_caller_can_meet_is_a_swarmq_error() -> None:
    classes = _exception_classes()
    outside = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, SwarmqError) and name not in INTERNAL
    )
    assert outside == [], "put each under a family of swarmq.errors, or in INTERNAL with a reason"
    assert set(INTERNAL) <= set(classes), "an INTERNAL entry names a class that is gone"
