"""A fresh reading process imports no write path: searching, injecting or recalling (previews)
and listing a workspace with a swarm.yaml load neither the store's adds, reinforcement,
quarantine and transactions (and the validation they bring) nor filelock (a cluster's reader
takes no same-host lock and commits nothing), and ``--json`` builds no rich table. Each of those
is imported by the code that writes or prints one (speed lives in bench/read_locks.py). The
first read after an add brings the store's index up to date, a write: the second is checked."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from tests.cli.fresh_reads import FAILURE, TASK, add_lessons, fresh_swarmq
from tests.support import write_roster

WRITE_PATH = (
    "filelock",
    "swarmq.knowledge.batch",
    "swarmq.knowledge._prepare",
    "swarmq.knowledge._group",
    "swarmq.knowledge.reinforcement",
    "swarmq.knowledge._quarantine",
    "swarmq.knowledge.transaction",
    "swarmq.knowledge.acks",
    "swarmq.flywheel.promotion",
)
"""Modules only a write needs: no read below may import them."""

INDEXING = ("swarmq.knowledge._recallkeys", "swarmq.knowledge.signature")
"""What an entry's index row needs (its recall keys, failure signatures), a search not."""

READS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # name: (arguments, modules it must not import beyond WRITE_PATH)
    "search --json": (
        ("knowledge", "search", "--json", TASK),
        ("rich.table", "swarmq.knowledge.validation", *INDEXING),
    ),
    "search": (("knowledge", "search", TASK), ("swarmq.knowledge.validation", *INDEXING)),
    "inject --preview": (("knowledge", "inject", "--preview", TASK), ()),
    "recall --preview": (("knowledge", "recall", "--preview", "--error", FAILURE), ()),
    "list --json": (
        ("knowledge", "list", "--json"),
        ("rich.table", "swarmq.knowledge.validation", "snowballstemmer"),
    ),
    "list": (("knowledge", "list"), ("swarmq.knowledge.validation", "snowballstemmer")),
}


@pytest.mark.parametrize("name", list(READS))
def test_a_read_imports_no_write_path(
    name: str, tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis
) -> None:
    # lexical: with hybrid retrieval the model's cache (swarmq.similarity.quantized) takes a lock
    roster = write_roster(tmp_path, swarm_name, redis_url, knowledge={"retrieval": "lexical"})
    add_lessons(roster)
    args, also = READS[name]
    fresh_swarmq(tmp_path, roster, *args)  # the first read after an add writes its index
    ran = fresh_swarmq(tmp_path, roster, *args)
    assert ran.returncode == 0, ran.stderr
    modules = ran.modules
    shown = " ".join(ran.stdout.split())
    assert "missing tables" in shown or "python3" in shown  # the read found a lesson
    assert "swarmq.knowledge.project" in modules
    assert sorted(m for m in modules if m.split(".")[0] in WRITE_PATH or m in WRITE_PATH) == []
    assert sorted(set(also) & modules) == []
