"""What was done is not what was learned: change reports, plans and quoted words.

Agents end a turn with a summary of the edits they just made ("Moved the view into
``ticket_system``", "**Fix:** move the view …", "The parser now returns …"), and open one with a
plan ("Approach: use canvas for …"). Both carry the words lessons carry ("fix", "avoid", "use …
instead of"), but neither would change what a future agent does in another session: the edit is
in the code already, the plan is an intention. A lesson states something that stays true (a
tool's behaviour, an environment fact, a cause, a rule with its reason). So, structurally:

* a **change report** (a past-tense edit verb opening the passage, a first-person edit, an
  imperative edit recipe after "Fix:", or "X now does Y") loses confidence unless it says why
  (a reason, or a purpose: "…, so a running task is never redelivered"); "Fixed by …" states a
  cure, not an edit, and is not one;
* a passage under a lead-in that announces **changes, a plan or a fix** ("Changes:", "Plan:",
  "Next steps:", "The fix:", "How it works:") does too, and so does every passage of a message
  that **opens by reporting the agent's edits** ("Perfect! I've implemented …", in the other
  languages forge reads too), and a **proposal** ("We should …");
* **advice for the task at hand** ("If you see nothing, …", a note "in your plan") needs more
  evidence than one cue: it says what to do now, not what stays true;
* a request that carries a standing note ("add X, note that Y") is cut to the note;
* cue words inside quotation marks are **mentioned, not used** (``When I say "I learned that"``)
  and do not count as signals.
"""

from __future__ import annotations

import re

CHANGE_PENALTY = 0.2
"""Taken from a change report or a planned step: a single cue no longer suffices."""

_EDIT_PAST = (
    r"added|moved|updated|removed|deleted|replaced|renamed|changed|created|implemented|refactored|"
    r"introduced|extracted|rewrote|rewritten|wired|converted|merged|bumped|adjusted|tweaked|"
    r"cleaned up|fixed(?! (?:it |this |that )?by\b)|patched|reworked|restructured|simplified|dropped|modified|edited|inlined|"
    r"installed|ran|configured|enabled|disabled|confirmed|verified|saved|applied|switched|pushed|"
    r"committed|stashed|reverted|rebased|deployed|restarted|generated|migrated"
)
_EDIT_IMPERATIVE = (
    r"move|add|remove|delete|replace|rename|put|keep|drop|split|merge|wrap|edit|update|change|patch"
)
_CHANGE = re.compile(
    rf"^(?:\*\*[^*\n]{{1,80}}\*\*\s*[:–—-]?\s*|`[^`\n]{{1,80}}`\s*[:–—-]\s*)?(?:{_EDIT_PAST})\b|"  # "Added X", "**a.py**: added X"
    rf"\b(?:I|we)(?: also| then| just| now)? (?:{_EDIT_PAST})\b|"  # "I moved X"
    r"^(?:\*\*[^*\n]{1,80}\*\*\s*[:–—-]?\s*)?(?:I|we) should\b|"  # a proposal: "We should …"
    rf"^\W*(?:fix|solution|change)\W{{0,4}}:\W*(?:{_EDIT_IMPERATIVE})\b|"  # "Fix: move X into Y"
    r"\b(?:now (?:uses|lives|returns|has|does|runs|reads|writes|shows|works|passes|handles|supports|"
    r"points|calls|checks|includes|builds|compiles|loads|renders|accepts)|(?:is|are) now)\b|"
    r"\b(?:should|will) now (?:work|pass|succeed|load|run|build|show)\b|"  # "The test should now work"
    r"\b(?:is|are|has been|have been) (?:now )?(?:applied|in place|done|resolved)\b|"  # "The fix is applied"
    r"^\W*option [0-9a-z]\b\s*[:.)–—-]",  # "Option 3: switch to …": one of several proposals
    re.IGNORECASE,
)
_CHANGE_HEADS = ("ed", "fix", "solution", "change", "now", "should", "in place", "done", "option")
"""Literals (lower-case) one of which every :data:`_CHANGE` match contains."""
_PURPOSE = re.compile(
    r"[,;] so (?!far\b)|\bin order to\b|\bto (?:avoid|prevent|keep|make sure|ensure)\b", re.I
)
"""A purpose clause: the report says why, which a reason heads list of "because / since" misses."""
_PLAN_LEAD = re.compile(
    r"\b(?:changes?|changed|summary|what (?:i|we) (?:did|changed)|files? (?:modified|changed|created|touched)|"
    r"plan|approach|next steps?|proposal|proposed|to-?do|roadmap|steps|i'll|i will|we'll|we will|"
    r"(?:the )?(?:fix|fixes|solution)|how it works|to apply|recommend(?:ed|ations?)?|"
    r"suggest(?:ed|ions?)|action items?|"
    r"(?:what(?:'s| is| was| got) )?(?:fixed|done|completed)|tests?|test results|verification)\b|"
    r"đề xuất|kế hoạch|bước tiếp theo|khuyến nghị|tóm tắt|thay đổi|"  # Vietnamese
    r"计划|下一步|建议|方案|总结|变更|修改内容|改动|"  # Chinese
    r"計画|次のステップ|提案|変更|まとめ|"  # Japanese
    r"계획|다음 단계|제안|변경|요약",  # Korean
    re.IGNORECASE,
)
"""Leads and headings that announce what was done or what to do next, in the languages forge
reads: a recommendation or a next step is for the task at hand, a summary is of the edits, and
a report's "What's Fixed" or "Tests" section lists the edits and the tests just written (the
bug a regression test pins is the one just fixed, "CSS generation working: fixed by copying …"
is this task's state)."""
_QUOTED = re.compile(r"\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|\([^()\n]{1,120}\)")


def is_change_report(body: str, lead: str = "") -> bool:
    """Whether ``body`` reports an edit just made or planned (see the module docstring)."""
    if _PURPOSE.search(body):
        return False
    if lead and _PLAN_LEAD.search(lead):
        return True
    lowered = body[:200].lower()
    return any(head in lowered for head in _CHANGE_HEADS) and _CHANGE.search(body[:200]) is not None


_REPORT_OPENING = re.compile(
    rf"\b(?:I|we)(?:'ve| have)(?: now| just| also| successfully)* (?:{_EDIT_PAST}|made|written|"
    r"built|set up|expanded|extended|documented|saved|configured|installed|enabled|disabled)\b"
)
_BARE_REPORT_OPENING = re.compile(
    rf"^\W*(?:Done[.!,:]?\s+)?(?i:{_EDIT_PAST}|wrote|written)\s+(?:a |an |the |new )?`[^`\n]+`"
)
"""The subject left out: "Created `docs/testing.md` covering: …", "Updated `README.md` with …"."""
_DONE_OPENING = re.compile(
    r"^\W*(?:[\w`'/.-]+\s+){1,4}(?:completed|finished|is complete|is done)\b|^\W*[^。\n]{0,20}完了"
)
"""A finished step announced: "Plan workflow completed on branch …", "更新完了。"."""
_FOREIGN_REPORT_OPENING = re.compile(
    r"^\W*(?:(?:tôi |mình )?đã (?:lưu|tạo|cập nhật|sửa|thêm|xóa|xoá|chuyển|viết|cài)|"  # Vietnamese
    r"已(?:修改|更新|创建|保存|添加|删除|统一|修复|重写|移除)|我(?:已经|已)(?:修改|更新|创建|保存|添加|删除|修复)|"
    r"[^。\n]{0,40}(?:を|に)(?:修正|追加|更新|作成|保存|削除)しました)",  # Japanese
    re.IGNORECASE,
)
"""The same opening in the other languages forge reads ("Đã lưu vào …", "已统一…", "…を修正しました")."""


_NOTE_LEAD = re.compile(
    r"^\W*(?:important |one |a )?(?:note|caveat|warning|heads[- ]up|gotcha)s?\W*$", re.IGNORECASE
)


def is_note(lead: str) -> bool:
    """Whether a passage's lead-in marks it as a note ("Important note:"): what a report sets
    apart from its list of edits is what it wants remembered."""
    return bool(lead) and _NOTE_LEAD.match(lead) is not None


def opens_report(message: str) -> bool:
    """Whether an agent's message opens by reporting its own edits ("Perfect! I've fixed the
    issue."): what follows describes the code as it now is, so each passage of it needs a
    reason to count, as a change report does."""
    head = message[:300].replace("’", "'")
    if not head.isascii() and _FOREIGN_REPORT_OPENING.match(head):
        return True
    if _BARE_REPORT_OPENING.match(head) or _DONE_OPENING.match(head):
        return True
    return ("'ve" in head or " have " in head) and _REPORT_OPENING.search(head) is not None


_FOR_NOW = re.compile(
    r"^\W*if you\b|\b(?:in|into|to|for) (?:your|the) plan\b|\bnote (?:this|that) in (?:your|the) plan\b",
    re.IGNORECASE,
)


def for_the_task(body: str) -> bool:
    """Whether ``body`` is addressed to the task at hand: advice to the reader on what to do
    now ("If you see nothing, …") or a note for the plan being written ("in your plan, note
    that …"), not something that stays true for later sessions."""
    lowered = body.lower()
    return ("if you" in lowered or " plan" in lowered) and _FOR_NOW.search(body) is not None


_CHECKS = re.compile(
    r"\btests?,? (?:all )?pass(?:ed|es|ing)?\b|\ball (?:tests? )?pass(?:ed|ing)\b|"
    r"\bchecks? (?:all )?pass(?:ed|es)?\b|^\W*(?:testing|verification)\s*:|^\W*verified (?:the|that)\b",
    re.IGNORECASE | re.MULTILINE,
)


def reports_checks(body: str) -> bool:
    """Whether ``body`` reports how this task's own checks went ("42 tests, all passing",
    "Testing: … so I couldn't run it", "Verified the script syntax"): the state of the work
    at hand, not something the next session needs."""
    lowered = body.lower()
    return ("pass" in lowered or "test" in lowered or "verif" in lowered) and bool(
        _CHECKS.search(body)
    )


def unquoted(text: str) -> str:
    """``text`` with its quotations blanked: the words a passage uses, not those it mentions."""
    return _QUOTED.sub(" ", text) if '"' in text or "“" in text or "(" in text else text


_STANDING = re.compile(
    r"[,;.:]\s*(?:and |but |also |btw,? )?(?:please )?(?:note that|keep in mind|remember that|be aware that)\b",
    re.IGNORECASE,
)


_CUE = re.compile(
    r"(?:and |but |also |btw,? )?(?:please )?(?=note that|keep in mind|remember that|be aware that)",
    re.I,
)


_INSTRUCTION = re.compile(
    r"(?:note that|keep in mind|remember that|be aware that)\s*(?:[,:]|you (?:should|need|must|can|have to)\b)",
    re.I,
)
""""Note that, use …" / "note that you should …": another instruction for the task, not a fact."""


def standing_note(text: str) -> str:
    """The standing fact a request carries, from its cue on ("add these notes to X, and note that
    the simulator crashes on x86" → "note that the simulator crashes on x86"), else ``""``: the
    request is for the task at hand, the note is for every later session."""
    lowered = text.lower()
    if not any(head in lowered for head in ("note", "mind", "remember", "aware")):
        return ""
    match = _STANDING.search(text)
    if match is None:
        return ""
    note = text[match.start() + 1 :].lstrip()
    cue = _CUE.match(note)
    note = note[cue.end() :].lstrip() if cue else note
    return "" if _INSTRUCTION.match(note) else note
