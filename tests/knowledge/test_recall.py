"""Failure signatures, recall at the moment of failure and project facts at session start."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmq.knowledge._ftsindex import FileIndex
from swarmq.knowledge._loaded import forget, loaded
from swarmq.knowledge._recallkeys import SESSION_START_KEY
from swarmq.knowledge._sigindex import file_matches, mirror_matches
from swarmq.knowledge.acks import acknowledge
from swarmq.knowledge.facts import session_start
from swarmq.knowledge.hive import promote_lesson
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.recall import recall_error
from swarmq.knowledge.reinforcement import NewLesson
from swarmq.knowledge.signature import SIGNATURE_FIELD, failure_signature
from swarmq.storage.locking import LocalLocks

PYTHON_LESSON = (
    '`python -c "import sys"` failed (bash: python: command not found); '
    '`python3 -c "import sys"` worked instead.'
)


@pytest.mark.parametrize(
    ("text", "signature"),
    [
        ("$ python x.py\nbash: python: command not found", "python: command not found"),
        ("$ rg -l foo\nzsh:1: command not found: rg", "rg: command not found"),
        (
            "$ npm init -y\nExit code 127\n(eval):1: command not found: npm",
            "npm: command not found",
        ),
        (
            "$ ls ~/Downloads/*.json\n(eval):1: no matches found: /Users/a/*.json",
            "zsh: no matches found",
        ),
        (
            "$ sudo mkdir -p /opt/x\nsudo: a terminal is required to read the password; either use",
            "sudo: a terminal is required",
        ),
        (
            '$ .specify/scripts/bash/create-new-feature.sh --json "x"\n'
            ".specify/scripts/bash/create-new-feature.sh: line 45: 10#Fetching: value too great "
            'for base (error token is "10#Fetching")',
            "value too great for base",
        ),
        (
            '$ python3 app.py\nTraceback (most recent call last):\n  File "app.py", line 1\n'
            "ModuleNotFoundError: No module named 'yaml'",
            "ModuleNotFoundError: No module named yaml",
        ),
        (
            "$ cat /Users/x/p/package.json\ncat: /Users/x/p/package.json: No such file or directory",
            "cat: no such file or directory: p/package.json",
        ),
        (
            "$ pwsh.exe -NoLogo -Command sed -n '1,200p' a.md\n\x1b[31;1msed: \x1b[31;1mThe term "
            "'sed' is not recognized as a name of a cmdlet, function, script file, or executable "
            "program.",
            "sed: command not found",
        ),
        (  # a lesson's error shortens the call's long path: "…" is no folder
            "`cat /h/x/readiness/step-01.md` failed (cat: …/step-01.md: No such file or directory)",
            "cat: no such file or directory: step-01.md",
        ),
        ("$ rg -n foo src\n", None),  # a search without a match is not a failure
        ("The user doesn't want to proceed with this tool use. The tool use was rejected", None),
        ("Use the bravo cache layer when reading bravo tables", None),
        (PYTHON_LESSON, "python: command not found"),
        ("There is no `python` binary here; call python3.", "python: command not found"),
        ("The shell here is zsh: quote paths with [id] or (public)", "zsh: no matches found"),
        ("sudo needs a real terminal, which the agent shell lacks", "sudo: a terminal is required"),
        ("A change is live only after `pm2 restart api`", None),
        (
            "$ docker exec -it odoo_docker-web-1 odoo -u x\nthe input device is not a TTY.  If you "
            "are using mintty, try prefixing the command with 'winpty'",
            "docker: not a tty",
        ),
        (
            "`python` is not on PATH here (command not found); use python3.",
            "python: command not found",
        ),
    ],
)
def test_signature_examples(text: str, signature: str | None) -> None:
    assert failure_signature(text) == signature


def test_platform_wordings_of_one_failure_share_a_signature() -> None:
    linux = "$ ls .specify/templates/commands\nls: cannot access '.specify/templates/commands': No such file or directory"
    macos = "$ ls .specify/templates/commands\nls: .specify/templates/commands: No such file or directory"
    assert failure_signature(linux) == failure_signature(macos)
    assert failure_signature(linux) == "ls: no such file or directory: commands"
    assert failure_signature(macos) != failure_signature(
        "$ ls build\nls: build: No such file or directory"
    )
    assert failure_signature("$ rg -l x\nbash: line 1: rg: command not found") != failure_signature(
        "$ rg x a.txt\nrg: a.txt: No such file or directory (os error 2)"
    )


def test_a_lesson_gets_its_signature_when_added(knowledge: KnowledgeStore) -> None:
    result = knowledge.add_lesson(PYTHON_LESSON)
    assert result.entry is not None
    assert result.entry.get(SIGNATURE_FIELD) == "python: command not found"
    line = json.loads(knowledge.swarm.files.knowledge.read_text().splitlines()[0])
    assert line[SIGNATURE_FIELD] == "python: command not found"
    plain = knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    assert plain.entry is not None and SIGNATURE_FIELD not in plain.entry.data


def test_recall_matches_and_is_silent_otherwise(knowledge: KnowledgeStore) -> None:
    knowledge.add_lesson(PYTHON_LESSON)
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    hit = recall_error(knowledge, "$ python manage.py test\nzsh:1: command not found: python")
    assert hit.block is not None and [r.entry.lesson for r in hit.shown] == [PYTHON_LESSON]
    for text in ("$ rg -l foo\nzsh:1: command not found: rg", "$ rg foo\n", ""):
        miss = recall_error(knowledge, text)
        assert miss.block is None and miss.shown == []


def test_entries_without_the_field_are_matched_from_their_text(knowledge: KnowledgeStore) -> None:
    knowledge.swarm.add(NewLesson(PYTHON_LESSON, id="old"))
    knowledge.swarm.update("old", {}, remove=[SIGNATURE_FIELD])  # as opencode-swarm wrote it
    entry = knowledge.swarm.get("old")
    assert entry is not None and SIGNATURE_FIELD not in entry.data
    hit = recall_error(knowledge, "$ python -V\nbash: python: command not found", record=False)
    assert [r.entry.id for r in hit.shown] == ["old"]


def test_recall_includes_the_hive_and_is_recorded_for_acknowledgement(
    knowledge: KnowledgeStore,
) -> None:
    promote_lesson(
        knowledge, "sudo: a terminal is required here; run the command yourself", "tooling"
    )
    hit = recall_error(knowledge, "$ sudo apt install jq\nsudo: a password is required")
    assert [r.tier for r in hit.shown] == ["hive"]
    entry = knowledge.hive.get(hit.shown[0].entry.id)
    assert entry is not None and entry.counter("shown_count") == 1
    results = acknowledge(knowledge, f"KNOWLEDGE_APPLIED:{hit.trace_id}:{entry.id}")
    assert [r.status for r in results] == ["committed"]


def test_session_start_shows_project_facts_whatever_the_task(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = make_knowledge()
    fact = knowledge.add_lesson("`python` is not on PATH here (command not found); use python3.")
    assert fact.entry is not None and "project-fact" in fact.entry.tags
    assert fact.entry.category == "tooling"
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    start = session_start(knowledge)
    assert [r.entry.id for r in start.shown] == [fact.entry.id]
    assert (
        start.block is not None and len(start.block) <= knowledge.config.session_start_budget_chars
    )
    stored = knowledge.swarm.get(fact.entry.id)
    assert stored is not None and stored.counter("shown_count") == 1


def test_hive_facts_count_only_for_the_project_they_came_from(
    make_knowledge: Callable[..., KnowledgeStore],
) -> None:
    knowledge = make_knowledge()
    shell = "The shell here is zsh, so quote globs like [id] in paths"
    promote_lesson(knowledge, shell, "tooling", source_project="other", tags=["project-fact"])
    promote_lesson(knowledge, "Remember to run the sql migrations before the api tests", "process")
    start = session_start(knowledge, record=False)
    assert start.block is None and start.shown == []  # another project's fact; not a fact
    mine = "A code change is live only after pm2 restart api on this server"
    promote_lesson(knowledge, mine, "tooling", tags=["project-fact"])
    assert [r.entry.lesson for r in session_start(knowledge, record=False).shown] == [mine]
    assert session_start(make_knowledge(session_start_budget_chars=0)).block is None


def test_critical_directives_come_first_at_session_start(knowledge: KnowledgeStore) -> None:
    fact = knowledge.add_lesson("`python` is not on PATH here (command not found); use python3.")
    critical = knowledge.swarm.add(
        NewLesson(
            "Call declare_scope before delegating source edits to the coder agent",
            confidence=0.9,
            directives={"triggers": ["coder delegation"], "directive_priority": "critical"},
        )
    )
    shown = session_start(knowledge, record=False).shown
    assert fact.entry is not None and critical.entry is not None
    assert [r.entry.id for r in shown] == [critical.entry.id, fact.entry.id]


def test_an_adder_can_say_whether_a_lesson_is_a_project_fact(knowledge: KnowledgeStore) -> None:
    said = knowledge.swarm.add(
        NewLesson("Deploys go through the staging branch first", project_fact=True)
    )
    denied = knowledge.swarm.add(
        NewLesson("rg is not installed in this sandbox", project_fact=False)
    )
    assert said.entry is not None and "project-fact" in said.entry.tags
    assert denied.entry is not None and "project-fact" not in denied.entry.tags


def test_the_persisted_index_follows_appends_rewrites_and_damage(
    knowledge: KnowledgeStore, tmp_path: Path
) -> None:
    """A fresh process reads through the persisted index: it sees lines appended since, a
    rewrite (the entry archived, then another lesson's line changed), and rebuilds a damaged
    index file rather than trusting it."""
    index_dir = tmp_path / "recall-index"
    failure = "$ python -V\nbash: python: command not found"

    def shown() -> list[str]:
        found = recall_error(knowledge, failure, record=False, index_dir=index_dir)
        return [r.entry.lesson for r in found.shown]

    assert shown() == []
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    assert shown() == []
    first = knowledge.add_lesson(PYTHON_LESSON)
    assert shown() == [PYTHON_LESSON]  # appended: indexed incrementally
    assert first.entry is not None
    knowledge.swarm.update(first.entry.id, {"status": "archived"})
    assert shown() == []  # rewritten: rebuilt
    other = "`python3 -m venv .venv` failed (bash: python: command not found); use python3."
    knowledge.add_lesson(other)
    assert shown() == [other]
    for file in index_dir.glob("*.json"):
        if not file.name.endswith(".lines.json"):
            data = json.loads(file.read_text())
            if data["rows"]:
                data["rows"] = {"python: command not found": [[3, 20, 1]]}  # damaged in place
                file.write_text(json.dumps(data))
    assert shown() == [other]
    assert [r.entry.lesson for r in recall_error(knowledge, failure, record=False).shown] == [other]


def test_session_start_through_the_persisted_index_shows_the_same(
    knowledge: KnowledgeStore, tmp_path: Path
) -> None:
    index_dir = tmp_path / "recall-index"
    knowledge.add_lesson("`python` is not on PATH here (command not found); use python3.")
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    promote_lesson(knowledge, "A code change is live only after pm2 restart api", "tooling",
                   tags=["project-fact"])  # fmt: skip
    promote_lesson(knowledge, "The other project's shell is fish, so quote nothing", "tooling",
                   tags=["project-fact"], source_project="other")  # fmt: skip
    direct = session_start(knowledge, record=False)
    indexed = session_start(knowledge, record=False, index_dir=index_dir)
    assert [r.entry.id for r in indexed.shown] == [r.entry.id for r in direct.shown]
    assert len(direct.shown) == 2
    fact = knowledge.add_lesson("sudo needs a real terminal, which the agent shell does not have")
    assert fact.entry is not None
    again = session_start(knowledge, record=False, index_dir=index_dir)
    assert fact.entry.id in [r.entry.id for r in again.shown]  # appended since: seen


def test_a_process_that_has_not_loaded_the_stores_recalls_through_their_indexes(
    knowledge: KnowledgeStore, tmp_path: Path, locks: LocalLocks
) -> None:
    """With ``recall_dir`` (as the roster wiring, so the MCP and hook servers, set it) and no
    ``index_dir``, a recall and a session start read unloaded stores through the persisted
    signature indexes, recording included, and answer as the loaded stores do (the hive's
    copy of a swarm lesson dropped by the swarm's search index)."""
    knowledge.add_lesson(PYTHON_LESSON)
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    knowledge.add_lesson("sudo needs a real terminal, which the agent shell does not have")
    promote_lesson(knowledge, PYTHON_LESSON, "tooling")
    hive_only = "`python3 -m venv .venv` failed (bash: python: command not found); use python3."
    promote_lesson(knowledge, hive_only, "tooling")
    failure = "$ python -V\nbash: python: command not found"
    direct = recall_error(knowledge, failure, record=False)
    direct_start = session_start(knowledge, record=False)
    assert sorted(r.entry.lesson for r in direct.shown) == sorted([PYTHON_LESSON, hive_only])
    files = [knowledge.swarm.files.knowledge, knowledge.hive.files.knowledge]
    for path in files:
        FileIndex.open(path).close()  # type: ignore[union-attr]  # as after a first search
        forget(path)

    fresh = KnowledgeStore(
        knowledge.swarm_dir,
        locks=locks,
        config=knowledge.config,
        data_dir=knowledge.data_dir,
        project_name=knowledge.project_name,
        recall_dir=tmp_path / "recall",
    )
    found = recall_error(fresh, failure, record=False)
    start = session_start(fresh, record=False)
    assert [(r.entry.id, r.tier, r.score) for r in found.shown] == [
        (r.entry.id, r.tier, r.score) for r in direct.shown
    ]
    assert [r.entry.id for r in start.shown] == [r.entry.id for r in direct_start.shown]
    recorded = recall_error(fresh, failure)
    assert [r.entry.id for r in recorded.shown] == [r.entry.id for r in direct.shown]
    assert all(loaded(path).state is None for path in files), "a store was loaded"
    # Both stores have a search index (as after a first search): it answered, kept in step
    # with the recorded rewrite, so no signature index was needed.
    assert not any((tmp_path / "recall").glob("*.json"))
    for ranked in direct.shown:
        store = fresh.swarm if ranked.tier == "swarm" else fresh.hive
        entry = store.get(ranked.entry.id)
        assert entry is not None and entry.counter("shown_count") == 1


def test_the_search_index_recalls_what_the_signature_index_and_the_mirror_do(
    knowledge: KnowledgeStore, tmp_path: Path, locks: LocalLocks
) -> None:
    """A store with a search index is recalled through it (its recall keys), in the signature
    index's order, and still after a recorded injection rewrote the file through that index
    (the rewrite keeps it in step; no signature index is built)."""
    knowledge.add_lesson(PYTHON_LESSON)
    knowledge.add_lesson("`python` is not on PATH here (command not found); use python3.")
    knowledge.add_lesson("Use the bravo cache layer when reading bravo tables in sql")
    knowledge.add_lesson("sudo needs a real terminal, which the agent shell does not have")
    promote_lesson(knowledge, "A code change is live only after pm2 restart api", "tooling",
                   tags=["project-fact"])  # fmt: skip
    path = knowledge.swarm.files.knowledge
    keys = ["sudo: a terminal is required", "python: command not found", SESSION_START_KEY]
    by_file = [(rank, e.id) for rank, e in file_matches(path, keys, tmp_path / "sig")]
    assert len(by_file) >= 3 and any((tmp_path / "sig").glob("*.json"))  # no search index yet
    FileIndex.open(path).close()  # type: ignore[union-attr]  # as after a first search
    by_index = [(rank, e.id) for rank, e in file_matches(path, keys, tmp_path / "none")]
    assert by_index == by_file and not (tmp_path / "none").exists()

    forget(path)
    fresh = KnowledgeStore(
        knowledge.swarm_dir,
        locks=locks,
        config=knowledge.config,
        data_dir=knowledge.data_dir,
        project_name=knowledge.project_name,
        recall_dir=tmp_path / "recall",
    )
    failure = "$ python -V\nbash: python: command not found"
    assert recall_error(fresh, failure).shown and session_start(fresh).shown  # both rewrite
    assert loaded(path).state is None, "the store was loaded"
    after = [(rank, e.id) for rank, e in file_matches(path, keys, tmp_path / "none")]
    assert after == by_file and not (tmp_path / "none").exists()
    assert not (tmp_path / "recall").exists()
    mirror = [(rank, e.id) for rank, e in mirror_matches(knowledge.swarm, keys[:2])]
    assert mirror == [pair for pair in after if pair[0] < 2]
    shown = [e for _, e in file_matches(path, keys, tmp_path / "none")]
    assert any(e.counter("shown_count") == 1 for e in shown)  # the recorded rewrite is read
