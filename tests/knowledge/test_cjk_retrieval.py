"""Lessons in Chinese (and other non-Latin scripts) are found by their own words.

The store is the real rules of ``eval/knowledge/xlang`` (each in English and in Chinese); the
tasks are Chinese wordings of a rule, written for this test, never copied from it. Before
retrieval kept CJK text as character bigrams, a Chinese lesson was to the ranking only its
ASCII residue (identifiers, dates), so none of these tasks found anything."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmq.knowledge._ftsindex import sidecar_path
from swarmq.knowledge._loaded import forget
from swarmq.knowledge.config import KnowledgeConfig, Retrieval
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from swarmq.similarity.normalize import retrieval_terms, terms
from swarmq.storage.locking import LocalLocks

XLANG = Path(__file__).resolve().parents[2] / "eval" / "knowledge" / "xlang" / "stores"
CONFIG = KnowledgeConfig(swarm_max_entries=None, hive_max_entries=None, retrieval=Retrieval.LEXICAL)
TASKS = [
    ("我能强制推送覆盖远端分支吗", "34b78f03"),  # never force push
    ("提交时签名失败了，要不要自己修一下", "e466c127"),  # never touch GPG; ask the user
    ("容器镜像里启动命令该用哪个指令", "bb579f3d"),  # CMD, not ENTRYPOINT
    ("集成测试的网络服务应该绑定哪个端口", "eee0ad48"),  # random high ports
]


@pytest.fixture
def xlang_store(tmp_path: Path) -> Callable[..., KnowledgeStore]:
    """Both repositories' rules, English and Chinese, in one swarm store (a fresh process's
    view: ``forget`` drops the mirror, so a search reads the persisted index)."""
    swarm = tmp_path / "project" / ".swarm" / "knowledge.jsonl"
    swarm.parent.mkdir(parents=True)
    swarm.write_text("".join(p.read_text() for p in sorted(XLANG.glob("*.jsonl"))))

    def make(**config: object) -> KnowledgeStore:
        forget(swarm)
        return KnowledgeStore(
            tmp_path / "project" / ".swarm",
            locks=LocalLocks(tmp_path / "locks"),
            config=CONFIG.model_copy(update=config),
            data_dir=tmp_path / "data",
            project_name="proj",
        )

    return make


def test_cjk_text_becomes_character_bigrams_and_other_scripts_words() -> None:
    assert retrieval_terms("绝不强制推送") == ["绝不", "不强", "强制", "制推", "推送"]
    # a one-character run is kept whole; punctuation and Latin split runs
    assert retrieval_terms("用 make，不要「手」跑") == ["make", "用", "不要", "手", "跑"]
    assert retrieval_terms("テストを実行") == ["テス", "スト", "トを", "を実", "実行"]
    assert retrieval_terms("Никогда не делайте Force Push") == [
        "forc",
        "push",
        "никогда",
        "не",
        "делайте",
    ]
    assert retrieval_terms("Σφάλμα σύνδεσης") == ["σφάλμα", "σύνδεσης"]


def test_ascii_terms_are_unchanged() -> None:
    texts = [
        "mockEnv sql.init.mode validates v0.2.83",
        "Wrap every localStorage access in try/catch: Safari private mode throws on write",
        *(json.loads(line)["lesson"] for p in XLANG.glob("*.jsonl") for line in p.open()),
    ]
    for text in texts:
        got = retrieval_terms(text)
        assert got[: len(terms(text))] == terms(text)  # today's terms first, in order
        if text.isascii():
            assert got == terms(text)


@pytest.mark.parametrize("persistent_index", [True, False])
def test_a_chinese_task_finds_the_chinese_lesson(
    xlang_store: Callable[..., KnowledgeStore], persistent_index: bool
) -> None:
    knowledge = xlang_store(persistent_index=persistent_index)
    for task, expected in TASKS:
        found = [r.entry.id[:8] for r in search(knowledge, QueryContext(text=task), limit=3)]
        assert expected in found, (task, found)
    # a task on something the store never mentions matches a stray bigram ("写一"), not a rule
    assert search(knowledge, QueryContext(text="写一首关于秋天落叶的诗")) == []
    if persistent_index:
        assert knowledge.swarm.tier_file.mirror.state is None, "the store was loaded"
        assert sidecar_path(knowledge.swarm.files.knowledge).exists()


def test_the_index_and_the_loaded_store_answer_chinese_tasks_alike(
    xlang_store: Callable[..., KnowledgeStore],
) -> None:
    def answers(knowledge: KnowledgeStore) -> list[list[tuple[str, float]]]:
        return [
            [(r.entry.id, round(r.score, 9)) for r in search(knowledge, QueryContext(text=t))]
            for t, _ in TASKS
        ]

    indexed = answers(xlang_store())
    assert indexed == answers(xlang_store(persistent_index=False))
    assert all(indexed)


def test_words_of_a_script_no_lesson_holds_do_not_dilute_the_task(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    """A Russian task over an English store is matched on its identifiers as before (no lesson
    could share its Russian words); once a Russian lesson exists, its words count."""
    knowledge = make_knowledge(retrieval=Retrieval.LEXICAL)
    knowledge.add_lesson("Persist the selected theme in localStorage across reloads")
    task = QueryContext(text="Сохранять выбранную тему в localStorage между перезагрузками")
    assert [r.entry.lesson[:7] for r in search(knowledge, task)] == ["Persist"]
    knowledge.add_lesson("Очищайте кэш сборки перед релизом")  # "clear the build cache"
    found = search(knowledge, QueryContext(text="Как очищайте кэш перед релизом?"))
    assert [r.entry.lesson[:8] for r in found] == ["Очищайте"]
