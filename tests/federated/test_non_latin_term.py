"""Learnings for a task in a non-Latin script are measured in meaning only when they share a
term with it (issue 26): the English model behind the cosines puts any two Japanese texts near
each other, so a short Japanese policy note whose title sits at cosine 0.36 to every task was
injected for tasks it has nothing to do with. A learning sharing a term with the task is still
judged by the learned relevance, and English tasks are unchanged. Real files; the cosines are
fixed per text so the rule is tested exactly."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from swarmq.federated.meaning import LEARNED, WORDLLAMA
from swarmq.flywheel.lookup import Cosines, search
from swarmq.flywheel.store import AgentsLayout

MODEL = LEARNED[WORDLLAMA]
TASK = "P3: 全点のセリフ・表情・ポーズ表を作る"
POLICY = (
    "# 共有 learnings の記録方針\n\n"
    "- チームで再発を防ぐ必要がある知見だけを記録する。個人の好みや環境固有の設定は各ツールの個人メモへ置く\n"
)
SHEET = "# セリフ表の注意\n\n- 全点のセリフは短くし、表情とポーズを一覧で確認する\n"
ENGLISH_TASK = "Address the review comments on the workflows pull request"
ENGLISH = "# Verify Reviewer Suggestions Before Implementing\n\nCheck each suggestion first.\n"


def layout_with(root: Path, *files: tuple[str, str]) -> AgentsLayout:
    learnings = root / ".agents" / "learnings"
    learnings.mkdir(parents=True)
    for name, text in files:
        (learnings / name).write_text(text, encoding="utf-8")
    return AgentsLayout(root / ".agents")


def near(value: float) -> Cosines:
    """Every text and title at ``value``: what the English model gives two Japanese texts."""

    def cosines(texts: Sequence[str]) -> list[float]:
        return [value for _ in texts]

    return cosines


def found(layout: AgentsLayout, task: str, *, gate: bool) -> list[str]:
    hits = search(
        layout,
        task,
        min_relevance=0.45,
        include_pool=False,
        cosines=near(0.65),
        min_cosine=0.4,
        min_title_cosine=0.4,
        learned=MODEL,
        non_latin_needs_term=gate,
    )
    return sorted(Path(h.path).name for h in hits)


def test_a_japanese_task_is_measured_in_meaning_only_against_learnings_sharing_a_term(
    tmp_path: Path,
) -> None:
    layout = layout_with(tmp_path, ("policy.md", POLICY), ("sheet.md", SHEET))
    # the model alone admits both: cosine 0.65 and title 0.65, whatever they say
    assert MODEL.relevance(0.0, 0.65, 0.65) is not None
    assert found(layout, TASK, gate=False) == ["policy.md", "sheet.md"]
    # the policy note shares no term (word or CJK bigram) with the task; the sheet note does
    assert found(layout, TASK, gate=True) == ["sheet.md"]


def test_an_english_task_is_unchanged(tmp_path: Path) -> None:
    layout = layout_with(tmp_path, ("review.md", ENGLISH))
    assert found(layout, ENGLISH_TASK, gate=True) == found(layout, ENGLISH_TASK, gate=False)
    assert found(layout, ENGLISH_TASK, gate=True) == ["review.md"]
