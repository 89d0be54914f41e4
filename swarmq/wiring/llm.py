"""Builds the curator and skill jobs' collaborators from a roster and a cluster.

Shared by the Celery tasks and the CLI (which may run a job in-process), so both use the same
provider, quota gate, rate limit and ledger. This module imports no Celery: importing it from
the CLI starts nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from swarmq.completion.port import NO_PROVIDER
from swarmq.coord.cluster import Cluster
from swarmq.coord.quota_types import QuotaError
from swarmq.coord.ratelimit import RequestRateLimiter
from swarmq.curation.enrich import Enricher
from swarmq.curation.state import EnrichmentState
from swarmq.llm.errors import LLMConfigError
from swarmq.llm.factory import build_provider
from swarmq.llm.ledger import LLMLedger
from swarmq.llm.metered import MeteredCompleter, RetryPolicy
from swarmq.names import ENRICHMENT_QUOTA, IMPROVER_QUOTA
from swarmq.roster.schema import Roster
from swarmq.skills.compiler import CompilerSettings, SkillCompiler
from swarmq.skills.improver import SkillImprover
from swarmq.skills.layout import SkillLayout
from swarmq.skills.publish import SkillPublisher
from swarmq.storage.locking import StoreLocks
from swarmq.wiring.knowledge import knowledge_store


@dataclass
class CompleterChoice:
    completer: MeteredCompleter | None
    reason: str
    """Why there is no completer (empty when there is one)."""


def completer_for(
    roster: Roster,
    cluster: Cluster | None,
    quota: str,
    *,
    task_id: str | None,
    max_attempts: int | None = None,
) -> CompleterChoice:
    """The metered provider of ``roster.llm`` for ``quota``, or why there is none."""
    try:
        provider = build_provider(roster.llm)
    except LLMConfigError as exc:
        return CompleterChoice(None, str(exc))
    if provider is None:
        return CompleterChoice(None, NO_PROVIDER)
    if cluster is None:
        provider.close()
        return CompleterChoice(
            None, f"Redis at {roster.redis_url} is unreachable: the quota gate fails closed"
        )
    limiter = None
    if roster.llm.requests_per_minute:
        limiter = RequestRateLimiter(
            cluster.client,
            roster.swarm,
            provider.rate_key,
            roster.llm.requests_per_minute,
            url=roster.redis_url,
        )
    retries = (
        roster.llm.max_retries
        if max_attempts is None
        else min(roster.llm.max_retries, max_attempts - 1)
    )
    return CompleterChoice(
        MeteredCompleter(
            provider,
            quota=quota,
            gate=cluster.gate,
            ledger=LLMLedger.in_runtime(roster.runtime_dir),
            limiter=limiter,
            retry=RetryPolicy(max_retries=retries),
            quota_errors=(QuotaError,),
            task_id=task_id,
            context_tokens=roster.llm.context_tokens,
            reply_tokens=roster.llm.reply_tokens,
        ),
        "",
    )


def allow_fallback(roster: Roster, override: bool | None) -> bool:
    return roster.llm.allow_deterministic_fallback if override is None else override


def compiler_for(roster: Roster, locks: StoreLocks) -> SkillCompiler:
    cfg = roster.curator
    settings = CompilerSettings(
        cfg.min_skill_confidence, cfg.min_skill_confirmations, cfg.skill_similarity_threshold
    )
    layout = SkillLayout(roster.workspace_dir)
    publisher = SkillPublisher(layout, roster.skills.agent_dirs, link=roster.skills.link)
    return SkillCompiler(
        layout, locks, knowledge_store(roster, locks).tiers, settings, publisher=publisher
    )


def enricher_for(
    roster: Roster,
    locks: StoreLocks,
    cluster: Cluster | None,
    *,
    task_id: str | None,
    max_batches: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> Enricher:
    cfg = roster.curator
    choice = completer_for(roster, cluster, ENRICHMENT_QUOTA, task_id=task_id)
    knowledge = knowledge_store(roster, locks)
    state = EnrichmentState(roster.swarm_dir / "curator" / "enrichment-state.json")
    return Enricher(
        knowledge.swarm,
        locks,
        state,
        completer=choice.completer,
        allow_fallback=allow_fallback(roster, cfg.allow_deterministic_fallback),
        no_client_reason=choice.reason or NO_PROVIDER,
        batch_size=cfg.enrichment_batch_size,
        max_batches=max_batches or cfg.enrichment_max_batches_per_run,
        progress=progress,
    )


def improver_for(
    roster: Roster,
    locks: StoreLocks,
    cluster: Cluster | None,
    *,
    task_id: str | None,
    trigger: str = "manual",
) -> SkillImprover:
    cfg = roster.skill_improver
    attempts = cfg.consolidation_max_calls_per_run if trigger == "scheduled" else None
    choice = completer_for(roster, cluster, IMPROVER_QUOTA, task_id=task_id, max_attempts=attempts)
    return SkillImprover(
        compiler_for(roster, locks),
        locks,
        cfg,
        completer=choice.completer,
        allow_fallback=allow_fallback(roster, cfg.allow_deterministic_fallback),
        no_client_reason=choice.reason or NO_PROVIDER,
    )


def run_enrichment(
    roster: Roster,
    locks: StoreLocks,
    cluster: Cluster | None,
    *,
    task_id: str | None,
    entry_ids: list[str] | None = None,
    max_batches: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """One enrichment run, for a task or the CLI alike: build the enricher, run it, close its
    provider, and report the enrichment quota's state (when there is a cluster to ask)."""
    enricher = enricher_for(
        roster, locks, cluster, task_id=task_id, max_batches=max_batches, progress=progress
    )
    try:
        report = enricher.run(entry_ids).as_dict()
    finally:
        if enricher.completer is not None:
            enricher.completer.close()
    if cluster is not None:
        report["quota"] = cluster.gate.status(ENRICHMENT_QUOTA).as_dict()
    return report


def run_improver(
    roster: Roster,
    locks: StoreLocks,
    cluster: Cluster | None,
    *,
    task_id: str | None,
    trigger: str = "manual",
    approved: bool = False,
    write_mode: str | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """One skill-improver run, for a task or the CLI alike (build, run, close, quota state)."""
    improver = improver_for(roster, locks, cluster, task_id=task_id, trigger=trigger)
    try:
        report = improver.run(
            trigger=trigger, approved=approved, write_mode=write_mode, run_id=run_id
        ).as_dict()
    finally:
        if improver.completer is not None:
            improver.completer.close()
    if cluster is not None:
        report["quota"] = cluster.gate.status(IMPROVER_QUOTA).as_dict()
    return report
