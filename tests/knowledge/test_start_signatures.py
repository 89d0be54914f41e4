"""Which facts the session-start block keeps when more qualify than fit: one entry per failure
signature first, and within a signature the lesson with a cure first."""

from __future__ import annotations

from swarmq.knowledge.facts import CURELESS_TAG, session_start, start_entries
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.reinforcement import NewLesson

CURELESS = (
    "`curl -s http://localhost:8003/health | jq .` failed (/bin/bash: line 1: jq: command not "
    "found); `jq` is not installed here (not on PATH)."
)
CURED = (
    "`curl -s http://localhost:3001/api/items | jq '.'` failed (/bin/bash: line 1: jq: command "
    "not found); `jq` is not installed here (not on PATH); the same command without jq worked."
)
ALSO_CURED = (
    "`curl -X PUT http://localhost:3001/api/items/7 | jq .` failed (/bin/bash: line 1: jq: "
    "command not found; curl: (23) Failed writing body); the same command without jq worked."
)
OTHER = (
    "`cd web && npm run lint` failed (/bin/bash: line 1: cd: web: No such file or directory); "
    "the shell keeps its working directory between calls: use an absolute path in `cd`."
)


def _add(knowledge: KnowledgeStore, lesson: str, confidence: float, tags: list[str]) -> str:
    added = knowledge.swarm.add(
        NewLesson(lesson, tags=tags, confidence=confidence, project_fact=True)
    )
    assert added.entry is not None, lesson
    return added.entry.id


def test_a_second_lesson_of_one_signature_waits_behind_another_fact(
    knowledge: KnowledgeStore,
) -> None:
    cureless = _add(knowledge, CURELESS, 0.95, ["agentops", CURELESS_TAG])
    cured = _add(knowledge, CURED, 0.9, ["agentops", "solution"])
    also = _add(knowledge, ALSO_CURED, 0.9, ["agentops", "solution"])
    other = _add(knowledge, OTHER, 0.5, ["agentops", "solution"])
    order = [r.entry.id for r in start_entries(knowledge)]
    # the cured jq lesson stands for its signature, the other fact next, the repeats behind
    assert order[:2] == [cured, other] or order[:2] == [also, other]
    assert set(order[2:]) == {cureless, cured, also} - {order[0]}
    assert order.index(cureless) > order.index(other)
    shown = [r.entry.id for r in session_start(knowledge, record=False).shown]
    assert other in shown and shown[0] in (cured, also)


def test_a_cureless_lesson_still_stands_for_a_signature_nothing_cures(
    knowledge: KnowledgeStore,
) -> None:
    cureless = _add(knowledge, CURELESS, 0.95, ["agentops", CURELESS_TAG])
    other = _add(knowledge, OTHER, 0.5, ["agentops", "solution"])
    assert [r.entry.id for r in start_entries(knowledge)] == [cureless, other]
