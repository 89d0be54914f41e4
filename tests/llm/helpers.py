"""Builders shared by the llm tests: a real quota gate on the test Redis and a metered client."""

from __future__ import annotations

from pathlib import Path

import redis

from swarmq.coord.quota import QuotaGate
from swarmq.coord.quota_config import QuotaConfig
from swarmq.coord.quota_types import QuotaError
from swarmq.llm.ledger import LLMLedger
from swarmq.llm.metered import MeteredCompleter, RequestLimiter, RetryPolicy
from swarmq.llm.openai_compat import OpenAICompatible

MESSAGES = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "hello"}]


def gate(client: redis.Redis, swarm: str, tmp: Path, **maxima: int) -> QuotaGate:
    quotas = {name: QuotaConfig(max_calls_per_day=top) for name, top in maxima.items()}
    return QuotaGate(client, swarm, quotas, mirror_dir=tmp / ".swarm")


def completer(
    base_url: str,
    quota_gate: QuotaGate,
    tmp: Path,
    *,
    quota: str = "enrichment",
    timeout: float = 5.0,
    retries: int = 3,
    limiter: RequestLimiter | None = None,
    sleeps: list[float] | None = None,
) -> MeteredCompleter:
    provider = OpenAICompatible(base_url, "fake-model", api_key="sk-test", timeout_seconds=timeout)
    recorded = sleeps if sleeps is not None else []
    return MeteredCompleter(
        provider,
        quota=quota,
        gate=quota_gate,
        ledger=LLMLedger(tmp / "runtime" / "llm-ledger.jsonl"),
        limiter=limiter,
        retry=RetryPolicy(max_retries=retries, backoff_base=0.01, backoff_max=0.05),
        quota_errors=(QuotaError,),
        task_id="task-1",
        sleep=recorded.append,
    )
