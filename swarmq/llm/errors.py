"""What one attempt at a provider can end with, classified for the retry loop and the ledger.

Every error carries the ledger ``outcome`` word, whether the attempt is worth retrying, and a
server-requested delay (``Retry-After``) when there was one. Whether the attempt reached the
network is not decided here: the metered client knows, because it starts the quota slot at the
moment the request leaves.
"""

from __future__ import annotations

from swarmq.errors import SwarmqError


class LLMConfigError(SwarmqError, ValueError):
    """The provider cannot be built from swarm.yaml and the environment (missing key, bad URL)."""


class AttemptError(SwarmqError):
    """One attempt failed; the subclass says how."""

    outcome = "error"
    retryable = False

    def __init__(
        self, message: str, *, status_code: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


class ConnectFailed(AttemptError):
    """The provider could not be reached at all (refused, DNS, connect timeout)."""

    outcome = "connect_error"
    retryable = True


class ProviderMissing(AttemptError):
    """A ``command`` provider whose program does not exist: retrying cannot help."""

    outcome = "command_not_found"


class RequestTimeout(AttemptError):
    """The request went out and no complete reply came back in time.

    Not retried: the provider may well have done (and billed) the work, and a slow model must
    not burn a window's quota on repeats.
    """

    outcome = "timeout"


class RateLimited(AttemptError):
    """HTTP 429 from the provider."""

    outcome = "http_429"
    retryable = True


class ServerError(AttemptError):
    """HTTP 5xx, or the connection dropped before a response: the provider's fault, retried."""

    outcome = "http_5xx"
    retryable = True


class ClientError(AttemptError):
    """HTTP 4xx other than 429 (bad key, unknown model): the request itself is wrong."""

    outcome = "http_4xx"


class MalformedReply(AttemptError):
    """A reply arrived but does not follow the protocol (not JSON, no message content)."""

    outcome = "malformed_reply"


class CommandFailed(AttemptError):
    """A ``command`` provider exited non-zero."""

    outcome = "command_failed"
