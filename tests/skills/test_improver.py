"""The skill improver against a real chat-completions server and the real quota gate."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis

from swarmq.coord.quota import QuotaGate
from swarmq.llm.ledger import LLMLedger
from swarmq.skills._inventory import Inventory
from swarmq.skills.compiler import SkillCompiler
from swarmq.skills.config import SkillImproverConfig
from swarmq.skills.improver import SECTIONS, SkillImprover
from swarmq.skills.layout import SkillLayout
from swarmq.storage.locking import LocalLocks
from tests.llm.helpers import completer, gate
from tests.llm_server import FakeLLMServer, ok, running_llm_server, status
from tests.skills.factory import entry, swarm_store, write_store

GOOD_BODY = "\n\n".join(f"## {title}\n\n- point about k1" for title in SECTIONS)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server(lambda body: GOOD_BODY) as server:
        yield server


class Setup:
    def __init__(self, tmp_path: Path, client: redis.Redis, swarm: str, maximum: int = 10) -> None:
        self.tmp = tmp_path
        workspace = tmp_path / "project"
        write_store(
            workspace,
            [
                entry(
                    "k1",
                    "Run the biome lint config check before committing.",
                    confidence=0.8,
                    phases=2,
                    tags=["lint"],
                    outcomes={"ignored_count": 2, "violated_count": 1},
                ),
                entry(
                    "k2",
                    "Run the biome lint config check before pushing.",
                    confidence=0.8,
                    phases=2,
                    tags=["lint"],
                ),
                entry(
                    "k3",
                    "Run biome in CI for every pull request.",
                    confidence=0.7,
                    phases=2,
                    tags=["lint"],
                ),
            ],
        )
        self.locks = LocalLocks(tmp_path / "locks")
        self.compiler = SkillCompiler(
            SkillLayout(workspace), self.locks, [swarm_store(workspace, self.locks)]
        )
        self.gate: QuotaGate = gate(client, swarm, tmp_path, skill_improver=maximum)
        self.clock = datetime(2026, 5, 8, 15, 42, 11, tzinfo=UTC)

    def improver(
        self,
        base_url: str | None,
        *,
        fallback: bool = False,
        retries: int = 0,
        inventory: Any = None,
        **config: Any,
    ) -> SkillImprover:
        client = (
            None
            if base_url is None
            else completer(base_url, self.gate, self.tmp, quota="skill_improver", retries=retries)
        )
        extra = {"inventory": inventory} if inventory else {}
        return SkillImprover(
            self.compiler,
            self.locks,
            SkillImproverConfig(enabled=True, **config),
            completer=client,
            allow_fallback=fallback,
            now=lambda: self.clock,
            **extra,
        )

    def used(self) -> tuple[int, int]:
        state = self.gate.status("skill_improver")
        return state.used, state.held

    def proposals(self) -> list[Path]:
        directory = self.compiler.layout.improver_proposals_dir
        return sorted(directory.glob("*.md")) if directory.exists() else []


@pytest.fixture
def setup(tmp_path: Path, redis_client: redis.Redis, swarm_name: str) -> Setup:
    return Setup(tmp_path, redis_client, swarm_name)


def test_llm_proposal_is_tagged_and_spends_one_slot(
    setup: Setup, llm_server: FakeLLMServer
) -> None:
    report = setup.improver(llm_server.base_url).run(approved=True)
    assert report.ran and report.source == "llm" and report.missing_sections == []
    [path] = setup.proposals()
    assert path.name == "2026-05-08T15-42-11-000Z.md" and str(path) == report.proposal
    text = path.read_text()
    assert text.startswith("---\nsource: llm\ngenerated_at: 2026-05-08T15:42:11.000Z\n")
    assert "model: fake-model" in text and all(f"## {title}" in text for title in SECTIONS)
    prompt = llm_server.requests[0].prompt
    assert (
        "k1 | ignored=2 violated=1" in prompt
        and "Repeated ignored or violated directives" in prompt
    )
    assert setup.used() == (1, 0)
    setup.improver(llm_server.base_url).run(
        approved=True
    )  # same millisecond: a second file, not a clobber
    assert len(setup.proposals()) == 2


DEGENERATE = {
    "one phrase repeated, no section": "\n".join(["Improve the skills and the knowledge."] * 40),
    "missing sections": "## Inventory snapshot\n\n- 2 entries\n\n## Risks\n\n- none",
    "placeholder sections": "\n\n".join(f"## {title}\n\nTODO" for title in SECTIONS),
    "headings only": "\n\n".join(f"## {title}" for title in SECTIONS),
    "evidence not in the input": GOOD_BODY.replace("k1", "5b548170-7d40-45b1-a9d9-a71b7a7f395b"),
}


@pytest.mark.parametrize("name", list(DEGENERATE))
def test_degenerate_replies_are_rejected_recorded_and_never_written(
    name: str, setup: Setup, llm_server: FakeLLMServer
) -> None:
    llm_server.script(ok(DEGENERATE[name]))
    report = setup.improver(llm_server.base_url).run(approved=True)
    assert not report.ran and (report.reason or "").startswith("reply_rejected: ")
    assert setup.proposals() == [] and setup.used() == (1, 0)  # one slot, no second attempt
    records = list(LLMLedger(setup.tmp / "runtime" / "llm-ledger.jsonl").records())
    assert [r["event"] for r in records] == ["attempt", "reply_rejected"]
    assert records[-1]["error"] == (report.reason or "").removeprefix("reply_rejected: ")
    assert len(llm_server.requests) == 1


def test_a_prompt_over_the_context_is_trimmed_or_refused_before_a_slot_is_spent(
    setup: Setup, llm_server: FakeLLMServer
) -> None:
    many = Inventory(
        knowledge_total=500,
        knowledge_active=500,
        archived=0,
        directives=0,
        drafts=0,
        active_skills=0,
        stale_skills=[(f"skill-{n}", ["old"]) for n in range(10)],
        mature_uncompiled=[],
        ignored_or_violated=[],
    )
    improver = setup.improver(llm_server.base_url, inventory=lambda compiler: many)
    assert improver.completer is not None
    improver.completer.context_tokens, improver.completer.reply_tokens = 2048 + 260, 2048  # type: ignore[attr-defined]
    report = improver.run(approved=True)
    assert report.ran, report.reason
    prompt = llm_server.requests[0].prompt
    assert "more line(s) left out to fit the model's context" in prompt and "skill-9" not in prompt
    improver.completer.context_tokens = 2048 + 100  # type: ignore[attr-defined]
    report = improver.run(approved=True, run_id="second")
    assert not report.ran and (report.reason or "").startswith("prompt_too_large: ")
    assert setup.used() == (1, 0) and len(llm_server.requests) == 1  # nothing sent, slot released
    records = list(LLMLedger(setup.tmp / "runtime" / "llm-ledger.jsonl").records())
    assert records[-1]["outcome"] == "prompt_too_large" and records[-1]["counted"] is False


def test_no_client_without_fallback_refuses_and_leaves_the_quota_untouched(setup: Setup) -> None:
    report = setup.improver(None).run(approved=True)
    assert not report.ran and (report.reason or "").startswith("no_llm_client")
    assert setup.used() == (0, 0) and setup.proposals() == []


def test_deterministic_fallback_is_honest(setup: Setup) -> None:
    report = setup.improver(None, fallback=True).run(approved=True)
    assert report.ran and report.source == "deterministic_fallback"
    text = Path(report.proposal or "").read_text()
    assert text.startswith("---\nsource: deterministic_fallback\n")
    assert "NOT an LLM analysis" in text and all(f"## {title}" in text for title in SECTIONS)
    assert "k1: ignored 2×, violated 1×" in text
    assert setup.used() == (0, 0)


def test_inventory_failure_releases_the_slot(setup: Setup, llm_server: FakeLLMServer) -> None:
    def broken(_: SkillCompiler) -> Inventory:
        raise OSError("disk on fire")

    report = setup.improver(llm_server.base_url, inventory=broken).run(approved=True)
    assert report.reason == "inventory_failed: OSError: disk on fire"
    assert setup.used() == (0, 0) and llm_server.count() == 0


def test_a_failed_call_keeps_its_slot_spent(setup: Setup, llm_server: FakeLLMServer) -> None:
    llm_server.script(status(500), status(503))
    report = setup.improver(llm_server.base_url, retries=1).run(approved=True)
    assert (report.reason or "").startswith("llm_call_failed: http_5xx")
    assert setup.used() == (2, 0) and setup.proposals() == []


def test_exhausted_quota_refuses_before_any_work(
    tmp_path: Path, redis_client: redis.Redis, swarm_name: str, llm_server: FakeLLMServer
) -> None:
    setup = Setup(tmp_path, redis_client, swarm_name, maximum=1)
    calls: list[int] = []

    def counting(compiler: SkillCompiler) -> Inventory:
        calls.append(1)
        return Inventory()

    assert setup.improver(llm_server.base_url, inventory=counting).run(approved=True).ran
    report = setup.improver(llm_server.base_url, inventory=counting).run(approved=True)
    assert (report.reason or "").startswith("quota_exhausted") and calls == [1]
    assert llm_server.count() == 1


def test_empty_reply_is_rejected_in_the_ledger(setup: Setup, llm_server: FakeLLMServer) -> None:
    llm_server.script(ok("   \n  "))
    report = setup.improver(llm_server.base_url).run(approved=True)
    assert report.reason == "reply_rejected: empty reply" and setup.proposals() == []
    events = [r["event"] for r in LLMLedger(setup.tmp / "runtime" / "llm-ledger.jsonl").records()]
    assert events == ["attempt", "reply_rejected"]


def test_gates_enabled_approval_and_schedule(setup: Setup, llm_server: FakeLLMServer) -> None:
    off = SkillImprover(
        setup.compiler, setup.locks, SkillImproverConfig(), completer=None, allow_fallback=True
    )
    assert (off.run(approved=True).reason or "").startswith("disabled")
    assert (setup.improver(None, fallback=True).run().reason or "").startswith(
        "awaiting_user_approval"
    )
    assert (setup.improver(None, fallback=True).run(trigger="scheduled").reason or "").startswith(
        "not_scheduled"
    )
    scheduled = setup.improver(
        llm_server.base_url, trigger="scheduled", consolidation_interval_hours=6
    )
    assert scheduled.run(trigger="scheduled").ran
    assert (scheduled.run(trigger="scheduled").reason or "").startswith("not_due")
    setup.clock += timedelta(hours=6)
    assert scheduled.run(trigger="scheduled").ran
    assert llm_server.count() == 2


def test_draft_skills_mode_drafts_but_never_activates(
    setup: Setup, llm_server: FakeLLMServer
) -> None:
    report = setup.improver(llm_server.base_url, write_mode="draft_skills").run(approved=True)
    assert [d["slug"] for d in report.drafts] == ["lint"] and report.drafts[0]["written"]
    assert setup.compiler.layout.proposal_path("lint").exists()
    assert not setup.compiler.layout.generated_dir.exists() or not any(
        setup.compiler.layout.generated_dir.iterdir()
    )
