"""Curator enrichment against a real chat-completions server, the real quota gate and a real
knowledge store on disk."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.coord.quota import QuotaGate
from swarmq.curation.enrich import Enricher, EnrichmentReport
from swarmq.curation.state import EnrichmentState
from swarmq.knowledge.store import TierStore
from swarmq.llm.ledger import LLMLedger
from swarmq.storage.locking import LocalLocks
from tests.llm.helpers import completer, gate
from tests.llm_server import FakeLLMServer, hang, ok, wait
from tests.skills.factory import entry, lines, swarm_store, write_store

PROSE = [
    entry("p1", "Always run the database migration check before merging a schema change."),
    entry("p2", "Never commit generated lockfiles without running the install step first."),
    entry("p3", "Prefer small pull requests so review stays fast and focused."),
]
DIRECTIVE = entry(
    "d1",
    "Run lint before pushing to CI.",
    triggers=["lint"],
    required_actions=["run lint"],
    applies_to_tools=["bash"],
)


class World:
    def __init__(self, tmp_path: Path, client: redis.Redis, swarm: str, maximum: int = 30) -> None:
        self.tmp = tmp_path
        self.workspace = tmp_path / "project"
        self.path = write_store(self.workspace, [*PROSE, DIRECTIVE])
        self.locks = LocalLocks(tmp_path / "locks")
        self.store: TierStore = swarm_store(self.workspace, self.locks)
        self.gate: QuotaGate = gate(client, swarm, tmp_path, enrichment=maximum)
        self.state = EnrichmentState(
            self.workspace / ".swarm" / "curator" / "enrichment-state.json"
        )

    def enricher(
        self,
        base_url: str | None,
        *,
        fallback: bool = False,
        batch: int = 8,
        batches: int = 3,
        timeout: float = 5.0,
        retries: int = 1,
    ) -> Enricher:
        client = (
            None
            if base_url is None
            else completer(base_url, self.gate, self.tmp, timeout=timeout, retries=retries)
        )
        return Enricher(
            self.store,
            self.locks,
            self.state,
            completer=client,
            allow_fallback=fallback,
            batch_size=batch,
            max_batches=batches,
        )

    def entries(self) -> dict[str, dict[str, Any]]:
        return {e["id"]: e for e in lines(self.path)}

    def ledger(self) -> list[dict[str, Any]]:
        return list(LLMLedger(self.tmp / "runtime" / "llm-ledger.jsonl").records())

    def used(self) -> tuple[int, int]:
        status = self.gate.status("enrichment")
        return status.used, status.held


@pytest.fixture
def world(tmp_path: Path, redis_client: redis.Redis, swarm_name: str) -> World:
    return World(tmp_path, redis_client, swarm_name)


def test_plain_prose_is_enriched_once_and_skipped_while_unchanged(
    world: World, llm_server: FakeLLMServer
) -> None:
    report = world.enricher(llm_server.base_url).run()
    assert (
        sorted(report.enriched) == ["p1", "p2", "p3"]
        and report.calls == 1
        and report.sources == ["llm"]
    )
    stored = world.entries()
    assert stored["p1"]["triggers"] == ["about p1"] and stored["p1"]["applies_to_agents"] == [
        "coder"
    ]
    assert stored["p1"]["enrichment_source"] == "llm" and stored["p1"]["revision"] == 1
    assert "enrichment_source" not in stored["d1"]  # already a directive: never sent
    prompt = llm_server.requests[0].prompt
    assert "p1" in prompt and "d1" not in prompt
    assert world.used() == (1, 0)
    # Nothing changed: no call. A changed lesson that lost its directives is sent again.
    assert (
        world.enricher(llm_server.base_url).run().skipped_unchanged == 0
    )  # enriched ones are not prose
    world.store.update(
        "p3",
        {"lesson": "Prefer small pull requests; split refactors from features."},
        remove=["triggers", "required_actions", "applies_to_agents", "directive_priority"],
    )
    again = world.enricher(llm_server.base_url).run()
    assert again.enriched == ["p3"] and llm_server.count() == 2


def test_not_actionable_lessons_are_not_resent(world: World, llm_server: FakeLLMServer) -> None:
    llm_server.script(ok(json.dumps({"entries": []})))
    first = world.enricher(llm_server.base_url).run()
    assert sorted(first.not_actionable) == ["p1", "p2", "p3"] and first.enriched == []
    second = world.enricher(llm_server.base_url).run()
    assert second.skipped_unchanged == 3 and second.calls == 0 and llm_server.count() == 1


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Sure! Here are the directives you asked for.", "reply is not JSON"),
        (json.dumps([{"id": "p1"}]), 'JSON object with an "entries" array'),
        (json.dumps({"entries": [{"id": "p1", "triggers": "lint"}]}), "triggers must be an array"),
        (
            json.dumps({"entries": [{"id": "p1", "applies_to_agents": ["Coder Agent"]}]}),
            "applies_to_agents contains invalid name",
        ),
        (
            json.dumps({"entries": [{"id": "p1", "triggers": ["ok\u200bhidden"]}]}),
            "control or invisible",
        ),
        (
            json.dumps({"entries": [{"id": "p1", "required_actions": ["line\nbreak"]}]}),
            "control or invisible",
        ),
        (
            json.dumps(
                {"entries": [{"id": "p1", "required_actions": ["<script>alert(1)</script>"]}]}
            ),
            "injection pattern",
        ),
        (
            json.dumps({"entries": [{"id": "p1", "directive_priority": "urgent"}]}),
            "directive_priority",
        ),
        (
            json.dumps({"entries": [{"id": "zz", "triggers": ["x"]}]}),
            "is not one of the lessons sent",
        ),
        (
            json.dumps({"entries": [{"id": "p1", "generated_skill_path": "../../../etc/passwd"}]}),
            "escapes .opencode/skills/generated/",
        ),
        (json.dumps({"entries": [{"id": "p1", "status": "promoted"}]}), "'status' may not be set"),
        (
            json.dumps({"entries": [{"id": "p1", "triggers": ["x" * 201]}]}),
            "triggers contains invalid string",
        ),
        # One bad item refuses the whole reply: the good one is not applied either.
        (
            json.dumps(
                {
                    "entries": [
                        {"id": "p2", "triggers": ["generated lockfiles"]},
                        {"id": "p1", "triggers": [7]},
                    ]
                }
            ),
            "entry p1: triggers contains invalid string",
        ),
        # Degenerate replies: well-formed, worthless.
        (
            json.dumps(
                {
                    "entries": [
                        {"id": "p1", "triggers": ["short phrase that should surface the lesson"]}
                    ]
                }
            ),
            "echoes the prompt's template",
        ),
        (
            json.dumps({"entries": [{"id": "p1", "required_actions": ["TODO"]}]}),
            "holds a placeholder",
        ),
        (
            json.dumps(
                {"entries": [{"id": "p1", "triggers": ["schema change", "Schema  change"]}]}
            ),
            "repeats an item",
        ),
        (
            json.dumps({"entries": [{"id": "p1", "triggers": ["deploy the frontend"]}]}),
            "evidence not in the input",
        ),
        (
            json.dumps(
                {
                    "entries": [
                        {
                            "id": i,
                            "triggers": ["run the review step"],
                            "required_actions": ["run the review step before merging"],
                        }
                        for i in ("p1", "p2", "p3")
                    ]
                }
            ),
            "the same fields for all 3 lessons",
        ),
        ("\n".join(['{"entries": []}'] + ["ok ok ok ok ok ok ok ok"] * 10), "degenerate reply"),
    ],
)
def test_bad_replies_are_refused_and_the_store_is_unchanged(
    world: World, llm_server: FakeLLMServer, reply: str, reason: str
) -> None:
    before = world.path.read_bytes()
    llm_server.script(ok(reply))
    report = world.enricher(llm_server.base_url).run()
    assert len(report.rejected_replies) == 1 and reason in report.rejected_replies[0]
    assert report.enriched == [] and world.path.read_bytes() == before
    rejected = [line for line in world.ledger() if line["event"] == "reply_rejected"]
    assert len(rejected) == 1 and reason in str(rejected[0]["error"])
    assert world.used() == (1, 0)  # the call was made: its slot stays spent
    assert not world.state.path.exists()  # and the lessons will be tried again


def test_a_write_during_a_slow_call_survives_the_merge(
    world: World, llm_server: FakeLLMServer
) -> None:
    release = threading.Event()
    llm_server.script(wait(release))
    result: list[EnrichmentReport] = []
    runner = threading.Thread(
        target=lambda: result.append(world.enricher(llm_server.base_url).run())
    )
    runner.start()
    assert llm_server.arrived.wait(10)
    # While the model thinks: another writer confirms p1 and tags p2.
    world.store.reinforce("p1", phase=7)
    world.store.update("p2", {"tags": ["build", "lockfile"]})
    release.set()
    runner.join(15)
    [report] = result
    assert sorted(report.enriched) == ["p1", "p2", "p3"]
    assert sorted(report.merged_after_conflict) == ["p1", "p2"]
    stored = world.entries()
    assert [c["phase_number"] for c in stored["p1"]["confirmed_by"]] == [7]  # the other write...
    assert stored["p1"]["triggers"] == ["about p1"]  # ...and the enrichment, both kept
    assert stored["p2"]["tags"] == ["build", "lockfile"] and stored["p2"]["required_actions"] == [
        "run the check first: never commit generated lockfiles"
    ]
    assert stored["p1"]["revision"] == 2 and stored["p3"]["revision"] == 1


def test_a_lesson_rewritten_during_the_call_is_not_enriched_with_a_stale_proposal(
    world: World, llm_server: FakeLLMServer
) -> None:
    release = threading.Event()
    llm_server.script(wait(release))
    result: list[EnrichmentReport] = []
    runner = threading.Thread(
        target=lambda: result.append(world.enricher(llm_server.base_url).run())
    )
    runner.start()
    assert llm_server.arrived.wait(10)
    world.store.update(
        "p1", {"lesson": "Run the migration dry-run in staging before merging schema changes."}
    )
    release.set()
    runner.join(15)
    assert result[0].stale == ["p1"]
    stored = world.entries()["p1"]
    assert stored["lesson"].startswith("Run the migration dry-run") and "triggers" not in stored


def test_timeout_leaves_the_store_untouched_and_spends_one_slot(
    world: World, llm_server: FakeLLMServer
) -> None:
    before = world.path.read_bytes()
    llm_server.script(hang(2.0))
    report = world.enricher(llm_server.base_url, timeout=0.4).run()
    assert report.stopped is not None and report.stopped.startswith("timeout")
    assert world.path.read_bytes() == before and world.used() == (1, 0)


def test_quota_exhausted_at_exactly_its_max(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str, llm_server: FakeLLMServer
) -> None:
    world = World(tmp_path, redis_client, swarm_name, maximum=2)
    report = world.enricher(llm_server.base_url, batch=1, batches=10).run()
    assert report.calls == 2 and len(report.enriched) == 2
    assert report.stopped is not None and report.stopped.startswith("quota_exhausted")
    assert llm_server.count() == 2 and world.used() == (2, 0)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_provider_down_falls_back_honestly_and_spends_nothing(world: World) -> None:
    down = f"http://127.0.0.1:{closed_port()}/v1"
    report = world.enricher(down, fallback=True).run()
    assert report.stopped is not None and report.stopped.startswith("provider_unreachable")
    assert report.sources == ["deterministic_fallback"]
    stored = world.entries()
    assert stored["p1"]["enrichment_source"] == "deterministic_fallback"
    assert stored["p1"]["required_actions"] == [
        "Always run the database migration check before merging a schema change"
    ]
    assert stored["p2"]["forbidden_actions"] == [
        "Never commit generated lockfiles without running the install step first"
    ]
    assert world.used() == (0, 0)


def test_provider_down_without_fallback_changes_nothing(world: World) -> None:
    before = world.path.read_bytes()
    report = world.enricher(f"http://127.0.0.1:{closed_port()}/v1").run()
    assert report.stopped is not None and report.stopped.startswith("provider_unreachable")
    assert report.enriched == [] and world.path.read_bytes() == before and world.used() == (0, 0)


def test_no_client_refuses_before_touching_the_quota(world: World) -> None:
    before = world.path.read_bytes()
    report = world.enricher(None).run()
    assert report.refused is not None and report.refused.startswith("no_llm_client")
    assert world.path.read_bytes() == before and world.used() == (0, 0)
    fallback = world.enricher(None, fallback=True).run()
    assert fallback.sources == ["deterministic_fallback"] and "p1" in fallback.enriched
    assert world.used() == (0, 0)


def test_batches_are_split_to_fit_the_declared_context() -> None:
    from swarmq.completion.port import prompt_chars
    from swarmq.curation._reply import build_messages
    from swarmq.curation.enrich import sized_batches
    from swarmq.knowledge.model import Entry

    lessons = [
        Entry(entry(f"e{n}", f"Lesson number {n} about running the migration check " * 3))
        for n in range(8)
    ]
    whole = prompt_chars(build_messages(lessons))
    assert sized_batches(lessons, 8, None) == [lessons]
    split = sized_batches(lessons, 8, whole // 2)
    assert [e for b in split for e in b] == lessons and len(split) >= 3
    assert all(prompt_chars(build_messages(b)) <= whole // 2 for b in split)
    single = sized_batches(lessons[:1], 8, 10)  # cannot fit: left for the completer to refuse
    assert single == [lessons[:1]]
