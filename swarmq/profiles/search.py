"""Memory search over worker and shared memory: exact phrase > token overlap > recency.

The index is persistent (:mod:`swarmq.profiles._search_index`, SQLite FTS5 under
``<profiles>/.swarmq/search/``) and kept current by the change journals swarmq's writers append
to, so a query in a new process neither re-reads nor re-stats the corpus. Snippets carry the path
and 1-based line numbers; output is cut to a character budget by whole results, stopping at the
first one that would overflow (AutoCode's recall rule), so the caller never gets half a snippet.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from swarmq.errors import InvalidInput
from swarmq.profiles._search_index import SearchIndex
from swarmq.profiles._search_text import TOKEN, Hit, normalize
from swarmq.storage.paths import check_id

__all__ = [
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "MemorySearch",
    "Scope",
    "SearchError",
    "SearchResult",
    "memory_search",
    "tokenize",
]

MAX_QUERY_CHARS = 1_000
MAX_LIMIT = 200


class Scope(StrEnum):
    WORKER = "worker"
    SHARED = "shared"
    ALL = "all"


class SearchError(InvalidInput):
    """A query that cannot run (empty, too long, worker scope without a worker)."""


def tokenize(text: str) -> list[str]:
    """Ordered, de-duplicated word tokens of already normalized text."""
    return list(dict.fromkeys(TOKEN.findall(text)))


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


class MemorySearch:
    """Search over ``<profiles>/*/memory`` and ``<shared>`` with one shared, fresh index."""

    def __init__(self, profiles_dir: Path, shared_dir: Path) -> None:
        self.profiles_dir = Path(os.path.realpath(profiles_dir))
        self.shared_dir = Path(os.path.realpath(shared_dir))
        self.index = SearchIndex([self.profiles_dir, self.shared_dir])

    def prefixes(self, scope: Scope, worker_id: str | None) -> list[str]:
        worker_prefix = []
        if worker_id is not None:
            worker_prefix = [
                str(self.profiles_dir / check_id(worker_id, "workerId") / "memory") + os.sep
            ]
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
        """Rank and budget the hits; ``refresh`` first applies the writers' change journals."""
        if not query.strip():
            raise SearchError("query must not be empty")
        if len(query) > MAX_QUERY_CHARS:
            raise SearchError(f"query is longer than {MAX_QUERY_CHARS} characters")
        if not 1 <= limit <= MAX_LIMIT:
            raise SearchError(f"limit must be between 1 and {MAX_LIMIT}")
        prefixes = self.prefixes(scope, worker_id)
        if refresh:
            self.index.sync()
        phrase = normalize(query)
        wanted = tokenize(phrase)
        hits = self.index.search(phrase, wanted, prefixes=prefixes, limit=limit) if wanted else []
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
