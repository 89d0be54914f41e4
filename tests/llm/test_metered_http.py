"""The metered OpenAI-compatible client against a real local HTTP server and the real quota gate."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
import redis

from swarmq.completion.port import CompletionFailed, ProviderUnreachable, QuotaRefused
from swarmq.llm.ledger import LLMLedger, summarise_usage
from tests.llm.helpers import MESSAGES, completer, gate
from tests.llm_server import FakeLLMServer, drop, hang, malformed, ok, status


def ledger_lines(tmp_path: Path) -> list[dict[str, object]]:
    return list(LLMLedger(tmp_path / "runtime" / "llm-ledger.jsonl").records())


def test_ok_reply_is_counted_once_and_ledgered(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=5)
    llm_server.script(ok('{"answer": 42}', tokens=(30, 4)))
    reply = completer(llm_server.base_url, g, tmp_path).complete(MESSAGES, purpose="unit")
    assert reply.text == '{"answer": 42}'
    assert (reply.tokens_in, reply.tokens_out) == (30, 4)
    request = llm_server.requests[0]
    assert request.headers["Authorization"] == "Bearer sk-test"
    assert request.body is not None and request.body["model"] == "fake-model"
    assert request.body["messages"] == MESSAGES
    assert g.status("enrichment").used == 1
    [line] = ledger_lines(tmp_path)
    assert line["outcome"] == "ok" and line["counted"] is True
    assert line["task_id"] == "task-1" and line["quota"] == "enrichment"
    assert line["window"] == g.status("enrichment").window
    assert line["tokens_in"] == 30 and line["tokens_out"] == 4
    assert isinstance(line["input_hash"], str) and len(line["input_hash"]) == 64
    # The on-disk mirror in opencode-swarm's format follows the count (written behind).
    g.flush_mirror()
    mirror = json.loads((tmp_path / ".swarm" / "knowledge-enrichment-quota.json").read_text())
    assert mirror["calls_used"] == 1 and mirror["max_calls"] == 5


def test_quota_exhausted_at_exactly_its_max(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=3)
    client = completer(llm_server.base_url, g, tmp_path)
    for _ in range(3):
        client.complete(MESSAGES)
    with pytest.raises(QuotaRefused, match="exhausted"):
        client.complete(MESSAGES)
    assert llm_server.count() == 3
    state = g.status("enrichment")
    assert (state.used, state.held, state.remaining) == (3, 0, 0)
    assert [line["outcome"] for line in ledger_lines(tmp_path)] == [
        "ok",
        "ok",
        "ok",
        "quota_exhausted",
    ]


def test_429_retry_after_is_honoured_and_each_attempt_spends_a_slot(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    sleeps: list[float] = []
    llm_server.script(status(429, retry_after="2"), ok("fine"))
    reply = completer(llm_server.base_url, g, tmp_path, sleeps=sleeps).complete(MESSAGES)
    assert reply.text == "fine"
    assert sleeps == [2.0]
    assert llm_server.count() == 2
    assert g.status("enrichment").used == 2
    lines = ledger_lines(tmp_path)
    assert [(line["outcome"], line["counted"], line["status_code"]) for line in lines] == [
        ("http_429", True, 429),
        ("ok", True, None),
    ]
    assert lines[0]["call_id"] == lines[1]["call_id"] and [line["attempt"] for line in lines] == [
        1,
        2,
    ]


def test_retry_after_really_waits(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(status(429, retry_after="1"), ok("after the wait"))
    client = completer(llm_server.base_url, g, tmp_path)
    client.sleep = time.sleep
    client.complete(MESSAGES)
    first, second = llm_server.requests
    assert second.at - first.at >= 0.95


def test_retry_after_beyond_the_cap_ends_the_call(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(status(429, retry_after="3600"))
    with pytest.raises(CompletionFailed) as info:
        completer(llm_server.base_url, g, tmp_path).complete(MESSAGES)
    assert info.value.outcome == "http_429" and info.value.reached_network
    assert llm_server.count() == 1 and g.status("enrichment").used == 1


def test_5xx_retries_are_bounded_by_max_retries(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(status(500), status(502), status(503), status(500), ok("never reached"))
    with pytest.raises(CompletionFailed) as info:
        completer(llm_server.base_url, g, tmp_path, retries=3).complete(MESSAGES)
    assert info.value.outcome == "http_5xx"
    assert llm_server.count() == 4 and g.status("enrichment").used == 4


def test_retries_never_exceed_the_quota(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=2)
    llm_server.script(status(500), status(500), status(500))
    with pytest.raises(CompletionFailed, match="no slot left"):
        completer(llm_server.base_url, g, tmp_path, retries=5).complete(MESSAGES)
    assert llm_server.count() == 2
    assert g.status("enrichment").used == 2


def test_timeout_is_not_retried_and_stays_counted(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(hang(2.0))
    began = time.monotonic()
    with pytest.raises(CompletionFailed) as info:
        completer(llm_server.base_url, g, tmp_path, timeout=0.4).complete(MESSAGES)
    assert time.monotonic() - began < 1.8
    assert info.value.outcome == "timeout" and info.value.reached_network
    assert llm_server.count() == 1 and g.status("enrichment").used == 1
    [line] = ledger_lines(tmp_path)
    assert line["outcome"] == "timeout" and line["counted"] is True


def test_malformed_reply_is_an_error_in_the_ledger(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(malformed())
    with pytest.raises(CompletionFailed) as info:
        completer(llm_server.base_url, g, tmp_path).complete(MESSAGES)
    assert info.value.outcome == "malformed_reply"
    [line] = ledger_lines(tmp_path)
    assert line["outcome"] == "malformed_reply" and "not JSON" in str(line["error"])
    assert g.status("enrichment").used == 1


def test_reply_without_message_content_is_malformed(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(malformed(b'{"choices": [{"message": {"content": 7}}]}'))
    with pytest.raises(CompletionFailed, match="not a string"):
        completer(llm_server.base_url, g, tmp_path).complete(MESSAGES)


def test_dropped_connection_is_retried(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    llm_server.script(drop(), ok("second time lucky"))
    assert (
        completer(llm_server.base_url, g, tmp_path).complete(MESSAGES).text == "second time lucky"
    )
    assert [line["outcome"] for line in ledger_lines(tmp_path)] == ["http_5xx", "ok"]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_provider_down_spends_no_quota(
    redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=3)
    client = completer(f"http://127.0.0.1:{closed_port()}/v1", g, tmp_path, retries=2)
    with pytest.raises(ProviderUnreachable) as info:
        client.complete(MESSAGES)
    assert info.value.outcome == "connect_error" and not info.value.reached_network
    state = g.status("enrichment")
    assert (state.used, state.held) == (0, 0)
    lines = ledger_lines(tmp_path)
    assert [(line["outcome"], line["counted"]) for line in lines] == [("connect_error", False)] * 3


def test_held_slot_is_used_first_or_released(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=1)
    client = completer(llm_server.base_url, g, tmp_path)
    with client.hold():
        assert g.status("enrichment").held == 1  # inventory failed here: nothing sent
    assert (g.status("enrichment").used, g.status("enrichment").held) == (0, 0)
    with client.hold() as held:
        with pytest.raises(QuotaRefused):  # the one slot is held: nothing else gets one
            client.complete(MESSAGES)
        client.complete(MESSAGES, held=held)
    assert (g.status("enrichment").used, g.status("enrichment").held) == (1, 0)
    assert llm_server.count() == 1


def test_reject_and_usage_summary(
    llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str, tmp_path: Path
) -> None:
    g = gate(redis_client, swarm_name, tmp_path, enrichment=10)
    client = completer(llm_server.base_url, g, tmp_path)
    llm_server.script(status(503), ok("not json at all", tokens=(100, 20)))
    reply = client.complete(MESSAGES)
    client.reject(reply, "reply is not JSON")
    [row] = summarise_usage(LLMLedger(tmp_path / "runtime" / "llm-ledger.jsonl").records())
    assert (row.quota, row.model, row.attempts, row.counted, row.ok, row.failed) == (
        "enrichment",
        "fake-model",
        2,
        2,
        1,
        1,
    )
    assert row.rejected_replies == 1 and row.tokens_in == 100 and row.tokens_out == 20
    assert row.outcomes == {"http_5xx": 1, "ok": 1}
