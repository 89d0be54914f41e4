"""Headings lead the lists under them; summaries, next steps, options and code are not lessons.

Examples written for these tests, in the shapes agents write: a "**Changes**" label over a list
of edits, a "### Next steps" heading over recommendations (in English and in Vietnamese), an
"Option 2:" proposal, "I've traced …" narration, and source lines pasted without a fence.
"""

from __future__ import annotations

import pytest

from swarmq.forge.classifier import classify
from swarmq.forge.passages import passages

MESSAGE = """**Changes**
- Updated the retry loop in `worker.py`.
- Removed the old flag.

### 💡 Đề Xuất Hành Động

1. **Kiểm tra lại chiến dịch**: cần xác nhận nguồn traffic chính ngay.

2. **Theo dõi sát traffic**: kiểm tra tracking code và lịch đăng bài.

Lessons learned:
- a
- b
"""


def test_a_heading_or_a_bold_label_leads_every_item_under_it() -> None:
    leads = [lead for lead, _ in passages(MESSAGE)]
    assert leads[:4] == ["Changes:", "Changes:", "Đề Xuất Hành Động:", "Đề Xuất Hành Động:"]
    assert leads[-2:] == ["Lessons learned:", "Lessons learned:"]


def test_a_heading_does_not_lead_prose_paragraphs() -> None:
    text = "## Root cause\n\nThe worker never acks, because the broker closes idle channels."
    assert list(passages(text)) == [
        ("", "The worker never acks, because the broker closes idle channels.")
    ]


@pytest.mark.parametrize(
    ("lead", "text"),
    [
        ("Next steps:", "Always run the migrations with `--fake-initial` on the staging database."),
        ("Recommendations:", "Never run `npm audit fix --force` on the shared lockfile."),
        ("Đề Xuất Hành Động:", "Lưu ý: thư mục `.claude` là thư mục ẩn trong Finder."),
        ("下一步:", "Always use `uv run` instead of pip for the tooling scripts."),
    ],
)
def test_items_under_a_plan_heading_need_a_reason(lead: str, text: str) -> None:
    assert classify(text).accepted
    assert not classify(text, lead=lead).accepted


@pytest.mark.parametrize(
    "text",
    [
        "Installed the Chrome MCP server with `npm install -g chrome-mcp`, as the docs instruct.",
        "Switched to branch-v2.4.0-dev and merged main into it, the fix for the deploy.",
        "The fix is applied and the note about `--no-lock` is in the README.",
        "**Option 3: Switch to regular `initialize()` instead of `initializeWithAnalytics`**",
    ],
)
def test_reports_and_proposals_are_not_lessons(text: str) -> None:
    assert not classify(text).accepted


@pytest.mark.parametrize(
    "text",
    [
        "I've traced through the codebase and found the root cause of the issue.",
        "// Avoid int->int32 wraparound on unexpected or corrupted data, never trust it.",
        'outcome := models.Outcome{Decision: "APPROVED"} because the mock expects it.',
    ],
)
def test_narration_and_source_lines_are_not_lessons(text: str) -> None:
    assert not classify(text).accepted
