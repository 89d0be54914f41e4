"""The optional LLM pass against the real chat-completions test server: strict validation, one
call at most, quota respected, and scored by the same evaluation as the rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.coord.quota import QuotaGate
from swarmq.eval.forge import evaluate
from swarmq.flywheel.store import AgentsLayout
from swarmq.forge.config import ForgeConfig, ForgeLLMConfig
from swarmq.forge.extract import forge_transcript
from swarmq.forge.llm import looping
from swarmq.llm.metered import MeteredCompleter
from swarmq.storage.locking import LocalLocks
from tests.forge.sessions import ClaudeSession
from tests.llm.helpers import completer, gate
from tests.llm_server import FakeLLMServer, ok, running_llm_server

CONFIG = ForgeConfig(llm=ForgeLLMConfig(enabled=True))
EVIDENCE = "bash: python: command not found"
GOOD = {
    "type": "solution",
    "content": "`python` is not on PATH on the build runner; call python3 scripts/migrate.py.",
    "confidence": 0.9,
    "class": "workflow",
    "evidence": EVIDENCE,
}


def session(tmp_path: Path, name: str = "s.jsonl") -> Path:
    return (
        ClaudeSession()
        .user("migrate the db")
        .bash("python scripts/migrate.py", f"Exit code 127\n{EVIDENCE}", error=True)
        .say("Fine, the runner only has python3.")
        .bash("python3 scripts/migrate.py", "migrated 12 tables")
    ).write(tmp_path / name)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server(lambda body: "[]") as server:
        yield server


@pytest.fixture
def quota(redis_client: redis.Redis, swarm_name: str, tmp_path: Path) -> QuotaGate:
    return gate(redis_client, swarm_name, tmp_path, forge=2)


def metered(llm_server: FakeLLMServer, quota: QuotaGate, tmp_path: Path) -> MeteredCompleter:
    return completer(llm_server.base_url, quota, tmp_path, quota="forge", retries=0)


def forge_with(reply: Any, tmp_path: Path, llm_server: FakeLLMServer, quota: QuotaGate) -> Any:
    llm_server.script(ok(reply if isinstance(reply, str) else json.dumps(reply)))
    layout = AgentsLayout(tmp_path / "project" / ".agents")
    return forge_transcript(
        session(tmp_path),
        layout,
        LocalLocks(tmp_path / "locks"),
        CONFIG,
        completer=metered(llm_server, quota, tmp_path),
    )


def test_a_valid_reply_adds_its_candidates_with_their_evidence(
    tmp_path: Path, llm_server: FakeLLMServer, quota: QuotaGate
) -> None:
    result = forge_with([GOOD], tmp_path, llm_server, quota)
    assert result.llm["status"] == "ok" and result.llm["accepted"] == 1 and llm_server.count() == 1
    [llm] = [c for c in result.found if c.extractor == "llm"]
    assert f'(evidence: "{EVIDENCE}")' in llm.content and llm.type == "solution"
    sent = llm_server.requests[0].body["messages"][1]["content"]
    assert "python3" in sent  # the digest the model saw


@pytest.mark.parametrize(
    ("reply", "rule"),
    [
        ("I found nothing worth keeping.", "not a JSON array"),
        ([GOOD | {"severity": "high"}], "unknown key"),
        ([GOOD | {"type": "gossip"}], "type 'gossip'"),
        ([GOOD | {"confidence": 1.5}], "confidence"),
        (
            [GOOD | {"evidence": "pip: externally-managed-environment"}],
            "does not occur in the transcript",
        ),
        ([GOOD, GOOD | {"confidence": 0.8}], "the same lesson or evidence twice"),
        (
            [
                GOOD
                | {
                    "content": "use python3 use python3 use python3 use python3 instead of python here ok"
                }
            ],
            "repeats itself",
        ),
        (
            [GOOD | {"content": "Should we maybe also try python3.11 on the runner next week?"}],
            "not a lesson",
        ),
        ([GOOD] * 13, "more than the 12"),
    ],
)
def test_a_reply_breaking_any_rule_adds_nothing_and_is_not_retried(
    tmp_path: Path, llm_server: FakeLLMServer, quota: QuotaGate, reply: Any, rule: str
) -> None:
    result = forge_with(reply, tmp_path, llm_server, quota)
    assert result.llm["status"] == "rejected" and rule in result.llm["reason"]
    assert [c for c in result.found if c.extractor == "llm"] == []
    assert any(c.extractor == "sequence" for c in result.found)  # the deterministic results stand
    assert llm_server.count() == 1  # one call, no second try
    ledger = (tmp_path / "runtime" / "llm-ledger.jsonl").read_text(encoding="utf-8")
    assert '"reply_rejected"' in ledger


def test_a_spent_quota_sends_nothing(
    tmp_path: Path, llm_server: FakeLLMServer, redis_client: redis.Redis, swarm_name: str
) -> None:
    spent = gate(redis_client, swarm_name, tmp_path, forge=1)
    first = forge_with([GOOD], tmp_path, llm_server, spent)
    assert first.llm["status"] == "ok"
    again = forge_transcript(
        session(tmp_path, "t.jsonl"),
        AgentsLayout(tmp_path / "other" / ".agents"),
        LocalLocks(tmp_path / "locks"),
        CONFIG,
        completer=metered(llm_server, spent, tmp_path),
    )
    assert again.llm["status"] == "quota_exhausted" and llm_server.count() == 1
    assert any(c.extractor == "sequence" for c in again.found)


def test_repetition_detector() -> None:
    assert looping("retry the call, retry the call, retry the call again")
    assert not looping(
        "Run one celery beat per swarm, guarded by a Redis lock, because two beats double jobs."
    )


def test_the_llm_pass_is_scored_like_the_rules(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str
) -> None:
    """Scripted replies (one valid, one inventing its evidence) through the same evaluation."""
    (tmp_path / "sessions").mkdir()
    session(tmp_path / "sessions", "a.jsonl")
    ClaudeSession("b").user("deploy").say("Deployed the service to staging.").write(
        tmp_path / "sessions" / "b.jsonl"
    )
    labels = tmp_path / "labels.yaml"
    labels.write_text(
        "sessions:\n"
        "  - {file: a.jsonl, format: claude-code, split: held-out, lessons: "
        "[{lesson: python3 only, words: [python3]}]}\n"
        "  - {file: b.jsonl, format: claude-code, split: held-out, none: true}\n",
        encoding="utf-8",
    )
    invented = GOOD | {
        "content": "Staging deploys need the VPN because the registry is private.",
        "evidence": "the registry is private",
    }
    replies = {"a.jsonl": [GOOD], "b.jsonl": [invented]}

    def reply(body: dict[str, Any]) -> str:
        digest = body["messages"][1]["content"]
        return json.dumps(replies["a.jsonl" if "python3" in digest else "b.jsonl"])

    with running_llm_server(reply) as server:
        spent = gate(redis_client, swarm_name, tmp_path, forge=5)
        result = evaluate(
            labels,
            split="held-out",
            config=CONFIG,
            completer=completer(server.base_url, spent, tmp_path, quota="forge", retries=0),
        )
        assert server.count() == 2
    assert result.overall.tp == 1 and result.overall.fn == 0
    assert result.overall.fp == 0  # the invented lesson was rejected, not counted
