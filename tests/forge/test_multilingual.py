"""Lessons stated in other languages, pasted logs and lead-ins: issue 10's general fixes."""

from __future__ import annotations

import pytest

from swarmq.flywheel.model import KnowledgeType
from swarmq.forge.classifier import classify
from swarmq.forge.templates import is_pasted_log


@pytest.mark.parametrize(
    ("text", "ktype"),
    [
        (
            "Không có quyền sudo từ đây, nên Node.js được cài vào ~/.local/nodejs.",
            KnowledgeType.LEARNING,
        ),
        (
            "注意：这个网关不支持 Task 工具调用，会返回 400 model_not_supported。",
            KnowledgeType.LEARNING,
        ),
        (
            "根本原因是 worker 在取锁之前读取了 config.yaml，导致两个进程同时写入。",
            KnowledgeType.FAILURE,
        ),
        ("我们决定使用 SQLite 而不是 Postgres，因为它不需要单独的服务。", KnowledgeType.DECISION),
        (
            "この環境には rg がインストールされていません。grep -R を使ってください。",
            KnowledgeType.LEARNING,
        ),
        (
            "Nota: siempre hay que ejecutar `make check` antes de publicar la versión 2.1.",
            KnowledgeType.LEARNING,
        ),
        (
            "La solución fue fijar PYTHONHASHSEED=0 antes de ejecutar los tests de integración.",
            KnowledgeType.SOLUTION,
        ),
    ],
)
def test_findings_in_other_languages_are_kept(text: str, ktype: KnowledgeType) -> None:
    verdict = classify(text)
    assert verdict.accepted and verdict.type is ktype, verdict


@pytest.mark.parametrize(
    ("text", "observed"),
    [
        ("Để tôi kiểm tra xem bạn đã cài Node.js chưa, rồi tôi sẽ cài nó.", True),  # narration
        ("让我先看看这个项目的结构，然后决定使用哪个框架。", True),  # narration
        ("Thư mục đang trống hoặc có thể không có quyền đọc từ đây trong sandbox.", True),  # hedged
        (
            "Máy này chưa cài Node.js, npm và Homebrew, kiểm tra giúp tôi nhé bạn ơi.",
            False,
        ),  # a user's report
        ("这是一个关于 NVIDIA B200 上 W4A8 量化加速支持的好问题，我们来看一下。", True),  # no cue
    ],
)
def test_narration_hedges_and_reports_in_other_languages_are_not(text: str, observed: bool) -> None:
    assert not classify(text, observed=observed).accepted


def test_a_lead_in_is_cut_from_a_finding_and_alone_is_nothing() -> None:
    found = classify(
        "The sandbox blocks outbound network access, so web_search returns nothing. You can try:"
    )
    assert found.accepted and found.text.endswith("returns nothing.")
    assert (
        classify("**Important: before pushing the ~/.claude folder to GitHub, note:**").reason
        == "lead-in"
    )


def test_pasted_logs_are_recognised() -> None:
    log = (
        "the worker keeps dying, fix it\n"
        "2026-03-01 10:00:01 INFO starting worker pid=41\n"
        "2026-03-01 10:00:02 ERROR connection refused because the broker is down\n"
        "Traceback (most recent call last):\n"
        '  File "worker.py", line 12, in run\n'
        "ConnectionError: refused\n"
    )
    assert is_pasted_log(log)
    prose = "We decided to keep Redis.\nThe root cause was the clock.\nAlways run make check.\nerror: not here"
    assert not is_pasted_log(prose)
    assert not is_pasted_log("2026-03-01 10:00:01 INFO one line\n2026-03-01 ERROR two")


@pytest.mark.parametrize(
    "text",
    [
        "记住往后的回复都用中文",  # remember: answer in Chinese from now on
        "列出修改计划,我同意后再执行",  # list the plan; act only after I agree
        "今後は日本語で返信してください",
        "앞으로는 커밋 메시지를 한국어로 써 주세요",
        "A partir de ahora usa pnpm en este repositorio",
    ],
)
def test_a_users_short_standing_rule_in_another_language_is_kept(text: str) -> None:
    """Ideographs say more per character than letters: eleven of them are a whole rule."""
    verdict = classify(text, min_confidence=0.6, observed=False)
    assert verdict.accepted and verdict.type is KnowledgeType.LEARNING


def test_an_agent_speaking_of_its_own_memory_is_no_standing_rule() -> None:
    text = "每次新对话我不会自动记住上一次聊了什么。"  # "I don't remember past chats"
    assert not classify(text, min_confidence=0.6, observed=True).accepted
    assert not classify("继续", min_confidence=0.6, observed=False).accepted  # "go on"
