"""One lesson in two languages: the multilingual model proposes the pair, structure still
decides, and a lesson in a non-Latin script is never judged by its ASCII residue."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.consolidation.knowledge import consolidate_tier
from swarmq.similarity.multilingual import available
from swarmq.similarity.script import non_latin
from tests.consolidation.support import entry, write_store

# go-spring/go-spring CLAUDE.md and its Chinese translation CLAUDE.zh.md (eval/knowledge/xlang)
TRADEOFF_EN = (
    "Give each proposal one complete technical trade-off analysis (risks and costs included); "
    "once the user decides, execute it fully and without commentary, and do not re-argue "
    "(2026-09-21)."
)
TRADEOFF_ZH = "每个提议给一次完整的技术权衡（含风险与代价）；用户拍板后不带评判地执行到底，不重复反驳（2026-09-21）。"
USER_WINS_ZH = (
    "上一条是自我约束，不是可以拿来挡用户的边界：用户显式指示时以用户为准（2026-09-21）。"
)
NO_DEFEND_ZH = "不为当前代码辩护：不得用「现状如此 / 代码里就是这么写的」作为论证（2026-09-28）。"
ONLY_ASKED_ZH = (
    "只回答被问的问题：被问事实就只给事实（调用点、依赖边、行号）；分析类内容仅在明确要求时输出，"
    "且一轮讲完（2026-09-28）。"
)
REDERIVE_EN = (
    "When a premise of yours is disproved, re-derive the conclusion instead of swapping in "
    "another premise to defend the same conclusion."
)
REDERIVE_ZH = "发现自己论据被证伪时，重新推导结论，而不是换一个论据守同一个结论。"
LICENSE_EN = (
    "Every source file must carry the Apache License header; see [LICENSE_HEADER]"
    "(LICENSE_HEADER) for the template."
)


def test_the_script_of_a_lesson_is_judged_by_its_words_not_its_identifiers() -> None:
    assert non_latin(TRADEOFF_ZH) and non_latin("Не используйте force push")
    assert non_latin(
        "Go 程序中不应使用 context.TODO 与 context.Background。凡有可能，请使用带超时的 context"
    )
    assert not non_latin(TRADEOFF_EN)
    assert not non_latin("Không được sửa file cấu hình khi đang chạy")  # Latin with diacritics
    assert not non_latin("Straße müssen überprüft werden") and not non_latin("Use the 中文 name")


def test_chinese_lessons_sharing_only_a_date_are_not_duplicates(tmp_path: Path) -> None:
    """Their ASCII residue ("2026 09 21") is equal; their words are not."""
    store = write_store(
        tmp_path,
        [
            entry("a", TRADEOFF_ZH),
            entry("b", USER_WINS_ZH),
            entry("c", NO_DEFEND_ZH),
            entry("d", ONLY_ASKED_ZH),
        ],
    )
    config = ConsolidationConfig(multilingual_duplicates=False)
    report = consolidate_tier(store.swarm, config, scope="swarm", dry_run=True)
    assert report.plan.actions == []


@pytest.mark.skipif(not available(), reason="the multilingual extra is not installed")
def test_a_translation_merges_by_meaning_and_records_both_scores(tmp_path: Path) -> None:
    store = write_store(
        tmp_path,
        [
            entry("en", REDERIVE_EN),
            entry("zh", REDERIVE_ZH),
            entry("other-zh", NO_DEFEND_ZH),
            entry("other-en", LICENSE_EN),
            # the same rule copied into another project hides nothing and merges with nothing
            entry("elsewhere", REDERIVE_ZH.replace("结论，", "结论；"), project="q"),
        ],
    )
    report = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm", dry_run=True)
    [action] = report.plan.actions
    assert sorted((action.keep, action.other)) == ["en", "zh"]
    assert action.reason.value == "paraphrase"
    assert action.scores["multilingual_cosine"] >= ConsolidationConfig().multilingual_threshold
    assert {"term_jaccard", "bigram_jaccard"} <= action.scores.keys()

    off = ConsolidationConfig(multilingual_duplicates=False)
    assert consolidate_tier(store.swarm, off, scope="swarm", dry_run=True).plan.actions == []


@pytest.mark.skipif(not available(), reason="the multilingual extra is not installed")
def test_a_night_finds_a_translation_as_the_full_pass_does(tmp_path: Path) -> None:
    """A night's translations are the full pass's pairs with a new lesson: the scope's other
    lessons' vectors come from the file beside the store, so only the new lesson is embedded."""
    store = write_store(
        tmp_path,
        [entry("en", REDERIVE_EN), entry("other-zh", NO_DEFEND_ZH), entry("lic", LICENSE_EN)],
    )
    first = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm")
    assert first.focus is None and first.plan.actions == []
    with store.swarm.transaction() as txn:
        txn.append(entry("zh", REDERIVE_ZH, created="2026-02-01T00:00:00.000Z"))
    night = consolidate_tier(store.swarm, ConsolidationConfig(), scope="swarm", dry_run=True)
    assert night.focus == 1
    full = consolidate_tier(
        store.swarm, ConsolidationConfig(), scope="swarm", dry_run=True, full=True
    )
    [action] = full.plan.actions
    assert sorted((action.keep, action.other)) == ["en", "zh"]
    [found] = night.plan.actions
    assert (found.keep, found.other, found.scores) == (action.keep, action.other, action.scores)
