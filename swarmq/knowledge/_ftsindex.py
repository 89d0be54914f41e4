"""A persisted index of one knowledge file, so a fresh process can search without loading it.

A CLI call, a hook or an MCP call that searches a 100k-entry store cannot parse 61 MB and build
the query postings on every call. Each store file gets an SQLite sidecar next to it
(``knowledge.index.sqlite``): per entry its byte offset (in a narrow table of its own, so a
rewrite that lengthens one line moves small rows) and length in the JSONL, its id, the
fields the ranking filters and scores on (status, scope, priority, confidence, the static
score), its tool / agent / trigger keys, the keys a recall finds it by (its failure signature,
shown at a session start: :mod:`._recallkeys`), and one FTS5 row holding its normalised terms (the
lexical ranking's own :func:`~swarmq.similarity.normalize.retrieval_terms`, hex-encoded so no FTS
tokeniser splits them) and hashed word bigrams (for the hive's near-duplicate check). FTS5 is
used as a compact posting store (``detail=none``): the ranking needs each query term's document
frequency (kept in a table beside it) and the entries holding its selective terms, so the answer is the
whole-store ranking's, not a bm25 approximation.

The index is checked against the file on every open: identity, size and mtime, and CRC-32s of
the first and last block of the bytes indexed. A file that only grew has its new lines indexed;
any other change (a rewrite: swarmq replaces the file on every transaction) is synchronised line
by line: each line's digest is compared with the indexed lines', so only changed or new lines are
parsed, and lines gone are deleted, all in one SQLite transaction (a concurrent reader sees the
old index or the new one). A missing, foreign or damaged index is rebuilt into a temporary file
renamed over it. Writers do not read the index, and the next reader catches up, except a
transaction that read through it (:mod:`._indextxn`): it updates the index for its own rewrite
(:func:`adopt_rewrite`), so the reader after a recorded injection does not hash every line.

The index is never trusted over the file: every entry returned is read from the JSONL at its
offset and must parse to an entry with the indexed id (:class:`StaleIndex` otherwise; the caller
rebuilds and retries, then falls back to loading the store).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import sqlite3
import threading
import zlib
from array import array
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from swarmq.errors import Unavailable
from swarmq.knowledge import _heldindex
from swarmq.knowledge._joinsets import JoinRow, join_row
from swarmq.knowledge._kept import Kept
from swarmq.knowledge._lineparse import parse_line
from swarmq.knowledge.errors import KnowledgeError
from swarmq.knowledge.model import Entry
from swarmq.knowledge.ranking import static_breakdown
from swarmq.similarity.normalize import retrieval_terms
from swarmq.similarity.text import jaccard, word_bigrams

if TYPE_CHECKING:
    from swarmq.knowledge._vecindex import VectorView
    from swarmq.similarity.embedding import Embedder

INDEX_VERSION = 7
CHECK_BLOCK = 4096
"""Bytes at each end of the indexed prefix whose CRC must still match (cheap: two preads)."""
BATCH = 2000
PROBE_POSTINGS = 4000
"""Near-duplicate check: postings read beyond the prefix filter's, to prune candidates by count."""
NEAR_ANSWERS = 2048
"""Near-duplicate answers kept per process (:meth:`FileIndex.has_near_duplicate`)."""
_STATE_KEYS = ("path", "ino", "end", "size", "mtime", "gen", "head_crc", "tail_crc", "build")
"""The metadata that names one version of an index: what the file was when it was indexed, and
which build of the index (a rebuild starts ``gen`` again, and a file changed in place without
changing its size, mtime or ends is indexed anew with the same metadata)."""
_near_answers: dict[tuple[object, ...], bool] = {}
_near_lock = threading.Lock()
COUNTS = 256
"""Entry counts kept per process, one per version of an index (:meth:`FileIndex.count`)."""
_counts: Kept[int] = Kept(COUNTS)
POSTINGS_SLOTS = 1 << 19
"""Slots of term postings kept per process (8 bytes each: 4 MB), by index version and term
(:meth:`FileIndex.slots_with`)."""
_postings: Kept[array[int]] = Kept(POSTINGS_SLOTS)
TRIGGER_ROWS = 1 << 17
"""Trigger phrases kept per process, by index version and first word
(:meth:`FileIndex.triggers`)."""
_trigger_rows: Kept[tuple[tuple[int, str], ...]] = Kept(TRIGGER_ROWS)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE entries (
    slot INTEGER PRIMARY KEY,
    length INTEGER NOT NULL,
    line_no INTEGER NOT NULL,
    digest BLOB NOT NULL,
    id TEXT NOT NULL,
    status TEXT NOT NULL,
    category TEXT NOT NULL,
    scope TEXT NOT NULL,
    priority TEXT NOT NULL,
    confidence REAL NOT NULL,
    active INTEGER NOT NULL,
    static REAL NOT NULL,
    grams INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX entries_static ON entries (active, static DESC, line_no);
CREATE INDEX entries_id ON entries (id);
CREATE TABLE offsets (slot INTEGER PRIMARY KEY, offset INTEGER NOT NULL);
CREATE TABLE keys (kind TEXT NOT NULL, key TEXT NOT NULL, slot INTEGER NOT NULL, phrase TEXT);
CREATE INDEX keys_key ON keys (kind, key);
CREATE INDEX keys_slot ON keys (slot);
CREATE VIRTUAL TABLE fts USING fts5(body, content='', detail=none);
CREATE TABLE df (token TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE sets (
    slot INTEGER PRIMARY KEY,
    active INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    text INTEGER NOT NULL,
    tkey INTEGER NOT NULL,
    grams BLOB NOT NULL,
    words BLOB NOT NULL
);
CREATE TABLE vectors (vrow INTEGER PRIMARY KEY, slot INTEGER NOT NULL, vkey BLOB NOT NULL);
CREATE TABLE vecmap (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
"""
Collect = Callable[[int, Entry], None]
"""Told each entry an update parses, with its slot (the vectors' catch-up reuses the parse)."""
CatchUp = Callable[[sqlite3.Connection], list[Path]]
"""Brings the vectors in step inside the index's write transaction; returns the files to
remove once it has committed."""


class StaleIndex(KnowledgeError, Unavailable):
    """The index names an entry the file does not hold where it says (rebuild it)."""


class Facts(NamedTuple):
    """What the ranking needs of an entry before reading it."""

    static: float
    """The static score, ``-inf`` for an inactive entry."""
    scope: str
    priority: str
    confidence: float
    id: str


def forget_kept() -> None:
    """Drop every answer this process keeps for a version of an index (tests that change an
    index behind its metadata's back, as a fresh process would find it)."""
    _postings.clear()
    _trigger_rows.clear()
    _counts.clear()
    with _near_lock:
        _near_answers.clear()
    _heldindex.forget()


def sidecar_path(store_file: Path) -> Path:
    return store_file.with_name(f"{store_file.stem}.index.sqlite")


def term_token(term: str) -> str:
    return "t" + term.encode().hex()


def gram_token(gram: str) -> str:
    return f"g{zlib.crc32(gram.encode()):08x}"


def _digest(line: bytes) -> bytes:
    return hashlib.blake2b(line, digest_size=8).digest()


def _crc(handle: BinaryIO, start: int, size: int) -> int:
    return zlib.crc32(os.pread(handle.fileno(), size, start)) if size > 0 else 0


class _Row(NamedTuple):
    offset: int
    entry: tuple[object, ...]
    keys: list[tuple[str, str, str | None]]
    body: str
    sets: JoinRow


def _row(entry: Entry, offset: int, length: int, line_no: int, digest: bytes) -> _Row:
    text = " ".join([entry.lesson, *entry.strings("triggers"), *entry.tags])
    grams = word_bigrams(entry.lesson)
    body = " ".join(
        [
            *(term_token(t) for t in sorted(set(retrieval_terms(text)))),
            *sorted({gram_token(g) for g in grams}),
        ]
    )
    keys: list[tuple[str, str, str | None]] = [
        ("tool", tool, None) for tool in dict.fromkeys(entry.strings("applies_to_tools"))
    ]
    keys += [("agent", agent, None) for agent in dict.fromkeys(entry.strings("applies_to_agents"))]
    for trigger in entry.strings("triggers"):
        phrase = trigger.lower().strip()
        words = phrase.split()
        if words:
            keys.append(("trigger", words[0], phrase))
    from swarmq.knowledge._recallkeys import recall_keys  # indexing only: a query never needs it

    keys += [("recall", key, None) for key in recall_keys(entry)]
    static = sum(static_breakdown(entry).values())
    values = (
        length,
        line_no,
        digest,
        entry.id,
        entry.status,
        entry.category,
        entry.scope,
        entry.priority,
        entry.confidence,
        int(entry.is_active),
        static,
        len(grams),
        body,
    )
    return _Row(offset, values, keys, body, join_row(entry, grams))


class FileIndex:
    """An open, current index of one store file (a read-only view until :meth:`close`)."""

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        handle: BinaryIO,
        vectors: VectorView | None = None,
    ) -> None:
        self.path = path
        self.db = connection
        self.handle = handle
        self.vectors = vectors
        """The entries' vectors under the embedder the index was opened with (hybrid)."""
        self._count: int | None = None
        self._state: tuple[object, ...] | None = None
        self.held_as: str | None = None
        """The key under which :meth:`close` gives the connection and handle to the process's
        held ones (:mod:`._heldindex`) instead of closing them (``None``: closed)."""
        self.opened_by = os.getpid()

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        rebuild: bool = False,
        embedder: Embedder | None = None,
        embed_limit: int | None = -1,
        fill: bool = False,
        hold: bool = False,
    ) -> FileIndex | None:
        """The index of ``path``, brought up to date (``rebuild``: built afresh), with the
        entries' vectors under ``embedder`` when one is given, embedding at most
        ``embed_limit`` entries (``None``: all; ``-1``: the query path's, none unless the
        entries waiting are within :func:`~swarmq.knowledge._dense.inline_limit`) and, with
        ``fill``,
        catching up entries an earlier catch-up left without a vector; ``None`` when the file
        does not exist or ends in an unterminated line (a write in progress: the caller loads
        the store), or when the vectors could not be brought in step. With ``hold``, the
        connection and handle the process holds for ``path`` (:mod:`._heldindex`) are used
        once verified as a fresh open verifies them, and :meth:`close` gives them back."""
        path = Path(path)
        for attempt in (1, 2):
            try:
                return cls._open(
                    path,
                    rebuild=rebuild,
                    embedder=embedder,
                    embed_limit=embed_limit,
                    fill=fill,
                    hold=hold and _heldindex.holding(),
                )
            except sqlite3.OperationalError:
                # Another process renamed a rebuilt index over the one this connection had
                # open, which SQLite cannot write to any more: open the new one, once.
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _open(
        cls,
        path: Path,
        *,
        rebuild: bool,
        embedder: Embedder | None,
        embed_limit: int | None,
        fill: bool,
        hold: bool = False,
    ) -> FileIndex | None:
        key = str(path)
        held = _heldindex.take(key) if hold and not rebuild else None
        kept_db, handle = _reusable(path, held) if held is not None else (None, None)
        if handle is None:
            try:
                handle = path.open("rb")
            except FileNotFoundError:
                if kept_db is not None:
                    kept_db.close()
                return None
        known: dict[int, str | None] = {}
        caught: list[bool] = []
        collect: Collect | None = None
        catch_up: CatchUp | None = None
        if embedder is not None:
            from swarmq.knowledge import _vecindex  # numpy: hybrid only
            from swarmq.knowledge._dense import inline_limit, vector_text

            limit = inline_limit(embedder) if embed_limit == -1 else embed_limit
            backlog_waits = embed_limit == -1  # the query path embeds no backlog

            def collect(slot: int, entry: Entry) -> None:
                known[slot] = vector_text(entry)

            def catch_up(db: sqlite3.Connection) -> list[Path]:
                caught.append(True)  # a fill's one batch per open is this one
                return _vecindex.catch_up(
                    db,
                    sidecar_path(path),
                    embedder,
                    known,
                    lambda slots: read_entries(db, path, handle, slots),
                    limit,
                    backlog_waits,
                )

        try:
            db = (
                _rebuild(path, handle, sidecar_path(path), collect, catch_up)
                if rebuild
                else _sync(path, handle, collect, catch_up, kept_db)
            )
        except BaseException:
            handle.close()
            raise
        if db is None:
            handle.close()
            return None
        try:
            ready, vectors = _snapshot(db, path, embedder, catch_up, fill and not caught)
        except BaseException:
            db.close()
            handle.close()
            raise
        if not ready:
            db.close()
            handle.close()
            return None
        index = cls(path, db, handle, vectors)
        index.held_as = key if hold else None
        return index

    def close(self) -> None:
        if self.vectors is not None:
            self.vectors.close()
            self.vectors = None
        if self.held_as is not None:
            key, self.held_as = self.held_as, None
            held = _heldindex.Held(self.db, self.handle, self.opened_by)
            if held.pid != os.getpid():  # opened before a fork: the parent's, left alone
                _heldindex.leave(held)
                return
            try:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")  # the search's read snapshot: no lock held
                kept = _heldindex.give(key, held)
            except sqlite3.Error:
                kept = False
            if kept:
                return
        self.db.close()
        self.handle.close()

    def __enter__(self) -> FileIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the ranking's questions ----------------------------------------------------------------

    def count(self) -> int:
        """The entries this version indexes (every status). Like a near-duplicate answer it
        depends only on the index's version, so the process keeps it for that version: counting
        100k rows was half a millisecond of every ranking of a resident process."""
        if self._count is None:
            key = self.state()
            known = _counts.get(key)
            if known is None:
                known = int(self.db.execute("SELECT count(*) FROM entries").fetchone()[0])
                _counts.put(key, known, 1)
            self._count = known
        return self._count

    def count_unarchived(self) -> int:
        """The entries whose status is not ``archived`` (quarantined ones included)."""
        query = "SELECT count(*) FROM entries WHERE status != 'archived'"
        return int(self.db.execute(query).fetchone()[0])

    def frequency(self, term: str) -> int:
        return self._token_frequency(term_token(term))

    def frequencies(self, terms: Sequence[str]) -> dict[str, int]:
        tokens = {term: term_token(term) for term in terms}  # each term's token made once
        found = self._token_frequencies(tokens.values())
        return {term: found.get(token, 0) for term, token in tokens.items()}

    def slots_with(self, term: str) -> list[int]:
        """The slots whose entry has ``term``, in slot order (kept for the index's version:
        :mod:`._kept`)."""
        token = term_token(term)
        key = (*self.state(), token)
        kept = _postings.get(key)
        if kept is not None:
            return kept.tolist()
        cursor = self.db.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid", (f'"{token}"',)
        )
        found = [slot for (slot,) in cursor]
        _postings.put(key, array("q", found), len(found))
        return found

    def triggers(self, words: Sequence[str], haystack: str) -> list[tuple[int, str]]:
        """``(slot, phrase)`` of every trigger phrase keyed by one of ``words`` (its first
        word) that ``haystack`` contains, by word, then as the index holds them. Each word's
        phrases are read once per version of the index (:mod:`._kept`), all the words not yet
        read in one statement (a common first word, "when", has thousands of phrases at 1M,
        and a task has dozens of words); the containment is SQLite's ``instr``, a substring
        test."""
        state = self.state()
        phrases: dict[str, tuple[tuple[int, str], ...]] = {}
        unread: list[str] = []
        for word in dict.fromkeys(words):
            kept = _trigger_rows.get((*state, word))
            if kept is None:
                unread.append(word)
            else:
                phrases[word] = kept
        for start in range(0, len(unread), 900):
            chunk = unread[start : start + 900]
            read: dict[str, list[tuple[int, str]]] = {word: [] for word in chunk}
            cursor = self.db.execute(
                "SELECT key, slot, phrase FROM keys WHERE kind = 'trigger' "
                f"AND key IN ({','.join('?' * len(chunk))}) AND phrase IS NOT NULL",
                chunk,
            )
            for word, slot, phrase in cursor:
                read[str(word)].append((int(slot), str(phrase)))
            for word, rows in read.items():
                phrases[word] = tuple(rows)
                _trigger_rows.put((*state, word), phrases[word], len(rows))
        return [
            (slot, phrase)
            for word in sorted(phrases)
            for slot, phrase in phrases[word]
            if phrase in haystack
        ]

    def keyed(self, kind: str, name: str) -> list[int]:
        cursor = self.db.execute("SELECT slot FROM keys WHERE kind = ? AND key = ?", (kind, name))
        return sorted({int(slot) for (slot,) in cursor})

    def recalled(self, keys: Sequence[str]) -> list[tuple[int, Entry]]:
        """``(rank of the key, entry)`` for every entry recalled by one of ``keys`` (a failure
        signature, :data:`~swarmq.knowledge._recallkeys.SESSION_START_KEY`), in key order,
        then file order, each entry once (what the signature index answers, kept in step with
        a transaction's rewrite as the rest of this index is)."""
        ranked: list[tuple[int, int]] = []
        seen: set[int] = set()
        for rank, key in enumerate(keys):
            cursor = self.db.execute(
                "SELECT k.slot FROM keys k JOIN offsets o ON o.slot = k.slot "
                "WHERE k.kind = 'recall' AND k.key = ? ORDER BY o.offset",
                (key,),
            )
            for (slot,) in cursor:
                if slot not in seen:
                    seen.add(slot)
                    ranked.append((rank, int(slot)))
        found = self.entries([slot for _, slot in ranked])
        return [(rank, found[slot]) for rank, slot in ranked]

    def facts(self, slots: Iterable[int]) -> dict[int, Facts]:
        wanted = list(slots)
        out: dict[int, Facts] = {}
        for start in range(0, len(wanted), 900):
            chunk = wanted[start : start + 900]
            marks = ",".join("?" * len(chunk))
            cursor = self.db.execute(
                "SELECT slot, static, active, scope, priority, confidence, id FROM entries "
                f"WHERE slot IN ({marks})",
                chunk,
            )
            for slot, static, active, scope, priority, confidence, entry_id in cursor:
                out[slot] = Facts(
                    float(static) if active else -math.inf, scope, priority, confidence, entry_id
                )
        return out

    def statics(self, slots: Iterable[int]) -> dict[int, float]:
        """The static score of each slot (``-inf`` inactive), from the vectors' per-slot copy
        when open (no row lookups), else from :meth:`facts`."""
        wanted = list(slots)
        out = self.vectors.statics(wanted) if self.vectors is not None else {}
        missing = [slot for slot in wanted if slot not in out]
        if missing:
            out.update((slot, found.static) for slot, found in self.facts(missing).items())
        return out

    def static_order(self) -> Iterator[tuple[float, int, str]]:
        """``(-static score, slot, scope)`` of the active entries, best first (file order
        among equals)."""
        cursor = self.db.execute(
            "SELECT static, slot, scope FROM entries WHERE active = 1 ORDER BY static DESC, line_no"
        )
        for static, slot, scope in cursor:
            yield -float(static), int(slot), str(scope)

    def entries(self, slots: Sequence[int]) -> dict[int, Entry]:
        """The entries at ``slots``, each read from the file and checked against the index."""
        return read_entries(self.db, self.path, self.handle, slots)

    def state(self) -> tuple[object, ...]:
        """This version of the index (read in the search's snapshot): equal states answer
        every question alike."""
        if self._state is None:
            marks = ",".join("?" * len(_STATE_KEYS))
            found = dict(
                self.db.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", _STATE_KEYS)
            )
            self._state = tuple(found.get(key) for key in _STATE_KEYS)
        return self._state

    def has_near_duplicate(self, lesson: str, threshold: float) -> bool:
        """Whether an active entry's lesson has word-bigram Jaccard ``>= threshold`` with
        ``lesson`` (the store's ``find_duplicate``, answered from the index: prefix filtering
        over the hashed bigram postings, each candidate checked exactly on its read text).

        The answer depends only on the index's version, so the process keeps it for that
        version (:data:`NEAR_ANSWERS` of them): a resident process asks again about the hive
        entries that keep ranking well, each check a dozen SQLite statements."""
        key = (*self.state(), threshold, lesson)
        with _near_lock:
            known = _near_answers.get(key)
        if known is not None:
            return known
        found = self._near_duplicate(lesson, threshold)
        with _near_lock:
            if len(_near_answers) >= NEAR_ANSWERS:
                _near_answers.clear()
            _near_answers[key] = found
        return found

    def _near_duplicate(self, lesson: str, threshold: float) -> bool:
        candidate = word_bigrams(lesson)
        if threshold <= 0.0:
            return (
                self.db.execute("SELECT 1 FROM entries WHERE active = 1 LIMIT 1").fetchone()
                is not None
            )
        if not candidate:
            found = self.db.execute(
                "SELECT 1 FROM entries WHERE active = 1 AND grams = 0 LIMIT 1"
            ).fetchone()
            return found is not None
        size = len(candidate)
        tokens = {gram_token(g) for g in candidate}
        needed = max(1, math.ceil(threshold * size) - 1)
        # A lesson at Jaccard >= threshold shares >= needed bigrams, so >= ``must`` hashed
        # tokens (bigrams whose hashes collided share one), and so at least one of the
        # ``distinct - must + 1`` rarest (prefix filtering). Rarer tokens beyond those are
        # probed too while their postings are short: a candidate must then hold enough of the
        # probed ones to reach ``must`` even if it held every unprobed one, which is what
        # keeps the lessons read back few.
        distinct = len(tokens)
        must = max(1, needed - (size - distinct))
        prefix = distinct - must + 1
        frequencies = self._token_frequencies(tokens)
        probe = sorted((frequencies.get(t, 0), t) for t in tokens)
        shared: Counter[int] = Counter()
        probed = postings = 0
        for frequency, token in probe:
            if probed >= prefix and postings + frequency > PROBE_POSTINGS:
                break
            cursor = self.db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (f'"{token}"',))
            shared.update(slot for (slot,) in cursor)
            probed += 1
            postings += frequency
        unprobed = distinct - probed
        hits = {slot for slot, count in shared.items() if count + unprobed >= must}
        low, high = threshold * size - 1e-9, (size + 1e-9) / threshold
        rows = []
        ordered = sorted(hits)
        for start in range(0, len(ordered), 900):
            chunk = ordered[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows += self.db.execute(
                "SELECT o.offset, e.length, e.line_no, e.id, e.grams "
                "FROM entries e JOIN offsets o ON o.slot = e.slot "
                # "+active": without statistics SQLite would walk the static-order index
                # over every active entry rather than look the few slots up by rowid
                f"WHERE +e.active = 1 AND e.slot IN ({marks})",
                chunk,
            ).fetchall()
        for offset, length, line_no, entry_id, grams in sorted(rows):
            if grams < low or grams > high:
                continue
            entry = _read(self.path, self.handle, offset, length, line_no, entry_id)
            if jaccard(candidate, word_bigrams(entry.lesson)) >= threshold:
                return True
        return False

    def _token_frequency(self, token: str) -> int:
        row = self.db.execute("SELECT n FROM df WHERE token = ?", (token,)).fetchone()
        return 0 if row is None else int(row[0])

    def _token_frequencies(self, tokens: Iterable[str]) -> dict[str, int]:
        """The document frequency of each of ``tokens`` that any entry has, in one statement
        per 900."""
        wanted = list(tokens)
        out: dict[str, int] = {}
        for start in range(0, len(wanted), 900):
            chunk = wanted[start : start + 900]
            marks = ",".join("?" * len(chunk))
            cursor = self.db.execute(f"SELECT token, n FROM df WHERE token IN ({marks})", chunk)
            out.update((str(token), int(n)) for token, n in cursor)
        return out


def read_entries(
    db: sqlite3.Connection, path: Path, handle: BinaryIO, slots: Sequence[int]
) -> dict[int, Entry]:
    """The entries at ``slots``, each read from the file and checked against the index."""
    out: dict[int, Entry] = {}
    for start in range(0, len(slots), 900):
        chunk = list(slots[start : start + 900])
        marks = ",".join("?" * len(chunk))
        cursor = db.execute(
            "SELECT e.slot, o.offset, e.length, e.line_no, e.id "
            f"FROM entries e JOIN offsets o ON o.slot = e.slot WHERE e.slot IN ({marks})",
            chunk,
        )
        for slot, offset, length, line_no, entry_id in cursor:
            out[slot] = _read(path, handle, offset, length, line_no, entry_id)
    missing = [slot for slot in slots if slot not in out]
    if missing:
        raise StaleIndex(f"{path}: slots {missing[:5]} vanished from the index")
    return out


def _read(
    path: Path, handle: BinaryIO, offset: int, length: int, line_no: int, entry_id: str
) -> Entry:
    data = os.pread(handle.fileno(), length, offset)
    item = parse_line(line_no, data)
    if not isinstance(item, Entry) or item.id != entry_id or not data.endswith(b"\n"):
        raise StaleIndex(f"{path}: line {line_no} is not entry {entry_id}")
    return item


def _snapshot(
    db: sqlite3.Connection,
    path: Path,
    embedder: Embedder | None,
    catch_up: CatchUp | None,
    fill: bool = False,
) -> tuple[bool, VectorView | None]:
    """Begin the read transaction the whole search runs in (a concurrent sync commits after
    it, so frequencies, postings, offsets and vectors all come from one version of the index);
    with ``embedder``, open the vectors in that snapshot, first catching them up if a reader
    without one (lexical retrieval) moved the index on, or (``fill``, once) if an earlier
    catch-up left entries without a vector. ``(False, None)`` when other processes kept
    changing the index under the catch-up."""
    if embedder is None or catch_up is None:
        db.execute("BEGIN")
        db.execute("SELECT count(*) FROM meta").fetchone()
        return True, None
    from swarmq.knowledge._vecindex import VectorView  # numpy: hybrid only

    for _ in range(4):
        db.execute("BEGIN")
        view = VectorView.open(db, sidecar_path(path), embedder)
        if view is not None and not (fill and view.missing):
            return True, view
        if view is not None:
            view.close()
            fill = False
        db.execute("ROLLBACK")
        db.execute("BEGIN IMMEDIATE")
        try:
            obsolete = catch_up(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        _remove(obsolete)
    return False, None


def _remove(paths: Iterable[Path]) -> None:
    """Remove files the committed index no longer names (a reader holding one keeps it)."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# -- keeping the index in step with the file ------------------------------------------------------


class _Connection(sqlite3.Connection):
    """A connection that knows which file it opened: a held one (:mod:`._heldindex`) is
    used again only while its sidecar is still that file (a rebuild renames another over it,
    and SQLite reads on from the file it has open)."""

    identity: tuple[int, int] | None = None


def _identity(file: Path | str) -> tuple[int, int] | None:
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _connect(file: Path) -> sqlite3.Connection:
    # stat before connecting: a file renamed over it in between is then found different
    # (a connection is dropped for nothing), never taken for the one the connection opened
    identity = _identity(file)
    db = sqlite3.connect(
        file, timeout=60, isolation_level=None, check_same_thread=False, factory=_Connection
    )
    db.identity = identity
    db.execute("PRAGMA synchronous = OFF")  # a cache: a torn index is detected and rebuilt
    return db


def _reusable(
    path: Path, held: _heldindex.Held
) -> tuple[sqlite3.Connection | None, BinaryIO | None]:
    """What of a held connection and handle of ``path`` can serve a search (what cannot is
    closed): the handle while ``path`` still names its file (swarmq replaces the file on
    every write), the connection while its sidecar is still the file it opened. The rest of
    a fresh open's checks (:func:`_sync`: metadata, size, mtime, end blocks) run on them as on
    fresh ones."""
    db: sqlite3.Connection | None = held.db
    handle: BinaryIO | None = held.handle
    identity = getattr(held.db, "identity", None)
    if identity is None or _identity(sidecar_path(path)) != identity:
        held.db.close()
        db = None
    st = os.fstat(held.handle.fileno())
    if _identity(path) != (st.st_dev, st.st_ino):
        held.handle.close()
        handle = None
    return db, handle


def _meta(db: sqlite3.Connection) -> dict[str, object]:
    return dict(db.execute("SELECT key, value FROM meta").fetchall())


def _current(meta: dict[str, object], path: Path, handle: BinaryIO) -> str:
    """``"same"``, ``"grown"`` (only appended to) or ``"changed"``."""
    st = os.fstat(handle.fileno())
    if meta.get("version") != INDEX_VERSION or meta.get("path") != os.path.realpath(path):
        return "changed"
    end = meta.get("end")
    if not isinstance(end, int) or st.st_size < end:
        return "changed"
    head = min(CHECK_BLOCK, end)
    tail = min(CHECK_BLOCK, end)
    if (
        meta.get("ino") != st.st_ino
        or _crc(handle, 0, head) != meta.get("head_crc")
        or _crc(handle, end - tail, tail) != meta.get("tail_crc")
    ):
        return "changed"
    if st.st_size == end and meta.get("size") == st.st_size and meta.get("mtime") == st.st_mtime_ns:
        return "same"
    return "grown" if st.st_size > end else "changed"


def _sync(
    path: Path,
    handle: BinaryIO,
    collect: Collect | None,
    catch_up: CatchUp | None,
    held: sqlite3.Connection | None = None,
) -> sqlite3.Connection | None:
    """An up-to-date connection to the index of ``path`` (``handle`` its open file): ``held``
    (a connection a resident process kept) when given, checked as a fresh one is."""
    file = sidecar_path(path)
    db: sqlite3.Connection | None = None
    try:
        db = held if held is not None else _connect(file)
        meta = _meta(db)
        if meta.get("version") != INDEX_VERSION:  # another layout: built afresh
            db.close()
            return _rebuild(path, handle, file, collect, catch_up)
        state = _current(meta, path, handle)
        if state == "same":
            return db
        db.execute("BEGIN IMMEDIATE")
        try:
            meta = _meta(db)  # another process may have caught up while we waited
            state = _current(meta, path, handle)
            if state == "same":
                db.execute("COMMIT")
                return db
            complete = _update(db, path, handle, append=state == "grown", collect=collect)
            obsolete = catch_up(db) if catch_up is not None and complete else []
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        _remove(obsolete)
        if complete:
            return db
        db.close()
        return None
    except sqlite3.DatabaseError:
        if db is not None:
            db.close()
        if held is not None:  # whatever the held connection met, a fresh one decides
            return _sync(path, handle, collect, catch_up)
        return _rebuild(path, handle, file, collect, catch_up)


def _rebuild(
    path: Path,
    handle: BinaryIO,
    file: Path,
    collect: Collect | None,
    catch_up: CatchUp | None,
) -> sqlite3.Connection | None:
    """Build the index afresh into a temporary file and rename it over ``file``."""
    temp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    db = _connect(temp)
    try:
        db.executescript(_SCHEMA)
        db.execute("BEGIN")
        db.execute("INSERT INTO meta (key, value) VALUES ('build', ?)", (os.urandom(8).hex(),))
        complete = _update(db, path, handle, append=False, collect=collect)
        # the vectors too, before the rename: a renamed index may be renamed over in turn by
        # another builder, and SQLite cannot write to a file no longer at its path
        obsolete = catch_up(db) if catch_up is not None and complete else []
        db.execute("COMMIT")
        db.close()
        os.replace(temp, file)
        _remove(obsolete)
    except BaseException:
        db.close()
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    return _connect(file) if complete else None


def _update(
    db: sqlite3.Connection,
    path: Path,
    handle: BinaryIO,
    *,
    append: bool,
    collect: Collect | None = None,
) -> bool:
    """Bring the index (inside an open transaction) to the file's complete lines: the new
    tail only (``append``), else line by line against the indexed digests. ``False`` when the
    file ends in an unterminated line."""
    meta = _meta(db)
    old: dict[bytes, deque[tuple[int, int, int, int]]] = {}
    if append:
        start, line_no = int(meta["end"]), int(meta["lines"])  # type: ignore[call-overload]
    else:
        start, line_no = 0, 0
        for slot, offset, line, digest in db.execute(
            "SELECT e.slot, o.offset, e.line_no, e.digest "
            "FROM entries e JOIN offsets o ON o.slot = e.slot ORDER BY e.line_no"
        ):
            old.setdefault(digest, deque()).append((slot, offset, line, 0))
    # Slots are never reused (a line gone leaves its number behind), so whatever is keyed by
    # slot outside this transaction (the vectors' map) can tell a new entry from an old one.
    next_slot = int(meta.get("next_slot", 0))  # type: ignore[call-overload]
    kept: set[int] = set()
    moved: list[tuple[int, int]] = []
    renumbered: list[tuple[int, int]] = []
    added: list[tuple[int, _Row]] = []
    complete = True
    position = start
    handle.seek(start)
    for data in handle:
        if not data.endswith(b"\n"):
            complete = False
            break
        line_no += 1
        digest = _digest(data)
        queue = old.get(digest)
        if queue:
            slot, offset, line, _ = queue.popleft()
            kept.add(slot)
            if offset != position:
                moved.append((position, slot))
            if line != line_no:
                renumbered.append((line_no, slot))
        else:
            item = parse_line(line_no, data)
            if isinstance(item, Entry):
                added.append((next_slot, _row(item, position, len(data), line_no, digest)))
                if collect is not None:
                    collect(next_slot, item)
                next_slot += 1
                if len(added) >= BATCH:
                    _insert(db, added)
                    added = []
        position += len(data)
    if not append:
        gone = [slot for queue in old.values() for slot, *_ in queue]
        _delete(db, gone)
    db.executemany("UPDATE offsets SET offset = ? WHERE slot = ?", moved)
    db.executemany("UPDATE entries SET line_no = ? WHERE slot = ?", renumbered)
    _insert(db, added)
    st = os.fstat(handle.fileno())
    head = min(CHECK_BLOCK, position)
    tail = min(CHECK_BLOCK, position)
    values = {
        "version": INDEX_VERSION,
        "path": os.path.realpath(path),
        "end": position,
        "lines": line_no,
        "ino": st.st_ino,
        "size": st.st_size if complete else -1,
        "mtime": st.st_mtime_ns,
        "head_crc": _crc(handle, 0, head),
        "tail_crc": _crc(handle, position - tail, tail),
        "next_slot": next_slot,
        "gen": int(meta.get("gen", 0)) + 1,  # type: ignore[call-overload]
    }
    db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", values.items())
    return complete


SHIFTS_MAX = 200
"""Changed lines beyond which a writer leaves the index for the next reader to synchronise
(each shifted row's new offset is one ``CASE`` over the shifts)."""


def adopt_rewrite(
    db: sqlite3.Connection,
    path: Path,
    handle: BinaryIO,
    seen: dict[str, object],
    gone: Sequence[int],
    shifts: Sequence[tuple[int, int, int]],
    added: Sequence[tuple[Entry, int, int, bytes]],
    lines: int,
) -> bool:
    """Bring the index of ``path`` in step with a rewrite its writer just made under the store
    lock, without reading the file again (the next reader would hash every line): ``gone``
    slots deleted; each row from a shift's old offset up to the next shift's moved by its
    ``(start, bytes, lines)`` deltas; ``added`` entries (entry, offset, line number, line bytes)
    indexed under new slots; ``handle`` is the new file, ``lines`` its line count. ``seen`` is
    the index's metadata the writer read before rewriting: if the index moved since, nothing is
    done. ``False`` when not applied (the next reader synchronises, as after any write)."""
    if len(shifts) > SHIFTS_MAX:
        return False
    if db.in_transaction:
        db.execute("ROLLBACK")
    db.execute("BEGIN IMMEDIATE")
    try:
        meta = _meta(db)
        keys = ("version", "path", "gen", "ino", "end", "lines")
        if meta.get("path") != os.path.realpath(path) or any(
            meta.get(k) != seen.get(k) for k in keys
        ):
            db.execute("ROLLBACK")
            return False
        removed = _delete(db, list(gone), count=False)
        _shift(db, shifts)
        next_slot = int(meta.get("next_slot", 0))  # type: ignore[call-overload]
        rows = []
        for entry, offset, line_no, data in added:
            rows.append((next_slot, _row(entry, offset, len(data), line_no, _digest(data))))
            next_slot += 1
        _net_count(db, _insert(db, rows, count=False), removed)
        st = os.fstat(handle.fileno())
        end = st.st_size
        values = {
            "end": end,
            "lines": lines,
            "ino": st.st_ino,
            "size": end,
            "mtime": st.st_mtime_ns,
            "head_crc": _crc(handle, 0, min(CHECK_BLOCK, end)),
            "tail_crc": _crc(handle, end - min(CHECK_BLOCK, end), min(CHECK_BLOCK, end)),
            "next_slot": next_slot,
            "gen": int(meta.get("gen", 0)) + 1,  # type: ignore[call-overload]
        }
        db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", values.items())
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return True


def _shift(db: sqlite3.Connection, shifts: Sequence[tuple[int, int, int]]) -> None:
    """Move each row from a shift's old offset up to the next shift's by its ``(start, bytes,
    lines)`` deltas. The offsets live in a narrow table of their own: a line that grew moves
    the offset of every row after it (two thirds of the store on average), and SQLite rewrites
    whole rows, which in the entries table (the FTS body inline) would be 160-200 ms at 100k
    entries. Line numbers (kept with the entries: the static order's tie-break) move only when
    lines were added or removed before them."""
    if not any(b or n for _, b, n in shifts):
        return
    last_first = sorted(shifts, reverse=True)
    first = min(start for start, _, _ in shifts)
    if any(n for _, _, n in shifts):
        # by the old offsets, so before they move
        cases = " ".join("WHEN o.offset >= ? THEN ?" for _ in last_first)
        db.execute(
            "UPDATE entries SET line_no = line_no + (SELECT CASE "
            f"{cases} ELSE 0 END FROM offsets o WHERE o.slot = entries.slot) "
            "WHERE slot IN (SELECT slot FROM offsets WHERE offset >= ?)",
            [*(v for start, _, n in last_first for v in (start, n)), first],
        )
    if any(b for _, b, _ in shifts):
        cases = " ".join("WHEN offset >= ? THEN ?" for _ in last_first)
        db.execute(
            f"UPDATE offsets SET offset = offset + CASE {cases} ELSE 0 END WHERE offset >= ?",
            [*(v for start, b, _ in last_first for v in (start, b)), first],
        )


def _insert(
    db: sqlite3.Connection, rows: list[tuple[int, _Row]], *, count: bool = True
) -> Counter[str]:
    """Index ``rows``; returns their tokens, counted in ``df`` unless ``count`` is False."""
    db.executemany(
        "INSERT INTO entries (slot, length, line_no, digest, id, status, category, "
        "scope, priority, confidence, active, static, grams, body) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(slot, *row.entry) for slot, row in rows],
    )
    db.executemany(
        "INSERT INTO offsets (slot, offset) VALUES (?, ?)",
        [(slot, row.offset) for slot, row in rows],
    )
    db.executemany(
        "INSERT INTO fts (rowid, body) VALUES (?, ?)", [(slot, row.body) for slot, row in rows]
    )
    db.executemany(
        "INSERT INTO sets (slot, active, kind, text, tkey, grams, words) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(slot, *row.sets) for slot, row in rows],
    )
    tokens = Counter(token for _, row in rows for token in row.body.split())
    if count:
        _count(db, tokens, 1)
    db.executemany(
        "INSERT INTO keys (kind, key, slot, phrase) VALUES (?, ?, ?, ?)",
        [(kind, key, slot, phrase) for slot, row in rows for kind, key, phrase in row.keys],
    )
    return tokens


def _delete(db: sqlite3.Connection, slots: list[int], *, count: bool = True) -> Counter[str]:
    """Drop ``slots``; returns their tokens, uncounted from ``df`` unless ``count`` is False."""
    tokens: Counter[str] = Counter()
    for start in range(0, len(slots), 900):
        chunk = slots[start : start + 900]
        marks = ",".join("?" * len(chunk))
        bodies = db.execute(f"SELECT slot, body FROM entries WHERE slot IN ({marks})", chunk)
        gone = bodies.fetchall()
        db.executemany("INSERT INTO fts (fts, rowid, body) VALUES ('delete', ?, ?)", gone)
        removed = Counter(token for _, body in gone for token in body.split())
        if count:
            _count(db, removed, -1)
        tokens.update(removed)
        db.execute(f"DELETE FROM entries WHERE slot IN ({marks})", chunk)
        db.execute(f"DELETE FROM offsets WHERE slot IN ({marks})", chunk)
        db.execute(f"DELETE FROM sets WHERE slot IN ({marks})", chunk)
        db.execute(f"DELETE FROM keys WHERE slot IN ({marks})", chunk)
    return tokens


def _net_count(db: sqlite3.Connection, added: Counter[str], removed: Counter[str]) -> None:
    """``df`` moved by the tokens added less those removed: a line rewritten with the same
    terms (a counter changed) moves none, and only tokens that fell are looked at for pruning
    (:func:`_count` prunes by scanning the whole table: 28 ms at 100k entries)."""
    added.subtract(removed)
    moved = [(token, n) for token, n in added.items() if n]
    db.executemany(
        "INSERT INTO df (token, n) VALUES (?, ?) ON CONFLICT (token) DO UPDATE SET n = n + excluded.n",
        moved,
    )
    fell = [token for token, n in moved if n < 0]
    for start in range(0, len(fell), 900):
        chunk = fell[start : start + 900]
        marks = ",".join("?" * len(chunk))
        db.execute(f"DELETE FROM df WHERE n <= 0 AND token IN ({marks})", chunk)


def _count(db: sqlite3.Connection, counts: Counter[str], sign: int) -> None:
    """Keep each token's document frequency (the FTS doclists would need a read per term)."""
    db.executemany(
        "INSERT INTO df (token, n) VALUES (?, ?) ON CONFLICT (token) DO UPDATE SET n = n + excluded.n",
        [(token, sign * n) for token, n in counts.items()],
    )
    if sign < 0:
        db.execute("DELETE FROM df WHERE n <= 0")
