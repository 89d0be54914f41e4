"""opencode-swarm's ``inferTags`` and the category a curated lesson gets from its tags."""

from __future__ import annotations

import re
from functools import lru_cache

from swarmq.knowledge.model import Category

JS_SPACE = "[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
"""JavaScript's ``\\s`` (Python's differs on U+001C-U+001F, U+0085 and U+FEFF)."""

_TODO = re.compile(
    rf"(^|{JS_SPACE})(?:todo|remember|don't?(?:{JS_SPACE}+)?forget)(?:{JS_SPACE}|:|,|\Z)",
    re.IGNORECASE,
)
_TAG_RULES: tuple[tuple[str, frozenset[str]], ...] = tuple(
    (tag, frozenset(words.split("|")))
    for tag, words in (
        ("typescript", "typescript|ts"),
        ("javascript", "javascript|js"),
        ("python", "python"),
        ("runtime", "bun|node|deno"),
        ("frontend", "react|vue|svelte|angular"),
        ("git", "git|github|gitlab"),
        ("container", "docker|kubernetes|k8s"),
        ("database", "sql|postgres|mysql|sqlite"),
        ("testing", "test|spec|vitest|jest|mocha"),
        ("ci-cd", "ci|cd|pipeline|workflow|action"),
        ("security", "security|auth|token|password|encrypt"),
        ("performance", "performance|latency|throughput|cache"),
        ("api", "api|rest|graphql|grpc|endpoint"),
        ("opencode-swarm", "swarm|architect|agent|hook|plan"),
    )
)
"""Each tag's words. opencode-swarm matches ``\\b(?:words)\\b`` (ASCII ``\\b``) in the lower-cased
lesson; the words are all word characters, so a word matches exactly when it is a whole run of
ASCII word characters: one scan for the runs replaces fourteen regex searches per lesson."""
_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")


def infer_tags(lesson: str) -> list[str]:
    """Tags in opencode-swarm's order, deduplicated."""
    return list(_tags(lesson))


@lru_cache(maxsize=4096)
def _tags(lesson: str) -> tuple[str, ...]:
    """Cached: an add infers its lesson's tags for the entry and again for its contradiction
    features."""
    tags: list[str] = []
    if _TODO.search(lesson):
        tags.append("todo")
    runs = set(_WORD_RUN.findall(lesson.lower()))
    for tag, words in _TAG_RULES:
        if not words.isdisjoint(runs) and tag not in tags:
            tags.append(tag)
    return tuple(tags)


_CATEGORY_VALUES = frozenset(c.value for c in Category)


def infer_category(lesson: str, tags: list[str] | None = None) -> str:
    """The curator's rule: the first inferred tag that names a category, else ``process``."""
    for tag in tags if tags is not None else infer_tags(lesson):
        if tag in _CATEGORY_VALUES:
            return tag
    return Category.PROCESS.value
