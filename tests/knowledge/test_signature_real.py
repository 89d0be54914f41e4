"""Failure signatures on the failing tool calls of 94 real Claude Code and Codex sessions
(``eval/recall/failures.json``: each case's session, line and source repository, and a hand
label naming the failure, so that two cases with one label are the same mistake)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from swarmq.forge._calls import error_excerpt, summarise_call
from swarmq.knowledge.signature import failure_signature, failure_signatures

FIXTURE = Path(__file__).resolve().parents[2] / "eval" / "recall" / "failures.json"
CASES: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]
UNLABELLED = ("none", "other")


def hook_text(case: dict[str, Any]) -> str:
    call = case["call"].splitlines()[0] if case["call"] else case["tool"]
    return f"$ {call}\n{case['error']}"


def test_the_fixture_is_labelled_and_sourced() -> None:
    assert len(CASES) >= 150
    for case in CASES:
        assert case["group"], case
        assert case["source"]["repository"] and len(case["source"]["commit"]) == 40


@pytest.mark.parametrize(
    "case", [c for c in CASES if c["group"] == "none"], ids=lambda c: f"{c['file']}:{c['line']}"
)
def test_what_did_not_fail_has_no_signature(case: dict[str, Any]) -> None:
    """A search without a match, an empty ``which``, a call the user refused."""
    assert failure_signature(hook_text(case)) is None


def test_one_failure_one_signature_and_different_failures_differ() -> None:
    by_group: dict[str, set[str | None]] = defaultdict(set)
    for case in CASES:
        if case["group"] not in UNLABELLED:
            by_group[case["group"]].add(failure_signature(hook_text(case)))
    split = {g for g, s in by_group.items() if len(s) != 1 or None in s}
    # rg given several -n patterns reads the later ones as files: one mistake, but each miss
    # names another "file", and a signature that kept them apart is what tells the spec-kit
    # commands directory (missing in four projects) from any other `ls` miss
    assert split == {"rg-extra-pattern-as-file"}
    owner: dict[str, str] = {}
    for group, signatures in by_group.items():
        for signature in signatures:
            assert signature is not None
            assert owner.setdefault(signature, group) == group, (signature, owner[signature], group)


def test_recurring_failures_match_across_sessions() -> None:
    recurring = defaultdict(set)
    for case in CASES:
        if case["group"] not in UNLABELLED:
            recurring[case["group"]].add(case["file"])
    assert sum(len(files) > 1 for files in recurring.values()) >= 9


def test_forge_lessons_carry_the_signature_of_their_failure() -> None:
    """A tool-error lesson as forge writes it (the call, then its error line) matches the
    failure it came from, so the next occurrence recalls it."""
    labelled = [c for c in CASES if c["group"] not in UNLABELLED]
    matched = 0
    for case in labelled:
        lesson = (
            f"`{summarise_call(case['call'])}` failed ({error_excerpt(case['error'])}) "
            "and no retry worked."
        )
        matched += failure_signature(lesson) in failure_signatures(hook_text(case))
    assert matched / len(labelled) >= 0.85


def test_a_missing_program_in_a_localised_powershell_has_one_signature() -> None:
    """German PowerShell says "Die Benennung … wurde nicht … erkannt"; its error record is the
    same in every language, and forge's lesson keeps the record's id: both name the program."""
    output = (
        'pwsh : Die Benennung "pwsh" wurde nicht als Name eines Cmdlet, einer Funktion, einer '
        "Skriptdatei oder eines \r\nausführbaren Programms erkannt.\r\nIn Zeile:1 Zeichen:1\r\n"
        "+ pwsh -NoLogo\r\n+ ~~~~\r\n    + CategoryInfo          : ObjectNotFound: (pwsh:String) "
        "[], CommandNotFoundException\r\n"
        "    + FullyQualifiedErrorId : CommandNotFoundException\r\n"
    )
    call = "pwsh -NoLogo -NoProfile -Command Get-ChildItem"
    assert failure_signature(f"$ {call}\n{output}") == "pwsh: command not found"
    lesson = f"`{call}` failed ({error_excerpt(output)}); `pwsh` is not installed here."
    assert failure_signature(lesson) == "pwsh: command not found"


def test_a_powershell_error_id_in_a_lesson_leaves_the_signature_of_its_failure() -> None:
    output = (
        'At C:\\s\\verify.ps1:21 char:22\r\n+     $a += "x y"\r\n+          ~~~\r\n'
        "Unexpected token 'y' in expression or statement.\r\n"
        "    + CategoryInfo          : ParserError: (:) [], ParseException\r\n"
        "    + FullyQualifiedErrorId : UnexpectedToken\r\n"
    )
    call = '& ".\\verify.ps1" -Detailed'
    lesson = f"`{call}` failed ({error_excerpt(output)}); no retry worked."
    assert "(UnexpectedToken)" in lesson
    assert failure_signature(lesson) == failure_signature(f"$ {call}\n{output}")
