"""The persistent memory search index: SQLite FTS5, kept current by journals, not by re-stats.

The index lives in ``<profiles>/.swarmq/search/index.sqlite`` and covers the profiles and shared
roots. It is derived data: deleting it costs one rebuild. A query never re-reads or re-stats the
corpus; it brings the index up to date from two cheap sources:

- the change journals swarmq's own writers append to (:mod:`swarmq.storage.change_journal`): one
  ``stat`` per root, and the few files named since the last query are re-read;
- a reconcile by size and mtime of every file, at most every ``reconcile_seconds`` (and on
  :meth:`SearchIndex.refresh`), for hand edits and other tools.

Ranking is the in-memory index's: exact phrase > share of query tokens > recency, at most
``PER_FILE`` snippets a file, computed on the stored text of the few files that can still rank.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from swarmq.profiles._search_text import TOKEN, Hit, fts_phrase, norm_lines, normalize
from swarmq.storage.change_journal import journal_path, marker_dir
from swarmq.storage.filewalk import walk_files

SUFFIXES: tuple[str, ...] = (".md", ".jsonl")
MAX_FILE_BYTES = 4 * 1024 * 1024
PER_FILE = 3
SNIPPET_CONTEXT = 1
SNIPPET_LINE_CHARS = 300
RECONCILE_SECONDS = 30.0
"""Hand edits (no journal line) show within this long, or at once after ``refresh()``."""
JOURNAL_COMPACT_BYTES = 1 << 20
SCHEMA = 2
DB_NAME = "index.sqlite"
LINE_BITS = 23
"""A line's id is ``file_id << LINE_BITS | line``: a 4 MiB file has fewer lines than 2**23."""

_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, root INTEGER NOT NULL, rel TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, UNIQUE(root, rel));
CREATE TABLE IF NOT EXISTS lines(id INTEGER PRIMARY KEY, raw TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    tokens, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'");
"""


class SearchIndex:
    """The index over ``roots`` (the first one holds the database); thread-safe."""

    def __init__(self, roots: list[Path], *, reconcile_seconds: float = RECONCILE_SECONDS) -> None:
        self.roots = [str(r) for r in roots]
        self.reconcile_seconds = reconcile_seconds
        self._lock = threading.Lock()
        self.db_path = self._db_path()
        self._con = sqlite3.connect(
            self.db_path or ":memory:", timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._con.execute("PRAGMA synchronous=OFF")  # derived data: a lost write costs a reindex
        self._con.executescript(_DDL)  # idempotent; executescript commits on its own
        with self._write():
            if self._meta("roots") != json.dumps(self.roots) or self._meta("schema") != str(SCHEMA):
                self._reset()

    def _db_path(self) -> str | None:
        """``<first root>/.swarmq/search/index.sqlite``, or None (in memory) if it cannot be made."""
        first = self.roots[0]
        if not os.path.isdir(first) or not os.access(first, os.W_OK):
            return None
        try:
            os.makedirs(marker_dir(first), exist_ok=True)
        except OSError:
            return None
        return os.path.join(marker_dir(first), DB_NAME)

    # -- transactions and metadata -----------------------------------------------------------
    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        self._con.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._con.execute("ROLLBACK")
            raise
        self._con.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: object) -> None:
        self._con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(value)))

    def _reset(self) -> None:
        self._con.execute("DELETE FROM files")
        self._con.execute("DELETE FROM lines")
        self._con.execute("DELETE FROM fts")
        self._con.execute("DELETE FROM meta")
        self._set_meta("roots", json.dumps(self.roots))
        self._set_meta("schema", SCHEMA)
        self._set_meta("reconciled", 0)

    # -- keeping current ---------------------------------------------------------------------
    def sync(self) -> int:
        """Apply the journals; reconcile when due. Returns how many files were re-read."""
        with self._lock:
            due = self.db_path is None or time.time() - float(self._meta("reconciled") or 0) >= (
                self.reconcile_seconds
            )
            pending = [] if due else self._journal_news()
            if not due and not pending:
                return 0
            with self._write():
                if due:
                    return self._reconcile()
                return self._apply_journals()

    def refresh(self) -> int:
        """Reconcile every file by size and mtime now (hand edits included)."""
        with self._lock, self._write():
            return self._reconcile()

    def _journal_news(self) -> list[int]:
        """Roots whose journal grew (or shrank) since it was last applied."""
        news = []
        for number, root in enumerate(self.roots):
            try:
                size = os.stat(journal_path(root)).st_size
            except FileNotFoundError:
                size = 0
                if not os.path.isdir(marker_dir(root)) and os.path.isdir(root):
                    news.append(number)  # no marker yet: create it, so writers start journaling
                    continue
            if size != int(self._meta(f"journal.{number}") or 0):
                news.append(number)
        return news

    def _apply_journals(self) -> int:
        changed = 0
        for number, root in enumerate(self.roots):
            path = journal_path(root)
            offset = int(self._meta(f"journal.{number}") or 0)
            try:
                with open(path, "rb") as handle:
                    size = os.fstat(handle.fileno()).st_size
                    if size < offset:  # truncated by another reader's compaction: start over
                        return self._reconcile()
                    handle.seek(offset)
                    data = handle.read(size - offset)
            except FileNotFoundError:
                with contextlib.suppress(OSError):
                    if os.path.isdir(root):
                        os.makedirs(marker_dir(root), exist_ok=True)
                continue
            end = data.rfind(b"\n") + 1  # a line still being appended waits for the next query
            rels = dict.fromkeys(data[:end].decode("utf-8", "surrogateescape").splitlines())
            for rel in rels:
                if rel and not rel.startswith(".."):
                    changed += self._reindex(number, rel)
            offset += end
            if offset >= JOURNAL_COMPACT_BYTES and offset == size:
                with contextlib.suppress(OSError):
                    os.truncate(path, 0)  # an append racing this is caught by the next reconcile
                    offset = 0
            self._set_meta(f"journal.{number}", offset)
        return changed

    def _walk(self, number: int) -> dict[str, tuple[int, int]]:
        root = self.roots[number]
        return {
            os.path.relpath(path, root): stamp
            for path, stamp in walk_files([root], SUFFIXES, MAX_FILE_BYTES)
        }

    def _reconcile(self) -> int:
        changed = 0
        for number, root in enumerate(self.roots):
            with contextlib.suppress(OSError):
                if os.path.isdir(root):
                    os.makedirs(marker_dir(root), exist_ok=True)
            try:
                journal_size = os.stat(journal_path(root)).st_size
            except FileNotFoundError:
                journal_size = 0
            seen = self._walk(number)
            known = {
                rel: (file_id, mtime_ns, size)
                for file_id, rel, mtime_ns, size in self._con.execute(
                    "SELECT id, rel, mtime_ns, size FROM files WHERE root = ?", (number,)
                )
            }
            for rel, (file_id, _, _) in known.items():
                if rel not in seen:
                    self._drop(file_id)
            for rel, stamp in seen.items():
                old = known.get(rel)
                if old is None or old[1:] != stamp:
                    changed += self._reindex(number, rel)
            self._set_meta(f"journal.{number}", journal_size)
        self._set_meta("reconciled", time.time())
        return changed

    def _drop(self, file_id: int) -> None:
        low, high = file_id << LINE_BITS, ((file_id + 1) << LINE_BITS) - 1
        self._con.execute("DELETE FROM files WHERE id = ?", (file_id,))
        self._con.execute("DELETE FROM lines WHERE id BETWEEN ? AND ?", (low, high))
        self._con.execute("DELETE FROM fts WHERE rowid BETWEEN ? AND ?", (low, high))

    def _reindex(self, number: int, rel: str) -> int:
        """Re-read one file (or forget it if it is gone, hidden or no longer a searchable kind)."""
        row = self._con.execute(
            "SELECT id FROM files WHERE root = ? AND rel = ?", (number, rel)
        ).fetchone()
        if row is not None:
            self._drop(int(row[0]))
        path = os.path.join(self.roots[number], rel)
        parts = Path(rel).parts
        if not rel.endswith(SUFFIXES) or any(p.startswith(".") for p in parts):
            return 0
        try:  # never follow a symlink swapped in after the walk (which skips symlinks)
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                st = os.fstat(handle.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                    return 0
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return 0
        lines = raw.decode("utf-8", errors="replace").splitlines()
        cursor = self._con.execute(
            "INSERT INTO files(root, rel, mtime_ns, size) VALUES (?, ?, ?, ?)",
            (number, rel, st.st_mtime_ns, st.st_size),
        )
        base = int(cursor.lastrowid or 0) << LINE_BITS
        self._con.executemany(
            "INSERT INTO lines(id, raw) VALUES (?, ?)",
            ((base + n, line) for n, line in enumerate(lines)),
        )
        self._con.executemany(
            "INSERT INTO fts(rowid, tokens) VALUES (?, ?)",
            (
                (base + n, " ".join(tokens))
                for n, normed in enumerate(norm_lines("\n".join(lines)) if lines else [])
                if (tokens := TOKEN.findall(normed))
            ),
        )
        return 1

    # -- queries -----------------------------------------------------------------------------
    def search(
        self, phrase: str, wanted: list[str], *, prefixes: list[str], limit: int
    ) -> list[Hit]:
        """Ranked line hits under any of ``prefixes``; at most ``PER_FILE`` per file.

        Up to ``2 * limit`` come back, so the caller can tell that more matched than it shows.
        """
        with self._lock:
            counts: dict[int, int] = {}
            for token in wanted:
                for (line_id,) in self._con.execute(
                    "SELECT rowid FROM fts WHERE fts MATCH ?", (fts_phrase([token]),)
                ):
                    counts[line_id] = counts.get(line_id, 0) + 1
            if not counts:
                return []
            full = [line_id for line_id, n in counts.items() if n == len(wanted)]
            phrased: set[int] = set()
            if full:
                adjacent = set(full)
                if len(wanted) > 1:
                    adjacent = {
                        int(r[0])
                        for r in self._con.execute(
                            "SELECT rowid FROM fts WHERE fts MATCH ?", (fts_phrase(wanted),)
                        )
                    }
                # The phrase as written (punctuation included), not just adjacent tokens.
                raws = self._raw_lines([i for i in full if i in adjacent])
                phrased = {i for i, raw in raws.items() if phrase in normalize(raw)}
            levels: dict[tuple[bool, int], list[int]] = {}
            for line_id, n in counts.items():
                levels.setdefault((line_id in phrased, n), []).append(line_id)
            scope = self._scope(prefixes)
            chosen: list[Hit] = []
            per_file: dict[int, int] = {}
            for (has_phrase, n), line_ids in sorted(levels.items(), reverse=True):
                by_file: dict[int, list[int]] = {}
                for line_id in sorted(line_ids):
                    by_file.setdefault(line_id >> LINE_BITS, []).append(line_id)
                room = 2 * limit - len(chosen)
                for file_id, path, mtime_ns in self._recent(by_file, scope, room + len(per_file)):
                    for line_id in by_file[file_id]:
                        if per_file.get(file_id, 0) >= PER_FILE:
                            break
                        per_file[file_id] = per_file.get(file_id, 0) + 1
                        chosen.append(
                            self._hit(path, has_phrase, n / len(wanted), mtime_ns, line_id)
                        )
                        if len(chosen) >= 2 * limit:
                            return chosen
            return chosen

    def _scope(self, prefixes: list[str]) -> tuple[str, list[object]]:
        """``prefixes`` (absolute, ending in a separator) as a SQL condition on root and rel."""
        terms, args = [], []
        for prefix in prefixes:
            for number, root in enumerate(self.roots):
                base = root.rstrip(os.sep) + os.sep
                if prefix.startswith(base):
                    rel = prefix[len(base) :]
                    terms.append("(f.root = ? AND substr(f.rel, 1, ?) = ?)")
                    args += [number, len(rel), rel]
        return (" OR ".join(terms) or "0"), args

    def _recent(
        self, by_file: dict[int, list[int]], scope: tuple[str, list[object]], limit: int
    ) -> list[tuple[int, str, int]]:
        """The ``limit`` most recently modified files in scope among ``by_file``'s keys."""
        where, args = scope
        rows = self._con.execute(
            # Driven by the candidate list (a join, not IN), so SQLite never scans the files.
            "SELECT f.id, f.root, f.rel, f.mtime_ns FROM json_each(?) AS j"
            f" JOIN files AS f ON f.id = j.value WHERE ({where})"
            " ORDER BY f.mtime_ns DESC, f.id LIMIT ?",
            (json.dumps(list(by_file)), *args, limit),
        )
        return [(int(i), os.path.join(self.roots[r], rel), int(m)) for i, r, rel, m in rows]

    def _raw_lines(self, line_ids: list[int]) -> dict[int, str]:
        if not line_ids:
            return {}
        rows = self._con.execute(
            "SELECT id, raw FROM lines WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(line_ids),),
        )
        return {int(i): str(raw) for i, raw in rows}

    def _hit(self, path: str, phrase: bool, overlap: float, mtime_ns: int, line_id: int) -> Hit:
        line = line_id & ((1 << LINE_BITS) - 1)
        base = line_id - line
        rows = self._con.execute(
            "SELECT id, raw FROM lines WHERE id BETWEEN ? AND ? ORDER BY id",
            (base + max(0, line - SNIPPET_CONTEXT), line_id + SNIPPET_CONTEXT),
        )
        snippet = "\n".join(f"{i - base + 1}: {raw[:SNIPPET_LINE_CHARS]}" for i, raw in rows)
        return Hit(path, line + 1, snippet, phrase, overlap, mtime_ns / 1e9)

    def close(self) -> None:
        with self._lock:
            self._con.close()
