"""Any provider behind the daily quota, the cluster rate limit, retries and the ledger.

The quota policy, attempt by attempt:

* before an attempt, a slot of the job's quota is held (the caller may pass one it reserved
  earlier, e.g. before building an inventory, so a failed inventory hands it back);
* the slot is *started* (spent) by the provider's ``on_send`` hook, i.e. only when the request
  is actually leaving; an attempt that never got out (connection refused) keeps its slot for
  the next attempt, and the slot is released if no attempt ever gets out;
* a retry after an attempt that got out needs a fresh slot, so retries can never exceed the
  window's budget (opencode-swarm's anti-flake policy);
* ``Retry-After`` is honoured up to ``max_retry_after`` seconds; a longer wait ends the call
  rather than sleeping inside a task (Celery would redeliver a task that sleeps for hours).

Redis is reached only through the objects passed in (``gate``, ``limiter``), so this module
runs unchanged against the Redis gate in a worker and a stub in a unit test.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from swarmq.completion.port import (
    CHARS_PER_TOKEN,
    Completion,
    CompletionFailed,
    Message,
    PromptTooLarge,
    ProviderUnreachable,
    QuotaRefused,
    prompt_chars,
)
from swarmq.llm.errors import AttemptError
from swarmq.llm.ledger import REPLY_REJECTED, LedgerRecord, LLMLedger
from swarmq.llm.provider import ChatRequest, Provider


class Slot(Protocol):
    """A held quota slot (``swarmq.coord._quota_slot.QuotaSlot`` satisfies this)."""

    started: bool

    def start(self) -> int: ...


class SlotGate(Protocol):
    """The quota gate (``swarmq.coord.quota.QuotaGate`` satisfies this)."""

    def slot(self, name: str) -> AbstractContextManager[Any]: ...


class RequestLimiter(Protocol):
    """The cluster-wide request rate limit (``swarmq.coord.ratelimit.RequestRateLimiter``).

    ``acquire`` blocks until a request may go out and returns the seconds waited; it raises
    ``TimeoutError`` when that would take longer than ``timeout`` and ``ConnectionError`` when
    it cannot decide (fail closed).
    """

    def acquire(self, timeout: float) -> float: ...


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    """Attempts after the first, for retryable failures (429, 5xx, dropped or refused connections)."""
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_retry_after: float = 60.0
    """A ``Retry-After`` longer than this ends the call instead of sleeping in the task."""


def _window_of(slot: object) -> str | None:
    window = getattr(getattr(slot, "reservation", None), "window", None)
    key = getattr(window, "key", None)
    return key if isinstance(key, str) else None


class MeteredCompleter:
    """Implements :class:`swarmq.completion.port.Completer` for one quota."""

    def __init__(
        self,
        provider: Provider,
        *,
        quota: str,
        gate: SlotGate,
        ledger: LLMLedger,
        limiter: RequestLimiter | None = None,
        retry: RetryPolicy | None = None,
        quota_errors: tuple[type[BaseException], ...] = (),
        task_id: str | None = None,
        rate_wait_seconds: float = 60.0,
        request_options: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        context_tokens: int | None = None,
        reply_tokens: int = 2048,
    ) -> None:
        self._provider = provider
        self._quota = quota
        self.gate = gate
        self.ledger = ledger
        self.limiter = limiter
        self.retry = retry or RetryPolicy()
        self.quota_errors = quota_errors
        """Exceptions the gate raises to refuse or revoke a slot (they mean: nothing was sent)."""
        self.task_id = task_id
        self.rate_wait_seconds = rate_wait_seconds
        self.request_options = dict(request_options or {})
        self.sleep = sleep
        self.context_tokens = context_tokens
        self.reply_tokens = reply_tokens

    @property
    def max_prompt_chars(self) -> int | None:
        """The prompt characters that fit ``context_tokens`` once ``reply_tokens`` are set aside."""
        if self.context_tokens is None:
            return None
        return max(0, self.context_tokens - self.reply_tokens) * CHARS_PER_TOKEN

    @property
    def provider(self) -> str:
        return self._provider.name

    @property
    def model(self) -> str:
        return self._provider.model

    @property
    def quota(self) -> str:
        return self._quota

    # -- slots -------------------------------------------------------------------------------

    def _reserve(self, stack: contextlib.ExitStack) -> Slot:
        try:
            slot: Slot = stack.enter_context(self.gate.slot(self._quota))
        except self.quota_errors as exc:
            # The gate refuses when the window is spent, and fails closed when it cannot decide.
            undecided = "unavailable" in type(exc).__name__.lower()
            raise QuotaRefused(
                str(exc), outcome="quota_unavailable" if undecided else None
            ) from exc
        return slot

    @contextlib.contextmanager
    def hold(self, purpose: str = "") -> Iterator[Slot]:
        with contextlib.ExitStack() as stack:
            try:
                slot = self._reserve(stack)
            except QuotaRefused as exc:
                self._record(
                    call_id=uuid.uuid4().hex,
                    attempt=1,
                    window=None,
                    model=self._provider.model,
                    purpose=purpose or None,
                    outcome=exc.outcome,
                    counted=False,
                    error=str(exc),
                )
                raise
            yield slot

    # -- the call ----------------------------------------------------------------------------

    def _record(self, **fields: Any) -> None:
        self.ledger.append(
            LedgerRecord(
                quota=self._quota,
                provider=self._provider.name,
                task_id=self.task_id,
                **fields,
            )
        )

    def _delay(self, error: AttemptError, attempt: int) -> float | None:
        if error.retry_after is not None:
            return None if error.retry_after > self.retry.max_retry_after else error.retry_after
        cap = min(self.retry.backoff_max, self.retry.backoff_base * 2.0 ** (attempt - 1))
        return float(cap * (0.5 + random.random() / 2))

    def complete(
        self, messages: Sequence[Message], *, held: object | None = None, purpose: str = ""
    ) -> Completion:
        request = ChatRequest.of(messages, **self.request_options)
        call_id = uuid.uuid4().hex
        base = {
            "call_id": call_id,
            "input_hash": request.input_hash(),
            "purpose": purpose or None,
            "model": self._provider.model,
        }
        limit, size = self.max_prompt_chars, prompt_chars(messages)
        if limit is not None and size > limit:  # refused before any slot is reserved or spent
            why = (
                f"prompt of about {size // CHARS_PER_TOKEN} tokens does not fit the declared context "
                f"({self.context_tokens} tokens, {self.reply_tokens} kept for the reply)"
            )
            self._record(
                attempt=0,
                window=None,
                outcome=PromptTooLarge.outcome,
                counted=False,
                error=why,
                **base,
            )
            raise PromptTooLarge(why)
        last: AttemptError | None = None
        sent_any = False
        with contextlib.ExitStack() as stack:
            slot: Slot | None = held  # type: ignore[assignment]
            for attempt in range(1, self.retry.max_retries + 2):
                if slot is None or slot.started:
                    try:
                        slot = self._reserve(stack)
                    except QuotaRefused as exc:
                        self._record(
                            attempt=attempt,
                            window=None,
                            outcome=exc.outcome,
                            counted=False,
                            error=str(exc),
                            **base,
                        )
                        if last is None:
                            raise
                        raise CompletionFailed(
                            f"{last}; no slot left for a retry: {exc}",
                            outcome=last.outcome,
                            reached_network=sent_any,
                        ) from exc
                window = _window_of(slot)
                if self.limiter is not None:
                    self._wait_for_rate(attempt, window, base, last, sent_any)
                result = self._attempt(request, slot, attempt, window, base)
                if isinstance(result, Completion):
                    return result
                error, started = result
                sent_any = sent_any or started
                last = error
                if not (error.retryable and attempt <= self.retry.max_retries):
                    break
                delay = self._delay(error, attempt)
                if delay is None:
                    break
                self.sleep(delay)
        assert last is not None
        if not sent_any:
            raise ProviderUnreachable(
                f"{self._provider.name} unreachable: {last}", outcome=last.outcome
            )
        raise CompletionFailed(str(last), outcome=last.outcome, reached_network=True)

    def _wait_for_rate(
        self,
        attempt: int,
        window: str | None,
        base: dict[str, Any],
        last: AttemptError | None,
        sent_any: bool,
    ) -> None:
        assert self.limiter is not None
        try:
            self.limiter.acquire(self.rate_wait_seconds)
        except (TimeoutError, ConnectionError) as exc:
            outcome = (
                "rate_limit_wait" if isinstance(exc, TimeoutError) else "rate_limiter_unavailable"
            )
            self._record(
                attempt=attempt,
                window=window,
                outcome=outcome,
                counted=False,
                error=str(exc),
                **base,
            )
            raise CompletionFailed(
                f"request rate limit: {exc}", outcome=outcome, reached_network=sent_any
            ) from exc

    def _attempt(
        self,
        request: ChatRequest,
        slot: Slot,
        attempt: int,
        window: str | None,
        base: dict[str, Any],
    ) -> Completion | tuple[AttemptError, bool]:
        started = False

        def on_send() -> None:
            nonlocal started
            slot.start()
            started = True

        began = time.perf_counter()
        try:
            reply = self._provider.send(request, on_send=on_send)
        except self.quota_errors as exc:
            self._record(
                attempt=attempt,
                window=window,
                outcome="quota_refused_at_send",
                counted=False,
                error=str(exc),
                **base,
            )
            raise QuotaRefused(f"slot revoked before sending: {exc}") from exc
        except AttemptError as exc:
            latency = round((time.perf_counter() - began) * 1000, 1)
            self._record(
                attempt=attempt,
                window=window,
                outcome=exc.outcome,
                counted=started,
                latency_ms=latency,
                status_code=exc.status_code,
                error=str(exc)[:500],
                **base,
            )
            return exc, started
        latency = round((time.perf_counter() - began) * 1000, 1)
        self._record(
            attempt=attempt,
            window=window,
            outcome="ok",
            counted=started,
            latency_ms=latency,
            tokens_in=reply.tokens_in,
            tokens_out=reply.tokens_out,
            **{**base, "model": reply.model},
        )
        return Completion(
            reply.text,
            base["call_id"],
            self._provider.name,
            reply.model,
            reply.tokens_in,
            reply.tokens_out,
        )

    def reject(self, completion: Completion, reason: str) -> None:
        self._record(
            call_id=completion.call_id,
            attempt=0,
            window=None,
            model=completion.model,
            outcome=REPLY_REJECTED,
            counted=False,
            error=reason[:500],
            event=REPLY_REJECTED,
        )

    def close(self) -> None:
        self._provider.close()
