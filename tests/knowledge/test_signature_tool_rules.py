"""Failures that are one rule of a tool whatever file they name: each recurrence on another file
must carry the signature of the first, or recall and confirmation by recurrence never meet it."""

from __future__ import annotations

import pytest

from swarmq.knowledge._factrule import FactKind, fact_kind
from swarmq.knowledge.signature import failure_signature


@pytest.mark.parametrize(
    "text",
    [
        "$ C:\\repo\\tests\\test_a.py\n<tool_use_error>File has been modified since read, either by"
        " the user or by a linter. Read it again before attempting to write it.</tool_use_error>",
        "$ C:/repo/requirements-dev.txt\nFile has been unexpectedly modified. Read it again before"
        " attempting to write it.",
        "$ Edit src/runner.py\nFile has been unexpectedly modified. Read it again before attempting"
        " to write it.",
    ],
)
def test_an_edit_on_a_stale_read_is_one_failure_whatever_the_file(text: str) -> None:
    assert failure_signature(text) == "Edit: file modified since read"


@pytest.mark.parametrize(
    "text",
    [
        "$ cd /c/repo && python -m ruff format --check .\nExit code 1\n\nWould reformat:"
        " src\\runner.py\n1 file would be reformatted, 21 files already formatted",
        "$ .venv/Scripts/python.exe -m ruff format --check src/market/\nWould reformat:"
        " src\\market\\universe_selector.py",
        "$ black --check .\nwould reformat /home/u/app/models.py\n\nOh no!\n"
        "3 files would be reformatted, 9 files would be left unchanged.",
    ],
)
def test_a_formatter_check_on_unformatted_files_is_one_failure(text: str) -> None:
    assert failure_signature(text) == "formatter: would reformat"


def test_a_console_encoding_is_an_environment_fact() -> None:
    lesson = (
        "`python -c \"print('✅ ok')\"` failed (UnicodeEncodeError: 'gbk' codec can't encode);"
        " Python's text encoding here is GBK, not UTF-8: set `PYTHONIOENCODING=utf-8` before"
        " printing"
    )
    assert fact_kind(lesson) is FactKind.ENVIRONMENT
    assert (
        fact_kind("Set PYTHONIOENCODING=utf-8 so the CLI can print emoji") is FactKind.ENVIRONMENT
    )
    assert fact_kind("Decode the upload with the encoding the client declares") is None


def test_a_shell_that_keeps_its_working_directory_is_an_environment_fact() -> None:
    """Every call of the session runs where the last ``cd`` left it: true at each session start."""
    lesson = (
        "`cd web && npm run lint` failed (cd: web: No such file or directory); the shell was "
        "still in `web` from an earlier `cd` (it keeps its working directory between calls): use "
        "an absolute path in `cd`."
    )
    assert fact_kind(lesson) is FactKind.ENVIRONMENT
    assert fact_kind("Change the working directory of the worker before it starts") is None
