"""The port through which domain jobs ask a language model for text.

Domain code (curator enrichment, the skill improver) must not know about HTTP, Redis or quota
scripts, yet it decides *when* a slot is held (before the inventory, so a failed inventory can
hand it back) and what to do when no model answers. This module is the whole contract:
:class:`Completer` (implemented by :mod:`swarmq.llm.metered`) and the errors it raises, each
saying whether anything reached the network, because that decides whether the quota was spent
and whether a deterministic fallback is honest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from swarmq.errors import SwarmqError
from swarmq.storage.locking import StoreLocks

Message = Mapping[str, str]
"""A chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``."""


@dataclass(frozen=True, slots=True)
class Completion:
    """A reply that arrived; ``call_id`` ties it to its ledger line."""

    text: str
    call_id: str
    provider: str
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None


class CompletionError(SwarmqError, RuntimeError):
    """Base of every way a completion can fail to produce a reply."""

    outcome = "error"

    def __init__(
        self, message: str, *, outcome: str | None = None, reached_network: bool = False
    ) -> None:
        super().__init__(message)
        if outcome is not None:
            self.outcome = outcome
        self.reached_network = reached_network


class QuotaRefused(CompletionError):
    """No slot was granted (quota exhausted, or the gate cannot decide): nothing was sent."""

    outcome = "quota_exhausted"


class ProviderUnreachable(CompletionError):
    """No attempt reached the provider (connection refused, command missing): no slot spent."""

    outcome = "provider_unreachable"


class PromptTooLarge(CompletionError):
    """The prompt cannot fit the provider's declared context: refused before any slot was
    reserved or spent, and before anything was sent."""

    outcome = "prompt_too_large"


CHARS_PER_TOKEN = 3
"""A conservative estimate (English prose runs about 4 characters a token, JSON and code 3):
sizing on 3 errs towards trimming, never towards a request the provider refuses."""


def prompt_chars(messages: Sequence[Message]) -> int:
    return sum(len(m["content"]) + len(m["role"]) + 8 for m in messages)


def fit_lines(text: str, max_chars: int) -> str:
    """``text`` cut at a line boundary to at most ``max_chars`` (a note says how many lines went):
    callers put their most important lines first, so trimming the tail trims by priority."""
    if len(text) <= max_chars:
        return text
    lines = text.splitlines()
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > max_chars - 60:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(
        [*kept, f"[... {len(lines) - len(kept)} more line(s) left out to fit the model's context]"]
    )


class CompletionFailed(CompletionError):
    """At least one attempt reached the provider and none produced a usable reply."""

    outcome = "llm_call_failed"


class Completer(Protocol):
    """A language model behind a daily quota, a rate limit, retries and a ledger."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def quota(self) -> str: ...

    @property
    def max_prompt_chars(self) -> int | None:
        """How many prompt characters fit the provider's declared context (``None``: not
        declared, no limit known)."""
        ...

    def hold(self, purpose: str = "") -> AbstractContextManager[object]:
        """Reserve one quota slot now (raises :class:`QuotaRefused`); released on exit unless a
        request was sent with it."""
        ...

    def complete(
        self, messages: Sequence[Message], *, held: object | None = None, purpose: str = ""
    ) -> Completion:
        """Send ``messages``; the first attempt uses ``held`` when given. Every attempt that
        reaches the network spends its own slot."""
        ...

    def reject(self, completion: Completion, reason: str) -> None:
        """Record that a reply arrived but was refused (not JSON, wrong types, unsafe text)."""
        ...

    def close(self) -> None:
        """Release connections (the job is done with the model)."""
        ...


NO_PROVIDER = "no LLM provider is configured (llm.provider: none)"
"""Why an LLM job has no completer when swarm.yaml names no provider."""


class LLMJob:
    """What every LLM-backed job (curator enrichment, skill improver) is built with: the store
    locks, the metered completer or ``None``, whether a deterministic fallback may stand in for
    the model, and why there is no completer (reported when there is none)."""

    def __init__(
        self,
        locks: StoreLocks,
        *,
        completer: Completer | None,
        allow_fallback: bool,
        no_client_reason: str = NO_PROVIDER,
    ) -> None:
        self.locks = locks
        self.completer = completer
        self.allow_fallback = allow_fallback
        self.no_client_reason = no_client_reason
