"""Build the configured provider from swarm.yaml's ``llm:`` section and the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping

from swarmq.llm._command import CommandProvider
from swarmq.llm.config import LLMConfig, LLMProvider
from swarmq.llm.errors import LLMConfigError
from swarmq.llm.provider import Provider


def build_provider(config: LLMConfig, env: Mapping[str, str] | None = None) -> Provider | None:
    """The provider, or ``None`` for ``provider: none``.

    Raises :class:`LLMConfigError` when ``api_key_env`` names a variable that is not set: a
    missing key is a configuration problem to report, not an anonymous request to send. (Local
    servers that need no key: set ``api_key_env: null``.)
    """
    env = os.environ if env is None else env
    if config.provider is LLMProvider.NONE:
        return None
    if config.provider is LLMProvider.COMMAND:
        assert config.command is not None
        return CommandProvider(
            config.command, model=config.model, timeout_seconds=config.timeout_seconds
        )
    assert config.base_url is not None and config.model is not None
    # here, not at the top: httpx and ssl (~18 MB resident) are loaded only by a process that
    # talks to an endpoint, not by every importer of the wiring (the resident hook server)
    from swarmq.llm.openai_compat import OpenAICompatible

    key = api_key(config, env)
    try:
        return OpenAICompatible(
            config.base_url, config.model, api_key=key, timeout_seconds=config.timeout_seconds
        )
    except ValueError as exc:
        raise LLMConfigError(str(exc)) from exc


def api_key(config: LLMConfig, env: Mapping[str, str]) -> str | None:
    """The key ``llm.api_key_env`` names, read from ``env``; ``None`` when none is configured
    (a local server). A configured but unset variable is a configuration error, said now rather
    than as a 401 at the first call."""
    if not config.api_key_env:
        return None
    key = env.get(config.api_key_env)
    if not key:
        raise LLMConfigError(
            f"llm.api_key_env names ${config.api_key_env}, which is not set in this process's "
            "environment (set it, or use api_key_env: null for a server that needs no key)"
        )
    return key
