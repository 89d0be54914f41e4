"""The command provider (prompt on stdin, reply on stdout) and building providers from swarm.yaml."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import redis

from swarmq.completion.port import CompletionFailed, ProviderUnreachable
from swarmq.coord.quota_types import QuotaError
from swarmq.llm._command import CommandProvider
from swarmq.llm.config import LLMConfig
from swarmq.llm.errors import LLMConfigError
from swarmq.llm.factory import build_provider
from swarmq.llm.ledger import LLMLedger
from swarmq.llm.metered import MeteredCompleter, RetryPolicy
from swarmq.llm.openai_compat import OpenAICompatible, parse_retry_after
from tests.llm.helpers import MESSAGES, gate

ECHO_UPPER = [sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.read().upper())"]


def metered(provider: CommandProvider, g: object, tmp_path: Path) -> MeteredCompleter:
    return MeteredCompleter(
        provider,
        quota="skill_improver",
        gate=g,  # type: ignore[arg-type]
        ledger=LLMLedger(tmp_path / "ledger.jsonl"),
        quota_errors=(QuotaError,),
        retry=RetryPolicy(max_retries=2, backoff_base=0.01),
        sleep=lambda _: None,
    )


def test_command_reads_the_prompt_on_stdin(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, skill_improver=2)
    reply = metered(CommandProvider(ECHO_UPPER, model="echo"), g, tmp_path).complete(MESSAGES)
    assert "[SYSTEM]\nANSWER IN JSON." in reply.text and reply.text.endswith("HELLO")
    assert reply.model == "echo" and g.status("skill_improver").used == 1


def test_command_failure_and_timeout_are_counted_not_retried(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, skill_improver=5)
    failing = CommandProvider([sys.executable, "-c", "import sys; sys.exit(3)"])
    with pytest.raises(CompletionFailed) as info:
        metered(failing, g, tmp_path).complete(MESSAGES)
    assert info.value.outcome == "command_failed"
    sleeper = CommandProvider(
        [sys.executable, "-c", "import time; time.sleep(5)"], timeout_seconds=0.3
    )
    with pytest.raises(CompletionFailed) as info:
        metered(sleeper, g, tmp_path).complete(MESSAGES)
    assert info.value.outcome == "timeout"
    assert g.status("skill_improver").used == 2


def test_missing_command_is_unreachable_and_free(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, skill_improver=5)
    with pytest.raises(ProviderUnreachable) as info:
        metered(CommandProvider(["/nonexistent/agent-cli"]), g, tmp_path).complete(MESSAGES)
    assert info.value.outcome == "command_not_found"
    assert g.status("skill_improver").used == 0 and g.status("skill_improver").held == 0


def test_command_model_placeholder() -> None:
    provider = CommandProvider(["agent", "--model", "{model}"], model="big-one")
    assert provider.argv() == ["agent", "--model", "big-one"]
    assert provider.rate_key == "command:agent"


def test_build_provider_from_config() -> None:
    assert build_provider(LLMConfig()) is None
    config = LLMConfig(
        provider="openai",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        api_key_env="SWARMQ_TEST_KEY",
    )
    with pytest.raises(LLMConfigError, match=r"\$SWARMQ_TEST_KEY"):
        build_provider(config, env={})
    provider = build_provider(config, env={"SWARMQ_TEST_KEY": "k"})
    assert isinstance(provider, OpenAICompatible) and provider.rate_key == "openai:127.0.0.1:9"
    provider.close()
    keyless = LLMConfig(
        provider="openai", base_url="http://localhost:11434/v1", model="m", api_key_env=None
    )
    assert isinstance(build_provider(keyless, env={}), OpenAICompatible)
    command = build_provider(LLMConfig(provider="command", command=["agent"]), env={})
    assert isinstance(command, CommandProvider)
    with pytest.raises(LLMConfigError, match="not an http"):
        build_provider(
            LLMConfig(provider="openai", base_url="ftp://x", model="m", api_key_env=None), env={}
        )


def test_parse_retry_after() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 5, 8, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after("0.5", now) == 0.5
    assert parse_retry_after("Fri, 08 May 2026 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Fri, 08 May 2026 11:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None and parse_retry_after(None) is None
