"""Round-trip fidelity: unchanged entries keep their bytes; changed ones look like JS wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmq.knowledge.model import SWARM_KEY_ORDER, Entry
from swarmq.knowledge.project import KnowledgeStore
from swarmq.knowledge.serialize import dumps_js, js_number
from tests.knowledge import realistic


def test_every_variant_reads_and_rewrites_byte_for_byte(knowledge: KnowledgeStore) -> None:
    original = realistic.write_store(knowledge.swarm.files.knowledge)
    snapshot = knowledge.swarm.read()
    assert [e.raw for e in snapshot.entries] == realistic.ALL
    assert snapshot.corrupt == ()
    # a rewrite that changes one entry leaves every other line identical
    target = snapshot.entries[1]
    knowledge.swarm.update(target.id, {"confidence": 0.9})
    after = knowledge.swarm.files.knowledge.read_bytes().decode("utf-8").split("\n")
    before = original.decode("utf-8").split("\n")
    assert len(after) == len(before)
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if index != 1:
            assert old == new
    changed = json.loads(after[1])
    assert list(changed) == [*json.loads(before[1]).keys()]  # same key order, revision in place
    assert changed["confidence"] == 0.9 and changed["revision"] == 4


def test_changed_entry_is_serialised_like_javascript() -> None:
    entry = Entry(json.loads(realistic.ESCAPES), raw=realistic.ESCAPES)
    assert entry.line() == realistic.ESCAPES
    assert dumps_js(entry.data) == realistic.ESCAPES  # JS form reproduced from the parsed value
    changed = entry.changed({"confidence": 1.0, "new_key": "新"})
    line = changed.line()
    assert '"confidence":1,' in line and line.endswith('"revision":1,"new_key":"新"}') is False
    assert line.endswith('"neg":-0.5499999999999999,"new_key":"新","revision":1}')


@pytest.mark.parametrize("line", realistic.ALL)
def test_js_serialisation_of_parsed_real_lines_is_identity(line: str) -> None:
    assert dumps_js(json.loads(line)) == line


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (0.43999999999999995, "0.43999999999999995"),
        (1e-7, "1e-7"),
        (1e-6, "0.000001"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (-0.0, "0"),
        (float("nan"), "null"),
        (2.5e-10, "2.5e-10"),
        (0.1 + 0.2, "0.30000000000000004"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_normalisation_is_a_view_only(knowledge: KnowledgeStore) -> None:
    data = realistic.write_store(knowledge.swarm.files.knowledge)
    entry = knowledge.swarm.read().entries[0]
    outcomes = entry.outcomes
    assert outcomes["shown_count"] == 2  # seeded from the v1 applied_count
    assert outcomes["succeeded_after_shown_count"] == 1
    assert outcomes["acknowledged_count"] == 0
    assert outcomes["contradicted_count"] == 0  # defaulted, as upstream normalizeEntry does
    assert entry.normalized()["encounter_score"] == 0
    assert knowledge.swarm.files.knowledge.read_bytes() == data


def test_new_entries_use_opencode_key_order(knowledge: KnowledgeStore) -> None:
    result = knowledge.add_lesson("Run the python test suite before every push", phase=2)
    assert result.outcome == "added" and result.entry is not None
    line = knowledge.swarm.files.knowledge.read_text(encoding="utf-8").splitlines()[-1]
    keys = list(json.loads(line))
    assert keys == list(SWARM_KEY_ORDER)
    value = json.loads(line)
    assert value["confidence"] == 0.6 and value["status"] == "candidate"
    assert value["confirmed_by"] == [
        {"phase_number": 2, "confirmed_at": "2026-05-01T12:00:00.000Z", "project_name": "proj"}
    ]
    assert value["retrieval_outcomes"] == {
        "applied_count": 0,
        "succeeded_after_count": 0,
        "failed_after_count": 0,
    }


def test_corrupt_lines_are_kept_verbatim_with_line_numbers(knowledge: KnowledgeStore) -> None:
    path: Path = knowledge.swarm.files.knowledge
    path.parent.mkdir(parents=True)
    garbage = b"\xff\xfe garbage \x00"
    lines = [
        realistic.V1.encode(),
        b'{"id":"trunc","lesson":"half',
        garbage,
        b"[1,2,3]",
        b'{"id":5,"lesson":"wrong id type"}',
        b"",
        realistic.CHINESE.encode(),
        b"NaN",
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    snapshot = knowledge.swarm.read()
    assert [e.id for e in snapshot.entries] == [
        json.loads(realistic.V1)["id"],
        json.loads(realistic.CHINESE)["id"],
    ]
    assert [c.line_no for c in snapshot.corrupt] == [2, 3, 4, 5, 8]
    # the next rewrite moves them to knowledge-corrupt.jsonl, verbatim, and keeps the rest
    knowledge.swarm.update(snapshot.entries[0].id, {"confidence": 0.5})
    records = [json.loads(x) for x in knowledge.swarm.files.corrupt.read_text().splitlines()]
    assert knowledge.swarm.files.corrupt.name == "knowledge-corrupt.jsonl"
    assert [r["line"] for r in records] == [2, 3, 4, 5, 8]
    assert records[0]["text"] == '{"id":"trunc","lesson":"half'
    import base64

    assert base64.b64decode(records[1]["raw_b64"]) == garbage
    assert all(r["source"] == "knowledge.jsonl" for r in records)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    assert knowledge.swarm.read().corrupt == ()


def test_torn_last_line_is_not_consumed_until_terminated(knowledge: KnowledgeStore) -> None:
    path = knowledge.swarm.files.knowledge
    realistic.write_store(path, [realistic.V1])
    with path.open("ab") as handle:
        handle.write(realistic.CHINESE.encode()[:40])
    snapshot = knowledge.swarm.read()
    assert len(snapshot.entries) == 1 and len(snapshot.corrupt) == 1
    # an append terminates the torn line first, so it stays a separate (corrupt) line
    knowledge.add_lesson("Pin the docker base image digest in every Dockerfile")
    snapshot = knowledge.swarm.read()
    assert len(snapshot.entries) == 2
    assert [c.line_no for c in snapshot.corrupt] == [2]


def test_external_append_and_replace_are_seen(knowledge: KnowledgeStore) -> None:
    path = knowledge.swarm.files.knowledge
    realistic.write_store(path, [realistic.V1])
    assert len(knowledge.swarm.read().entries) == 1
    with path.open("a", encoding="utf-8") as handle:  # opencode-swarm appends without a lock
        handle.write(realistic.CHINESE + "\n")
    assert len(knowledge.swarm.read().entries) == 2
    realistic.write_store(path, [realistic.MANUAL])  # in-place rewrite, same inode
    assert [e.raw for e in knowledge.swarm.read().entries] == [realistic.MANUAL]


def test_mirror_follows_foreign_rewrites_exactly(knowledge: KnowledgeStore) -> None:
    """Whatever another process writes, the incrementally updated mirror equals a fresh parse."""
    import random

    from swarmq.knowledge._loaded import LoadedFile

    rng = random.Random(7)
    path = knowledge.swarm.files.knowledge
    lines = [
        json.dumps({"id": f"e{i}", "lesson": f"lesson number {i} about git"}) for i in range(30)
    ]
    realistic.write_store(path, lines)
    knowledge.swarm.read()
    knowledge.swarm.tier_file.dedup  # noqa: B018 - build the index so its updates are exercised too
    counter = 100
    for _ in range(150):
        edit = rng.choice(["change", "remove", "append", "corrupt", "swap", "torn"])
        good = [i for i, line in enumerate(lines) if "broken" not in line]
        if edit == "change" and good:
            i = rng.choice(good)
            value = json.loads(lines[i])
            value["lesson"] += " changed"
            lines[i] = json.dumps(value)
        elif edit == "remove" and lines:
            lines.pop(rng.randrange(len(lines)))
        elif edit == "append":
            counter += 1
            lines.append(json.dumps({"id": f"e{counter}", "lesson": f"fresh lesson {counter}"}))
        elif edit == "corrupt":
            lines.insert(rng.randrange(len(lines) + 1), '{"id": "broken')
        elif edit == "swap" and len(lines) > 2:
            i = rng.randrange(len(lines) - 1)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        torn = edit == "torn"
        path.write_bytes(("\n".join(lines) + "\n" + ('{"id":"tor' if torn else "")).encode())
        mirrored = knowledge.swarm.read()
        fresh = LoadedFile(path)
        fresh.refresh()
        assert [e.raw for e in mirrored.entries] == [e.raw for e in fresh.entries()]
        assert [(c.line_no, c.raw) for c in mirrored.corrupt] == [
            (c.line_no, c.raw) for c in fresh.all_corrupt()
        ]
        index = knowledge.swarm.tier_file.dedup
        for slot, entry in knowledge.swarm.tier_file.mirror.items():
            assert index.bigrams(slot) == __import__(
                "swarmq.similarity.text", fromlist=["word_bigrams"]
            ).word_bigrams(entry.lesson)
        if torn:
            path.write_bytes(("\n".join(lines) + "\n").encode())
