"""The faster forms of what every add computes before it queues give exactly what the
straightforward forms give, on realistic and hostile text: tags (one scan of word runs instead
of a regex per tag), the UTF-16 length, and negation contexts (phrases the lesson does not say
are skipped: they could have no context)."""

from __future__ import annotations

import random
import re

from bench.lesson_corpus import LessonGenerator
from swarmq.knowledge.config import ValidationMode
from swarmq.knowledge.contradiction import (
    NEGATION_PHRASES,
    context_words,
    negation_contexts,
    normalize_semantic,
)
from swarmq.knowledge.tags import _TAG_RULES, _TODO, infer_tags
from swarmq.knowledge.validation import js_length

RULES = tuple(
    (tag, re.compile(rf"\b(?:{'|'.join(sorted(words))})\b", re.ASCII)) for tag, words in _TAG_RULES
)


def tags_by_regex(lesson: str) -> list[str]:
    """opencode-swarm's form: one ``\\b(?:words)\\b`` search per tag."""
    tags = ["todo"] if _TODO.search(lesson) else []
    lower = lesson.lower()
    return tags + [tag for tag, pattern in RULES if pattern.search(lower) and tag not in tags]


def texts() -> list[str]:
    rng = random.Random(15)
    alphabet = [
        *"abcdefgijklmnoprstuvwxyz _-.:/'`$()K8",
        "\u212a",  # Kelvin sign: lower-cases to ASCII "k"
        "\u0130",  # dotted capital I: lower-cases to two code points
        "\u00e9",
        "\u2019",
        "\u200b",
        "\U0001f600",
        "\ud800",  # a lone surrogate
    ]
    words = [
        "ts", "TS", "js", "node", "github", "git", "k8s", "sql", "test", "tests", "ci", "cd",
        "ci-cd", "auth", "cache", "api", "swarm", "plan", "todo", "don't", "forget", "never",
        "always", "use", "not", "must", "avoid", "prefer", "do", "don't use", "pytest", "_ts",
    ]  # fmt: skip
    out = LessonGenerator(seed=21).corpus(400, dup_rate=0.2).lessons
    for _ in range(3000):
        if rng.random() < 0.5:
            out.append(" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))))
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))))
    return out


def test_tags_match_the_per_tag_regexes() -> None:
    for text in texts():
        assert infer_tags(text) == tags_by_regex(text), text


def test_js_length_counts_utf16_code_units() -> None:
    for text in texts():
        assert js_length(text) == len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF), text


def test_a_phrase_the_lesson_does_not_say_has_no_context() -> None:
    """Why negation_contexts may skip a phrase whose words are not all in the lesson: its
    context would be empty, in either mode, whatever positions are skipped."""
    for text in texts():
        for mode in ValidationMode:
            strict = mode is ValidationMode.STRICT
            said = text.replace("'", "").replace("\u2019", "") if strict else text
            words = normalize_semantic(said).split(" ")
            found = negation_contexts(text, mode)
            for phrase in NEGATION_PHRASES:
                term = phrase.replace("'", "") if strict else phrase
                if not set(words).issuperset(term.split(" ")):
                    assert not context_words(words, term), (text, phrase)
                    assert phrase not in found
