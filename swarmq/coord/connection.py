"""Redis connections and Lua scripts, with errors that name the URL tried."""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import redis
from redis.backoff import NoBackoff
from redis.commands.core import Script
from redis.exceptions import NoScriptError
from redis.retry import Retry

from swarmq.errors import Unavailable


class RedisUnavailable(Unavailable, RuntimeError):
    """Redis could not be reached; the message names the URL (without its password)."""

    def __init__(self, url: str, cause: BaseException | str) -> None:
        self.url = redact(url)
        super().__init__(f"Redis at {self.url} is unreachable: {cause}")


def redact(url: str) -> str:
    """``redis://:secret@host/0`` → ``redis://:***@host/0``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


def connect(url: str, *, timeout: float = 5.0, check: bool = True) -> redis.Redis:
    """A client for ``url``; with ``check`` a PING proves the server answers.

    The client never sends a command again by itself (``retry``: none). A connection lost after
    Redis ran a script but before its answer came back (a Redis SIGKILLed between its AOF fsync
    and its reply) must reach the caller as an error: only the caller knows whether asking again
    is safe (docs/architecture.md, "Asking Redis twice"). redis-py's constructor defaults to ten
    silent retries; ``from_url`` to none; this pins it either way.
    """
    client = redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
        decode_responses=False,
        retry=Retry(NoBackoff(), 0),
    )
    if check:
        ping(client, url)
    return client


def ping(client: redis.Redis, url: str) -> None:
    try:
        client.ping()
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise RedisUnavailable(url, exc) from exc
    except redis.AuthenticationError as exc:  # pragma: no cover - depends on server config
        raise RedisUnavailable(url, f"authentication failed: {exc}") from exc


def answers(url: str, timeout: float = 0.5) -> bool:
    """Whether a Redis server answers at ``url`` right now."""
    try:
        client = connect(url, timeout=timeout, check=True)
    except RedisUnavailable:
        return False
    client.close()
    return True


@functools.cache
def lua_source(name: str) -> str:
    """The text of ``swarmq/coord/lua/<name>.lua``."""
    return resources.files("swarmq.coord").joinpath("lua", f"{name}.lua").read_text("utf-8")


@functools.cache
def lua_sha(name: str) -> str:
    """The SHA1 Redis knows ``<name>.lua`` by (for EVALSHA inside pipelines)."""
    return hashlib.sha1(lua_source(name).encode("utf-8")).hexdigest()


def script(client: redis.Redis, name: str) -> Script:
    """A registered script: EVALSHA, falling back to EVAL when the server lost its cache."""
    return client.register_script(lua_source(name))


def run_script(
    client: redis.Redis, registered: Script, keys: Sequence[Any], args: Sequence[Any]
) -> Any:
    """EVALSHA straight on the client, loading the script once if the server lost it.

    The same as calling the :class:`Script`, minus its per-call bookkeeping, which on the quota
    gate's hot path cost as much as the server's work.
    """
    try:
        return client.evalsha(registered.sha, len(keys), *keys, *args)
    except NoScriptError:
        client.script_load(registered.script)
        return client.evalsha(registered.sha, len(keys), *keys, *args)


ASK_AGAIN_PAUSES = (0.05, 0.25)
"""Pauses (s) before each new ask of a script whose answer was lost, for the callers whose
scripts answer a second ask as they did the first (the quota start, a task's prelude). Short:
a Redis that stays away is failed closed on, not waited for."""

TRANSIENT: tuple[type[BaseException], ...] = (redis.ConnectionError, redis.TimeoutError, OSError)
"""Errors that mean "Redis is not there", as opposed to a bug or a script error."""

T = TypeVar("T")


def asked_again(call: Callable[[], T], pauses: Sequence[float] = ASK_AGAIN_PAUSES) -> T:
    """``call()``, asked again after each of ``pauses`` while Redis does not answer; the last
    ask's error is the caller's. Only for calls whose second ask answers as the first did."""
    for pause in pauses:
        try:
            return call()
        except TRANSIENT:
            time.sleep(pause)
    return call()
