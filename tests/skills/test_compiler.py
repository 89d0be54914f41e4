"""generate / apply / regenerate / list / inspect against a real knowledge store on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swarmq.skills._rejected import RejectedEdits
from swarmq.skills.compiler import SkillCompiler
from swarmq.skills.layout import SkillLayout, UnsafeSkillPath
from swarmq.storage.locking import LocalLocks
from tests.skills.factory import entry, lines, swarm_store, write_store

LESSONS = [
    entry(
        "k1",
        "Run the biome lint config check before committing changes.",
        confidence=0.8,
        phases=2,
        tags=["lint"],
        triggers=["biome", "lint config"],
        required_actions=["run biome check"],
        forbidden_actions=["commit with lint errors"],
        applies_to_agents=["coder"],
    ),
    entry(
        "k2",
        "Run the biome lint config check before pushing to CI.",
        confidence=0.7,
        phases=3,
        tags=["lint"],
    ),
    entry(
        "k3",
        "A lesson that is not mature enough to compile yet.",
        confidence=0.6,
        phases=1,
        tags=["misc"],
    ),
]


@pytest.fixture
def compiler(tmp_path: Path) -> SkillCompiler:
    workspace = tmp_path / "project"
    write_store(workspace, LESSONS)
    locks = LocalLocks(tmp_path / "locks")
    return SkillCompiler(
        SkillLayout(workspace),
        locks,
        [swarm_store(workspace, locks)],
        clock=lambda: "2026-05-08T12:00:00.000Z",
    )


def knowledge(compiler: SkillCompiler) -> dict[str, dict[str, object]]:
    return {e["id"]: e for e in lines(compiler.layout.workspace / ".swarm" / "knowledge.jsonl")}


def test_generate_draft_then_apply_stamps_the_sources(compiler: SkillCompiler) -> None:
    [draft] = compiler.generate(mode="draft")
    assert draft.written and draft.slug == "biome" and draft.source_ids == ["k1", "k2"]
    assert draft.evaluation is not None and draft.evaluation.status == "unevaluated"
    path = compiler.layout.proposal_path("biome")
    assert Path(draft.path or "") == path and "status: draft" in path.read_text()
    assert compiler.listing()["drafts"][0]["source_ids"] == ["k1", "k2"]
    assert "generated_skill_slug" not in knowledge(compiler)["k1"]  # a draft changes no knowledge

    applied = compiler.apply("biome")
    assert applied.written and applied.missing_ids == []
    active = compiler.layout.active_path("biome")
    assert "status: active" in active.read_text() and not path.exists()
    stored = knowledge(compiler)
    for entry_id in ("k1", "k2"):
        assert stored[entry_id]["generated_skill_slug"] == "biome"
        assert (
            stored[entry_id]["generated_skill_path"] == ".opencode/skills/generated/biome/SKILL.md"
        )
        assert stored[entry_id]["revision"] == 1
    assert "generated_skill_slug" not in stored["k3"]
    [listed] = compiler.listing()["active"]
    assert listed["slug"] == "biome" and listed["generated"] and listed["stale"] == []
    assert (
        compiler.generate(mode="draft")[0].reason == "no mature knowledge to compile"
    )  # already compiled


def test_explicit_ids_bypass_discovery(compiler: SkillCompiler) -> None:
    [result] = compiler.generate(mode="active", source_ids=["k3", "nope"], slug="one-off")
    assert result.written and result.source_ids == ["k3"] and result.missing_ids == ["nope"]
    assert knowledge(compiler)["k3"]["generated_skill_slug"] == "one-off"
    inspected = compiler.inspect("one-off")
    assert inspected is not None and inspected["kind"] == "active"
    assert inspected["sources"] == [
        {"id": "k3", "lesson": LESSONS[2]["lesson"], "status": "candidate"}
    ]


def test_hand_written_skill_is_not_overwritten_unless_forced(compiler: SkillCompiler) -> None:
    active = compiler.layout.active_path("biome")
    active.parent.mkdir(parents=True, exist_ok=True)
    active.write_text("---\nname: biome\ndescription: mine\n---\n\nMy own careful words.\n")
    compiler.generate(mode="draft")
    refused = compiler.apply("biome")
    assert not refused.written and "without the generated marker" in (refused.reason or "")
    assert "My own careful words." in active.read_text()
    assert compiler.layout.proposal_path("biome").exists()  # the draft is kept for later
    assert compiler.apply("biome", force=True).written
    assert "My own careful words." not in active.read_text()


def test_paths_escaping_the_generated_dir_are_refused(
    compiler: SkillCompiler, tmp_path: Path
) -> None:
    layout = compiler.layout
    for slug in ("../../etc", "a/b", "..", "", "UPPER", "x" * 65):
        with pytest.raises(UnsafeSkillPath):
            compiler.apply(slug)
    for relative in (
        ".opencode/skills/generated/../../../x/SKILL.md",
        "/etc/passwd",
        ".opencode/skills/generated/ok/../../SKILL.md",
        ".swarm/knowledge.jsonl",
        ".opencode/skills/generated/ok/other.md",
    ):
        with pytest.raises(UnsafeSkillPath):
            layout.generated_target(relative)
    assert layout.generated_target(".opencode/skills/generated/ok/SKILL.md") == layout.active_path(
        "ok"
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, layout.generated_dir / "linked")
    with pytest.raises(UnsafeSkillPath, match="outside"):
        layout.active_path("linked")
    assert list(outside.iterdir()) == []


def test_eval_fixtures_gate_and_rejected_edits(compiler: SkillCompiler) -> None:
    evals = compiler.layout.evals_dir / "biome"
    evals.mkdir(parents=True)
    (evals / "cases.json").write_text(
        json.dumps(
            {
                "cases": [
                    {
                        "id": "must-mention-ci",
                        "required_phrases": ["pushing to CI"],
                        "forbidden_phrases": ["--no-verify"],
                    },
                ]
            }
        )
    )
    (evals / "strict.json").write_text(json.dumps([{"required_phrases": ["rollback plan"]}]))
    [refused] = compiler.generate(mode="active")
    assert not refused.written and refused.reason == "validation_failed: candidate fails eval cases"
    assert not compiler.layout.active_path("biome").exists()
    buffer = RejectedEdits(compiler.layout.rejected_edits)
    [record] = buffer.records()
    assert record["slug"] == "biome" and record["operation"] == "skill_generate:active"
    [again] = compiler.generate(mode="active")
    assert again.reason == "equivalent content was rejected before by the same eval fixtures"
    (evals / "strict.json").unlink()
    [ok] = compiler.generate(mode="active")
    assert ok.written and ok.evaluation is not None and ok.evaluation.status == "passed"
    # Regenerating the same knowledge does not strictly improve the incumbent: refused.
    same = compiler.regenerate("biome")
    assert not same.written and "strictly improve" in (same.reason or "")


def test_broken_fixture_fails_closed(compiler: SkillCompiler) -> None:
    evals = compiler.layout.evals_dir / "biome"
    evals.mkdir(parents=True)
    (evals / "bad.json").write_text("{not json")
    [result] = compiler.generate(mode="draft")
    assert not result.written and result.evaluation is not None
    assert (
        result.evaluation.status == "invalid_eval_set"
        and "invalid JSON" in result.evaluation.reason
    )


def test_stale_skill_is_reported_and_regenerated(compiler: SkillCompiler) -> None:
    compiler.generate(mode="active")
    store = compiler.stores[0]
    store.update(
        "k2",
        {
            "lesson": "Run the biome lint config check before every push to CI.",
            "updated_at": "2026-05-09T00:00:00.000Z",
        },
    )
    [listed] = compiler.listing()["active"]
    assert listed["stale"] == ["updated_after_generation:k2"]
    result = compiler.regenerate("biome", evaluate_it=False)
    assert result.written
    text = compiler.layout.active_path("biome").read_text()
    assert "version: 2" in text and "before every push to CI" in text


def test_all_sources_archived_retires_the_skill(compiler: SkillCompiler) -> None:
    compiler.generate(mode="active")
    for entry_id in ("k1", "k2"):
        compiler.stores[0].update(entry_id, {"status": "archived"})
    result = compiler.regenerate("biome")
    assert not result.written and "retired" in (result.reason or "")
    assert (compiler.layout.generated_dir / "biome" / "retired.marker").exists()
    assert compiler.listing()["active"] == []


def test_rejected_edits_buffer_is_bounded(tmp_path: Path) -> None:
    from swarmq.skills._evals import Evaluation

    buffer = RejectedEdits(tmp_path / "rejected-edits.jsonl", cap=3)
    locks = LocalLocks(tmp_path / "locks")
    for n in range(5):
        buffer.record(
            locks,
            slug="s",
            operation="op",
            candidate=f"content {n}",
            evaluation=Evaluation("rejected", False, "nope"),
        )
    assert [r["candidatePreview"] for r in buffer.records()] == [
        "content 2",
        "content 3",
        "content 4",
    ]
    assert buffer.is_rejected("s", "CONTENT   4") and not buffer.is_rejected("s", "content 0")
