"""A task in a non-Latin script reaches an entry by its cosine only when the two share a term
(``KnowledgeConfig.non_latin_needs_term``, issue 26): the packaged models are English models,
and between two Chinese texts their cosine clears the dense floor for unrelated lessons (a
logging rule for a cache-size task), so a Chinese task on anything was answered. A Chinese task
sharing an identifier with its lesson still reaches it, and English tasks are unchanged. The
real packaged WordLlama, real lessons of a Chinese swarm store."""

from __future__ import annotations

from collections.abc import Callable

from swarmq.knowledge.config import DenseModel
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.query import QueryContext, search
from tests.knowledge.test_relevance import LESSONS, seeded

LOGGING = (
    "日志需要详尽，方便后期通过日志 debug，以及分析代码执行逻辑。所有关键函数入口/出口、分支决策、"
    "外部调用（CLI spawn、DB query、API call）、错误处理路径都必须有日志覆盖。"
)
BACKUP = (
    "saveFullProject 的 backup/restore 模式比修改 CASCADE 约束更安全，因为不需要 schema migration"
)
UNRELATED = "为 execution-registry 的内存 history Map 添加 LRU 容量限制（上限 50 条）"
RELATED = "修复 saveFullProject 级联删除导致执行记录丢失"


def store(make: Callable[..., KnowledgeStore], **config: object) -> KnowledgeStore:
    knowledge = make(dense_model=DenseModel.WORDLLAMA, **config)
    for lesson in (LOGGING, BACKUP):
        assert knowledge.add_lesson(lesson).outcome == "added"
    return knowledge


def test_a_chinese_task_sharing_no_term_is_not_answered_by_the_cosine_alone(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = store(make_knowledge)
    assert knowledge.config.non_latin_needs_term
    assert search(knowledge, QueryContext(text=UNRELATED)) == []
    # without the rule the English model's cosine alone admits a lesson that shares nothing
    loose = knowledge.with_config(
        knowledge.config.model_copy(update={"non_latin_needs_term": False})
    )
    found = search(loose, QueryContext(text=UNRELATED))
    assert found and found[0].breakdown["relevance"] == 0.0  # no shared term
    assert found[0].breakdown["cosine"] >= loose.config.dense_floor


def test_a_chinese_task_sharing_a_term_still_reaches_its_lesson(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    found = search(store(make_knowledge), QueryContext(text=RELATED))
    assert found and found[0].entry.lesson == BACKUP


def test_an_english_task_still_reaches_a_lesson_by_meaning_alone(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = seeded(make_knowledge)
    assert knowledge.config.non_latin_needs_term
    found = search(
        knowledge, QueryContext(text="Cap the payload size accepted from each socket peer")
    )
    assert found and found[0].entry.lesson == LESSONS[3]
    # too few shared words: the cosine admitted it
    assert found[0].breakdown["relevance"] < knowledge.config.inject_min_relevance
