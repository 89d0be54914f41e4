"""The token sets lessons are compared on, apart from the numpy encoding (:mod:`.sets`) so a
``consolidation:`` setting can name one without importing numpy."""

from __future__ import annotations

from enum import StrEnum


class Measure(StrEnum):
    """Which token sets two lessons are compared on."""

    BIGRAMS = "bigrams"
    """Word bigrams of opencode-swarm's normalised text (its near-duplicate detector)."""
    TOKENS = "tokens"
    """Lower-cased Unicode word tokens (openknowledge's lexical Jaccard)."""
