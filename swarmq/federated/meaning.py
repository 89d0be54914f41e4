"""Meaning-aware relevance for the stores that match on word share: learnings, patterns, pool
candidates and memory notes.

A task worded as a commit subject ("fix(bash): arrow key bindings fail on bash 3.2") shares a
third of its content words with the learning that answers it, under any word-share floor that
keeps unrelated tasks silent (docs/QUALITY.md, "Issue 26"). The knowledge store already fuses
its lexical score with the cosine of the packaged embedding model (hybrid retrieval); here the
other stores get the same model's cosine, through the same :class:`Embedder` the knowledge store
holds (``KnowledgeStore.embedder``: ``None`` under ``retrieval: lexical``, and then nothing
changes), and a record is relevant when its word share reaches the store's lexical floor *or*
its cosine reaches the store kind's dense floor (:data:`DENSE_FLOORS`, calibrated leaving one
workspace out, eval/knowledge/calibrate_stores.py).

A query embeds only itself: record vectors are kept per process, a learning's or candidate's by
the SHA-256 of its text (:class:`VectorCache`), a memory file's by its path, mtime and size
(:class:`MemoryVectors`), so a warm hook or MCP server re-embeds only what changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from swarmq.flywheel.relevance import LearnedRelevance
from swarmq.similarity import quantized
from swarmq.similarity.embedding import Embedder, Vectors, content_key
from swarmq.storage.filewalk import walk_files

WORDLLAMA = "wordllama-l2-supercat-256"


@dataclass(frozen=True, slots=True)
class DenseFloors:
    """The cosine that makes a record relevant, per store kind, for one model."""

    flywheel: float
    """Learnings and patterns (a pool candidate's cosine only ranks it: ``flywheel.lookup.search``)."""
    memory: float
    """Worker and shared memory notes."""
    title: float | None = None
    """A learning's or pattern's title alone (``None``: titles are not measured): a task is
    worded as a title is, and a title's cosine sits on a short text's scale, not a body's."""


MINILM = quantized.NAME
"""MiniLM as the default settings run it (the dynamically quantised copy)."""

DENSE_FLOORS: dict[str, DenseFloors] = {
    WORDLLAMA: DenseFloors(flywheel=0.4, memory=0.5, title=0.4),
}
"""Per model (``Embedder.name``) these stores are ranked on: chosen leaving one workspace out on
the tune split of eval/knowledge/workspaces/queries.json (docs/QUALITY.md, "Issue 26:
meaning-aware ranking"). A title is held to the flywheel floor itself, no floor of its own: one
fitted apart did not transfer between workspaces (docs/QUALITY.md, "Issue 26: why every-store
tasks miss", eval/knowledge/calibrate_titles.py). A model not here (MiniLM, an endpoint) gets none: under it these
records are ranked by the packaged WordLlama's cosine (``federated.search._meaning``), not on a
floor set for another model's cosine scale."""

LEARNED: dict[str, LearnedRelevance] = {
    WORDLLAMA: LearnedRelevance(
        intercept=-5.0615,
        share=1.3248,
        cosine=2.5544,
        title=7.4816,
        floor=0.2590,
        rare=4.0117,
    ),
}
"""Per model, the relevance injection admits and ranks learnings and patterns by (their share,
text cosine and title cosine under that model, and their share weighted by the rarity of the
task's words among the workspace's records; ``swarmq.flywheel.relevance``): the mean of the
models fitted leaving one workspace out on every examined workspace of
eval/knowledge/workspaces/queries.json (eval/knowledge/fit_relevance.py; its weights file,
eval/knowledge/relevance_weights.json, holds these values unrounded and each fold's). A model
not here gets none: the floors above decide."""


def learned_relevance(meaning: Meaning | None) -> LearnedRelevance | None:
    """The learned relevance fitted on ``meaning``'s model, if there is one."""
    return None if meaning is None else LEARNED.get(meaning.name)


NOT_ADOPTED: dict[str, DenseFloors] = {
    MINILM: DenseFloors(flywheel=0.5, memory=0.45),
}
"""Floors calibrated the same way for a model these stores are deliberately *not* ranked on,
kept so the next calibration starts from them (docs/QUALITY.md, "MiniLM floors for learnings
and memory"). MiniLM's were chosen on all of tune (top 3 14/21, silence 8/8, against 13/21 and
8/8 under WordLlama's floors), but left one workspace out they transfer worse (12/21 and 5/8:
the flywheel floor a fold picks swings from 0.35 to off) and on the held split they lose to
WordLlama's (6/11 and 4/5 against 8/11 and 5/5). And these records' vectors are kept per
process only, so a fresh CLI or hook process under MiniLM would embed every learning and note
before its first answer (17 s and 35 s on two of the set's workspaces)."""

MAX_CACHED = 200_000
"""Record vectors a process keeps (dropped whole past it): ten 10k stores' worth."""
EMBED_BATCH = 1024


class VectorCache:
    """Unit vectors of texts under one model, by content hash, for the life of the process."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: dict[bytes, Vectors] = {}
        self._lock = threading.Lock()

    def matrix(self, texts: Sequence[str]) -> Vectors:
        """One row per text (embedding only the texts never seen)."""
        keys = [content_key(t) for t in texts]
        with self._lock:
            found = [self._vectors.get(k) for k in keys]
        missing = [i for i, v in enumerate(found) if v is None]
        out = np.zeros((len(texts), self.embedder.dim), dtype=np.float32)
        for lo in range(0, len(missing), EMBED_BATCH):
            chunk = missing[lo : lo + EMBED_BATCH]
            fresh = self.embedder.embed([texts[i] for i in chunk])
            out[chunk] = fresh
            with self._lock:
                if len(self._vectors) + len(chunk) > MAX_CACHED:
                    self._vectors.clear()
                self._vectors.update((keys[i], fresh[n]) for n, i in enumerate(chunk))
        for i, vector in enumerate(found):
            if vector is not None:
                out[i] = vector
        return out


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One memory file's notes that can carry meaning: their 1-based line numbers, texts and
    vectors (as of ``stamp``)."""

    stamp: tuple[int, int]
    lines: tuple[int, ...]
    texts: tuple[str, ...]
    vectors: Vectors
    row_of: dict[int, int]
    """Line number -> row of ``vectors``."""


NoteText = Callable[[str], str]
"""A memory line -> the note's text (``swarmq.federated.stores.note_text``)."""
NoteFile = Callable[[str], bool]
"""A memory file's path -> whether its lines are notes meaning may reach (not the mission
ledger's own records: ``swarmq.profiles.layout.ledger_record``)."""
MIN_NOTE_WORDS = 4
"""A memory line needs this many words to have a vector: a heading ("## Notes"), a date or a
rule line is no note, and a two-word line's vector sits near anything with those two words."""
MAX_FILE_BYTES = 4 * 1024 * 1024
"""As memory search: larger files are not indexed."""
SUFFIXES = (".md", ".jsonl")


@dataclass
class MemoryVectors:
    """Vectors of every memory note under some roots, per file, re-read when a file's mtime or
    size changes."""

    embedder: Embedder
    files: dict[str, MemoryFile] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def notes(
        self,
        prefixes: Sequence[str],
        note_text: NoteText,
        note_file: NoteFile,
        walked: Sequence[tuple[str, tuple[int, int]]] | None = None,
    ) -> list[tuple[str, MemoryFile]]:
        """Every memory file under ``prefixes`` (directories ending in the separator) that
        ``note_file`` keeps, with its notes' vectors (a file it does not keep is never read);
        ``walked``: those files as :func:`_walk` just listed them."""
        out = []
        for path, stamp in walked if walked is not None else _walk(prefixes):
            if not note_file(path):
                continue
            with self.lock:
                known = self.files.get(path)
            if known is None or known.stamp != stamp:
                known = self._read(path, stamp, note_text)
                if known is None:
                    continue
                with self.lock:
                    self.files[path] = known
            out.append((path, known))
        return out

    def _read(self, path: str, stamp: tuple[int, int], note_text: NoteText) -> MemoryFile | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None
        lines, texts = [], []
        for number, line in enumerate(raw.splitlines(), 1):
            text = note_text(line)
            if len(text.split()) >= MIN_NOTE_WORDS:
                lines.append(number)
                texts.append(text)
        vectors = (
            np.vstack(
                [
                    self.embedder.embed(texts[lo : lo + EMBED_BATCH])
                    for lo in range(0, len(texts), EMBED_BATCH)
                ]
            )
            if texts
            else np.zeros((0, self.embedder.dim), dtype=np.float32)
        )
        return MemoryFile(
            stamp, tuple(lines), tuple(texts), vectors, {n: r for r, n in enumerate(lines)}
        )


def _walk(prefixes: Sequence[str]) -> list[tuple[str, tuple[int, int]]]:
    """Memory files under the prefixes as memory search walks them (dot names skipped, no
    symlinks followed), sorted, each with its (mtime, size)."""
    return sorted(dict(walk_files(prefixes, SUFFIXES, MAX_FILE_BYTES)).items())


_caches: dict[str, VectorCache] = {}
_memories: dict[tuple[str, tuple[str, ...]], MemoryVectors] = {}
_registry = threading.Lock()


def vector_cache(embedder: Embedder) -> VectorCache:
    """The process's cache of record vectors under ``embedder``."""
    with _registry:
        found = _caches.get(embedder.name)
        if found is None or found.embedder is not embedder:
            found = _caches[embedder.name] = VectorCache(embedder)
        return found


def memory_vectors(embedder: Embedder, roots: Sequence[str]) -> MemoryVectors:
    """The process's vectors of the memory notes under ``roots`` (a store's profiles and
    shared directories)."""
    key = (embedder.name, tuple(roots))
    with _registry:
        found = _memories.get(key)
        if found is None or found.embedder is not embedder:
            found = _memories[key] = MemoryVectors(embedder)
        return found


@dataclass(frozen=True, slots=True)
class NearNotes:
    """Memory notes measured against a query: each file's notes and their cosines, and the
    nearest notes at or above the memory floor (``(path, line)``, nearest first)."""

    measured: dict[str, tuple[MemoryFile, list[float]]]
    nearest: list[tuple[str, int]]

    def note(self, path: str, line: int) -> tuple[str, float] | None:
        """The note at ``path:line`` and its cosine, ``None`` for a line with no vector."""
        found = self.measured.get(path)
        if found is None:
            return None
        notes, values = found
        row = notes.row_of.get(line)
        return None if row is None else (notes.texts[row], values[row])


class Meaning:
    """A query's vector and the floors its records' cosines are held to.

    Made by :func:`query_meaning`, the model is loaded and the query embedded only when a
    record is first measured against it: a workspace with no learnings, patterns, pool
    candidates or memory notes never needs the vector, and a resident hook server of such a
    workspace then never loads the packaged WordLlama (~33 MB resident with its tokenizer,
    docs/BENCHMARKS.md, "Issue 28: … the meaning embedded only when a record needs it"). The
    vector is the same whenever it is computed: the same text under the same model."""

    __slots__ = ("_embedder", "_load", "_text", "_vector", "floors", "name")

    def __init__(self, embedder: Embedder, vector: Vectors, floors: DenseFloors) -> None:
        self._embedder: Embedder | None = embedder
        self._load: Callable[[], Embedder] | None = None
        self._text = ""
        self._vector: Vectors | None = vector
        self.floors = floors
        self.name = embedder.name

    @classmethod
    def later(
        cls, name: str, load: Callable[[], Embedder], text: str, floors: DenseFloors
    ) -> Meaning:
        """``text``'s meaning under the model ``name`` that ``load`` returns, loaded and
        embedded on first use."""
        meaning = cls.__new__(cls)
        meaning._embedder, meaning._load, meaning._text = None, load, text
        meaning._vector, meaning.floors, meaning.name = None, floors, name
        return meaning

    @property
    def embedder(self) -> Embedder:
        """The model (loaded now if it was not)."""
        if self._embedder is None:
            assert self._load is not None  # made by later()
            self._embedder = self._load()
        return self._embedder

    @property
    def vector(self) -> Vectors:
        """The query's unit vector (embedded now if it was not)."""
        if self._vector is None:
            self._vector = self.embedder.embed([self._text])[0].astype(np.float32, copy=False)
        return self._vector

    def cosines(self, texts: Sequence[str]) -> list[float]:
        """The cosine of each text to the query (record vectors cached per process)."""
        if not texts:
            return []
        matrix = vector_cache(self.embedder).matrix(texts)
        out: Vectors = np.einsum("ij,j->i", matrix, self.vector)
        return [float(c) for c in out]

    def near_notes(
        self,
        roots: Sequence[str],
        prefixes: Sequence[str],
        note_text: NoteText,
        note_file: NoteFile,
        take: int,
    ) -> NearNotes:
        """Every memory note under ``prefixes`` (of a store with ``roots``) in a file
        ``note_file`` keeps measured, and the ``take`` nearest at or above the memory floor."""
        walked = _walk(prefixes)
        if not walked:  # no memory file: the model is neither loaded nor run
            return NearNotes({}, [])
        files = memory_vectors(self.embedder, roots).notes(prefixes, note_text, note_file, walked)
        measured: dict[str, tuple[MemoryFile, list[float]]] = {}
        near: list[tuple[float, str, int]] = []
        for path, notes in files:
            if not notes.lines:
                continue
            values: Vectors = np.einsum("ij,j->i", notes.vectors, self.vector)
            measured[path] = (notes, values.tolist())
            for row in np.flatnonzero(values >= self.floors.memory).tolist():
                near.append((float(values[row]), path, notes.lines[row]))
        near.sort(key=lambda n: (-n[0], n[1], n[2]))
        return NearNotes(measured, [(path, line) for _, path, line in near[:take]])


def query_meaning(
    embedder: Embedder | None, text: str, floors: DenseFloors | None = None
) -> Meaning | None:
    """``text`` embedded once, when first needed, with the floors of ``embedder``'s model
    (``None``: no model, no text, or a model with no calibrated floors)."""
    if embedder is None:
        return None
    return packaged_meaning(embedder.name, lambda: embedder, text, floors)


def packaged_meaning(
    name: str, load: Callable[[], Embedder], text: str, floors: DenseFloors | None = None
) -> Meaning | None:
    """As :func:`query_meaning`, under the model ``name`` that ``load`` returns, neither loaded
    nor run until a record is measured against the query."""
    if not text.strip():
        return None
    chosen = floors if floors is not None else DENSE_FLOORS.get(name)
    if chosen is None:
        return None
    return Meaning.later(name, load, text, chosen)
