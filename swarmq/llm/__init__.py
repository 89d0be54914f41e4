"""Language-model providers: OpenAI-compatible HTTP, a command-line agent, or none.

:func:`build_provider` reads swarm.yaml's ``llm:`` section; :class:`MeteredCompleter` puts a
provider behind the daily quota, the cluster rate limit, retries and the JSONL ledger. Nothing
here imports Celery or Redis: the gate and the rate limiter are passed in.
"""

from typing import TYPE_CHECKING

from swarmq.memory.lazypkg import lazy_package

if TYPE_CHECKING:
    from swarmq.llm.factory import build_provider
    from swarmq.llm.ledger import LEDGER_FILE, LedgerRecord, LLMLedger, summarise_usage
    from swarmq.llm.metered import MeteredCompleter, RetryPolicy
    from swarmq.llm.provider import ChatRequest, Provider, ProviderReply

__all__ = [
    "LEDGER_FILE",
    "ChatRequest",
    "LLMLedger",
    "LedgerRecord",
    "MeteredCompleter",
    "Provider",
    "ProviderReply",
    "RetryPolicy",
    "build_provider",
    "summarise_usage",
]

lazy_package(
    __name__,
    {
        "factory": ("build_provider",),
        "ledger": ("LEDGER_FILE", "LedgerRecord", "LLMLedger", "summarise_usage"),
        "metered": ("MeteredCompleter", "RetryPolicy"),
        "provider": ("ChatRequest", "Provider", "ProviderReply"),
    },
)
