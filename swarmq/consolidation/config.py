"""``consolidation:`` in swarm.yaml: thresholds and scope of the nightly consolidation."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from swarmq.knowledge.config import ValidationMode
from swarmq.similarity.measure import Measure


class EmptyLessons(StrEnum):
    """What to do with lessons that have no tokens (one word, or only non-ASCII text)."""

    EXACT = "exact"
    """Treat two of them as duplicates only when their texts are equal (case and whitespace
    aside): by opencode-swarm's rule every two Chinese-only lessons have Jaccard 1.0, and
    merging them all into one would throw away real knowledge."""
    REFERENCE = "reference"
    """Follow the reference rule literally: every two empty-token lessons are duplicates."""


class ConsolidationConfig(BaseModel):
    """Thresholds are openknowledge's (Jaccard > 0.85 duplicate, > 0.7 conflict, > 0.5
    complement), applied with ``>=`` as opencode-swarm's near-duplicate test does."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = True
    duplicate_threshold: Annotated[float, Field(gt=0, le=1)] = 0.85
    """At or above: duplicates, merged into the surviving entry."""
    conflict_threshold: Annotated[float, Field(gt=0, le=1)] = 0.7
    """At or above (below duplicate): conflicting versions, the newer supersedes the older."""
    complement_threshold: Annotated[float, Field(gt=0, le=1)] = 0.5
    """At or above (below conflict): complementary entries, cross-linked."""
    paraphrase_threshold: Annotated[float, Field(gt=0, le=1)] = 0.46
    """IDF-weighted cosine of normalised terms at or above which two hand-written lessons of one
    project are paraphrased duplicates and merge (1.0 turns the paraphrase pass off). Tuned on
    the tune split of eval/knowledge/labels.json; see docs/QUALITY.md."""
    paraphrase_candidate_threshold: Annotated[float, Field(gt=0, le=1)] = 0.3
    """Jaccard of normalised term sets at or above which the join proposes a paraphrase
    candidate (lower finds more, costs more)."""
    dense_duplicates: bool = True
    """Let the packaged embedding model propose paraphrase candidates the term join misses
    (same rule in other words, a rule and its instance); each still needs the structural rules
    (same project, same kind, no contradiction) and lexical evidence to merge."""
    dense_duplicate_threshold: Annotated[float, Field(gt=0, le=1)] = 0.85
    """Cosine at or above which two lessons' vectors make a candidate pair."""
    dense_lexical_floor: Annotated[float, Field(ge=0, le=1)] = 0.25
    """A dense candidate merges only if its IDF-weighted term cosine also reaches this: no
    cosine threshold alone separates duplicates from merely related notes."""
    dense_max_entries: Annotated[int, Field(ge=0)] = 20_000
    """Above this many hand-written lessons in one scope the dense pass is skipped (it compares
    every pair: about 1 s per 10k × 10k block on one core)."""
    multilingual_duplicates: bool = True
    """Where a scope holds lessons in a non-Latin script (Chinese, Russian, Japanese, …) and the
    ``multilingual`` extra is installed, let a multilingual model propose a lesson and its
    translation as duplicates (mutual nearest neighbours at ``multilingual_threshold``); the
    lexical passes never judge such lessons (they compare ASCII words only). A night proposes
    the full pass's pairs that involve a new lesson: the mutual neighbours are taken among the
    whole scope's lessons, whose vectors are kept in a file beside the store, so a night embeds
    only its new lessons."""
    multilingual_threshold: Annotated[float, Field(gt=0, le=1)] = 0.6
    """Cosine of the multilingual model at or above which mutual nearest neighbours are a
    candidate pair. Chosen on the tune split of eval/knowledge/xlang/labels.json (QUALITY.md,
    "Duplicates across languages")."""
    multilingual_max_entries: Annotated[int, Field(ge=0)] = 5_000
    """Above this many hand-written lessons in one scope the cross-language pass is skipped
    (the model embeds a lesson in tens of milliseconds). A store within it that may hold
    translations is loaded by a night, not read through its index (the pass needs every
    lesson)."""
    contradictions: bool = True
    """Pairs at or above ``complement_threshold`` whose lessons oppose each other by the
    knowledge validator's negation pairs (always/never, use/avoid, ...) are conflicts too."""
    contradiction_mode: ValidationMode = ValidationMode.STRICT
    """How negation phrases are found: ``strict`` (whole, negation-aware words) by default,
    because opencode-swarm's substring test finds "use" in "because" and would turn ordinary
    near-duplicates into conflicts. Only phrases the two lessons do not share count."""
    measure: Measure = Measure.BIGRAMS
    """Token sets compared for knowledge tiers (opencode-swarm's word bigrams by default)."""
    learnings_measure: Measure = Measure.BIGRAMS
    """Token sets compared for AgentOps learnings and patterns."""
    empty_lessons: EmptyLessons = EmptyLessons.EXACT
    hive: bool = True
    """Consolidate the hive tier too (once per night for the whole cluster)."""
    learnings: bool = True
    """Consolidate the project's AgentOps learnings and patterns."""
    max_links_per_entry: Annotated[int, Field(ge=0, le=1000)] = 10
    """Complement links an entry gets at most (its most similar partners): a cluster of
    templated lessons would otherwise link every entry to every other."""
    max_rounds: Annotated[int, Field(ge=1, le=1000)] = 50
    """Merging changes lessons, which can create new pairs; rounds repeat until none is left
    (the fixpoint that makes a second run a no-op) or this bound is hit."""
    lock_timeout_seconds: Annotated[float, Field(gt=0)] = 600.0
    incremental: bool = True
    """Nightly runs of a knowledge tier join only the entries added or changed since the last
    successful run against the whole store (the first run on a store, and any run after the
    plan-shaping settings changed, is full); ``false``: every run is a full pass."""

    @model_validator(mode="after")
    def _ordered(self) -> ConsolidationConfig:
        if not self.complement_threshold <= self.conflict_threshold <= self.duplicate_threshold:
            raise ValueError(
                "thresholds must satisfy complement_threshold <= conflict_threshold <= "
                f"duplicate_threshold (got {self.complement_threshold}, "
                f"{self.conflict_threshold}, {self.duplicate_threshold})"
            )
        return self
