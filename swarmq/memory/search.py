"""Memory search over worker and shared memory: exact phrase > token overlap > recency.

An in-memory inverted index (token → files) covers the profiles and shared roots. Each query first
re-stats the trees and re-reads only files whose size or mtime changed (and drops deleted ones), so
results are always current while a warm query touches no file contents. Snippets carry the path and
1-based line numbers; output is cut to a character budget by whole results, stopping at the first
one that would overflow (AutoCode's recall rule), so the caller never gets half a snippet.
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from swarmq.memory.paths import check_id

SUFFIXES: tuple[str, ...] = (".md", ".jsonl")
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_QUERY_CHARS = 1_000
MAX_LIMIT = 200
PER_FILE = 3
SNIPPET_CONTEXT = 1
SNIPPET_LINE_CHARS = 300
_TOKEN = re.compile(r"\w+")


class Scope(StrEnum):
    WORKER = "worker"
    SHARED = "shared"
    ALL = "all"


class SearchError(ValueError):
    """A query that cannot run (empty, too long, worker scope without a worker)."""


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the form both queries and files are matched in."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def tokenize(text: str) -> list[str]:
    """Ordered, de-duplicated word tokens of already normalized text."""
    return list(dict.fromkeys(_TOKEN.findall(text)))


@dataclass
class _File:
    mtime_ns: int
    size: int
    lines: list[str]
    norm_lines: list[str]
    text: str
    """All normalized lines joined by newlines (phrase checks in one C-level scan)."""
    tokens: frozenset[str]


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    snippet: str
    phrase: bool
    overlap: float
    mtime: float

    @property
    def score(self) -> float:
        """One number for display: 2 for a phrase match, plus the token overlap (0..1)."""
        return round((2.0 if self.phrase else 0.0) + self.overlap, 4)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "snippet": self.snippet, "score": self.score,
                "match": "phrase" if self.phrase else "tokens", "mtime": self.mtime}


@dataclass
class SearchResult:
    query: str
    scope: Scope
    hits: list[Hit] = field(default_factory=list)
    truncated: bool = False
    """More hits matched than the limit or the character budget allowed."""
    chars: int = 0


def _hit_chars(hit: Hit) -> int:
    return len(hit.path) + len(hit.snippet) + 16


class MemoryIndex:
    """The inverted index over some roots; thread-safe; kept fresh by :meth:`refresh`."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [Path(r) for r in roots]
        self.files: dict[str, _File] = {}
        self.postings: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def _walk(self, root: Path, seen: dict[str, tuple[int, int, float]]) -> None:
        stack = [str(root)]
        while stack:
            directory = stack.pop()
            try:
                entries = os.scandir(directory)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            with entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue  # temp files, .swarmq side dirs
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.name.endswith(SUFFIXES) and entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        if st.st_size <= MAX_FILE_BYTES:
                            seen[entry.path] = (st.st_mtime_ns, st.st_size, st.st_mtime)

    def refresh(self) -> int:
        """Bring the index up to date with the disk; returns how many files were (re)read."""
        seen: dict[str, tuple[int, int, float]] = {}
        for root in self.roots:
            self._walk(root, seen)
        changed = 0
        with self._lock:
            for path in [p for p in self.files if p not in seen]:
                self._drop(path)
            for path, (mtime_ns, size, _) in seen.items():
                current = self.files.get(path)
                if current is not None and current.mtime_ns == mtime_ns and current.size == size:
                    continue
                self._drop(path)
                if self._add(path, mtime_ns, size):
                    changed += 1
        return changed

    def _drop(self, path: str) -> None:
        old = self.files.pop(path, None)
        if old is None:
            return
        for token in old.tokens:
            bucket = self.postings.get(token)
            if bucket is not None:
                bucket.discard(path)
                if not bucket:
                    del self.postings[token]

    def _add(self, path: str, mtime_ns: int, size: int) -> bool:
        try:  # no symlink swapped in after the walk (which skips symlinks) is followed
            with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return False
        decoded = raw.decode("utf-8", errors="replace")
        lines = decoded.splitlines()
        folded = unicodedata.normalize("NFKC", decoded).casefold().splitlines()
        if len(folded) != len(lines):  # NFKC produced or removed a line break: go line by line
            folded = [unicodedata.normalize("NFKC", line).casefold() for line in lines]
        norm_lines = [" ".join(line.split()) for line in folded]
        text = "\n".join(norm_lines)
        tokens = frozenset(_TOKEN.findall(text))
        self.files[path] = _File(mtime_ns, size, lines, norm_lines, text, tokens)
        for token in tokens:
            self.postings.setdefault(token, set()).add(path)
        return True

    def search(self, query: str, *, prefixes: list[str], limit: int, budget_chars: int) -> list[Hit]:
        """Ranked hits under any of ``prefixes``; at most ``PER_FILE`` per file."""
        phrase = normalize(query)
        wanted = tokenize(phrase)
        if not wanted:
            return []
        with self._lock:
            candidates: set[str] = set()
            for token in wanted:
                candidates |= self.postings.get(token, set())
            ranked = []
            need = set(wanted)
            for path in candidates:
                if not path.startswith(tuple(prefixes)):
                    continue
                entry = self.files[path]
                if need <= entry.tokens:  # a phrase needs every token: skip the scan otherwise
                    ranked.append((phrase in entry.text, 1.0, entry.mtime_ns, path))
                else:
                    ranked.append((False, len(need & entry.tokens) / len(need), entry.mtime_ns, path))
            ranked.sort(reverse=True)
            hits: list[Hit] = []
            for has_phrase, overlap, mtime_ns, path in ranked:
                if len(hits) >= limit:
                    # The best hit this file could give is (has_phrase, overlap, its mtime); files
                    # come in that order, so once it cannot beat the limit-th hit, none can.
                    floor = hits[limit - 1]
                    if (has_phrase, overlap, mtime_ns / 1e9) <= (floor.phrase, floor.overlap, floor.mtime):
                        break
                hits.extend(self._file_hits(path, phrase, need, has_phrase))
                hits.sort(key=lambda h: (h.phrase, h.overlap, h.mtime), reverse=True)
                del hits[limit * 2:]
            return hits

    def _file_hits(self, path: str, phrase: str, need: set[str], has_phrase: bool) -> list[Hit]:
        entry = self.files[path]
        scored = []
        for index, line in enumerate(entry.norm_lines):
            if has_phrase and phrase in line:
                scored.append((True, 1.0, index))
                continue
            present = sum(1 for token in need if token in line)
            if present:
                exact = len(need & set(_TOKEN.findall(line)))
                if exact:
                    scored.append((False, exact / len(need), index))
        scored.sort(key=lambda item: (item[0], item[1], -item[2]), reverse=True)
        mtime = entry.mtime_ns / 1e9
        out = []
        for line_phrase, overlap, index in scored[:PER_FILE]:
            start = max(0, index - SNIPPET_CONTEXT)
            end = min(len(entry.lines), index + SNIPPET_CONTEXT + 1)
            snippet = "\n".join(f"{n + 1}: {entry.lines[n][:SNIPPET_LINE_CHARS]}" for n in range(start, end))
            out.append(Hit(path, index + 1, snippet, line_phrase, overlap, mtime))
        return out


class MemorySearch:
    """Search over ``<profiles>/*/memory`` and ``<shared>`` with one shared, fresh index."""

    def __init__(self, profiles_dir: Path, shared_dir: Path) -> None:
        self.profiles_dir = Path(os.path.realpath(profiles_dir))
        self.shared_dir = Path(os.path.realpath(shared_dir))
        self.index = MemoryIndex([self.profiles_dir, self.shared_dir])

    def prefixes(self, scope: Scope, worker_id: str | None) -> list[str]:
        worker_prefix = []
        if worker_id is not None:
            worker_prefix = [str(self.profiles_dir / check_id(worker_id, "workerId") / "memory") + os.sep]
        if scope is Scope.WORKER:
            if not worker_prefix:
                raise SearchError("scope 'worker' needs workerId")
            return worker_prefix
        shared = [str(self.shared_dir) + os.sep]
        if scope is Scope.SHARED:
            return shared
        if worker_prefix:
            return worker_prefix + shared
        return [str(self.profiles_dir) + os.sep, *shared]

    def search(
        self,
        query: str,
        *,
        scope: Scope = Scope.WORKER,
        worker_id: str | None = None,
        limit: int = 10,
        budget_chars: int = 7_000,
        refresh: bool = True,
    ) -> SearchResult:
        if not query.strip():
            raise SearchError("query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise SearchError(f"query is longer than {MAX_QUERY_CHARS} characters")
        if not 1 <= limit <= MAX_LIMIT:
            raise SearchError(f"limit must be between 1 and {MAX_LIMIT}")
        prefixes = self.prefixes(scope, worker_id)
        if refresh:
            self.index.refresh()
        hits = self.index.search(query, prefixes=prefixes, limit=limit, budget_chars=budget_chars)
        result = SearchResult(query, scope, truncated=len(hits) > limit)
        for hit in hits[:limit]:
            cost = _hit_chars(hit)
            if result.chars + cost > budget_chars:
                result.truncated = True
                break
            result.hits.append(hit)
            result.chars += cost
        return result


_shared_searches: dict[tuple[str, str], MemorySearch] = {}
_registry_lock = threading.Lock()


def memory_search(profiles_dir: Path, shared_dir: Path) -> MemorySearch:
    """The process-wide search for these roots (the API server keeps its index warm)."""
    key = (os.path.realpath(profiles_dir), os.path.realpath(shared_dir))
    with _registry_lock:
        found = _shared_searches.get(key)
        if found is None:
            found = _shared_searches[key] = MemorySearch(profiles_dir, shared_dir)
        return found
