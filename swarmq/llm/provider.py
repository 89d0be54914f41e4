"""The provider protocol: send one chat request, once, and report the reply or a typed error.

Providers do no retries, no quota and no bookkeeping; :mod:`swarmq.llm.metered` adds those
around any provider. The one hook a provider owes its caller is ``on_send``: it is called right
before the request leaves this process (HTTP headers about to be written, the command about to
be spawned), which is the moment the quota slot is spent. If ``on_send`` raises, nothing is sent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from swarmq.completion.port import Message

OnSend = Callable[[], None]


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat-completions request."""

    messages: tuple[dict[str, str], ...]
    temperature: float | None = 0.0
    max_tokens: int | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, messages: Sequence[Message], **options: object) -> ChatRequest:
        return cls(tuple({"role": m["role"], "content": m["content"]} for m in messages), **options)  # type: ignore[arg-type]

    def input_hash(self) -> str:
        """sha256 of the canonical messages: equal prompts hash equal across processes."""
        canonical = json.dumps(
            self.messages, ensure_ascii=False, separators=(",", ":"), sort_keys=True
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def as_prompt_text(self) -> str:
        """The messages as one plain text, for command-line agents that read a prompt."""
        parts = []
        for message in self.messages:
            role = message["role"]
            parts.append(
                message["content"] if role == "user" else f"[{role}]\n{message['content']}"
            )
        return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class ProviderReply:
    text: str
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None


class Provider(Protocol):
    """One model endpoint."""

    @property
    def name(self) -> str:
        """``openai`` or ``command`` (the ledger's provider column)."""
        ...

    @property
    def model(self) -> str: ...

    @property
    def rate_key(self) -> str:
        """Which cluster-wide rate bucket this provider draws from (one per endpoint)."""
        ...

    def send(self, request: ChatRequest, *, on_send: OnSend) -> ProviderReply:
        """One attempt; raises :class:`~swarmq.llm.errors.AttemptError` subclasses."""
        ...

    def close(self) -> None: ...
