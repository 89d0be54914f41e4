"""What each kind of knowledge sounds like: the weighted cue patterns per AgentOps type, the
openknowledge classes, and the anchor words that let most passages skip every pattern.

(pattern, weight, anchors): weight 1.0 is a strong, unambiguous signal, 0.5 a supporting one; a
pattern can only match when one of its anchor words (lower-case ``[a-z0-9]+`` tokens) is in the
text, so most patterns are never run at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

from swarmq.flywheel.model import KnowledgeType


class KnowledgeClass(StrEnum):
    """openknowledge's four classes of project knowledge."""

    ARCHITECTURE = "architecture"
    DECISION = "decision"
    TIMELINE = "timeline"
    WORKFLOW = "workflow"


# (pattern, weight, anchors): weight 1.0 is a strong, unambiguous signal, 0.5 a supporting one;
# the pattern can only match when one of its anchor words (lower-case ``[a-z0-9]+`` tokens) is
# in the text, so most patterns are never run at all.
_TYPE_SIGNALS: dict[KnowledgeType, list[tuple[str, float, str]]] = {
    KnowledgeType.DECISION: [
        (
            r"we decided|decided to|decision:|we chose|chose to|going with|opt(?:ed|ing)? for|settled on",
            1.0,
            "decided decision chose going opt opted opting settled",
        ),
        # the stack named as such: "Tech stack: Next.js frontend, FastAPI backend, …"
        (r"^\W*tech(?:nology)? stack\s*[:：]", 1.0, "stack"),
        (r"we(?:'ll| will) (?:use|store|keep|run|write|go with)", 1.0, "ll will"),
        (
            r"(?:switched|migrated) (?:\S+ ){0,4}?to\b|standardi[sz]ed? on",
            1.0,
            "switched migrated standardize standardise standardized standardised",
        ),
        # "switch to a branch", "lets look at migrating X to Y": a step or a request, unless
        # something else says it was decided
        (
            r"switch(?:ing)? (?:\S+ ){0,4}?to\b|migrat(?:e|ing) (?:\S+ ){0,4}?to\b",
            0.5,
            "switch switching migrate migrating",
        ),
        (
            r"instead of|rather than|in favou?r of|trade-?off",
            0.5,
            "instead rather favor favour trade tradeoff",
        ),
        (r"\bprefer\b|convention|\bpolicy\b", 0.5, "prefer convention conventions policy"),
        # a preference: "use pyyaml instead of ruamel.yaml"
        (
            r"\b(?:use|prefer|choose|pick) [\w./@-]+(?: [\w./@-]+)? (?:instead of|rather than)\b",
            1.0,
            "instead rather",
        ),
    ],
    KnowledgeType.FAILURE: [
        (
            r"root cause|failed because|post-?mortem|anti-?pattern|the bug was|caused by",
            1.0,
            "root failed post postmortem anti antipattern bug caused",
        ),
        # a diagnosis: what the error came from
        (
            r"\bthe (?:error|issue|problem) (?:is|was) (?:that|from|caused by)\b",
            1.0,
            "error issue problem",
        ),
        (
            r"\bregression\b|\bcrash(?:ed|es)?\b|\bbroke\b|deadlock|race condition|outage",
            1.0,
            "regression crash crashed crashes broke deadlock race outage",
        ),
        (
            r"did not work|didn't work|does not work|doesn't work|silently (?:drop|fail|lose)",
            0.5,
            "work silently",
        ),
    ],
    KnowledgeType.SOLUTION: [
        (
            r"fixed (?:it )?by|the fix (?:is|was)|\bfix:|resolved by|solved by|the solution",
            1.0,
            "fixed fix resolved solved solution",
        ),
        (
            r"\bworkaround\b|to fix (?:this|it)|\bfixes (?:it|this|the)\b|the answer is",
            1.0,
            "workaround fix fixes answer",
        ),
    ],
    KnowledgeType.LEARNING: [
        (
            r"lesson(?:s)? learned|we learned|i learned|\blearned that|turns out|\bgotcha\b",
            1.0,
            "lesson lessons learned turns gotcha",
        ),
        (
            r"\btil\b|key insight|\bpitfall\b|\bcaveat\b|important:|\bnote:",
            1.0,
            "til insight pitfall caveat important note",
        ),
        # a standing instruction or fact the speaker wants kept
        (r"\bnote that\b|\bkeep in mind\b|\bremember that\b", 1.0, "note mind remember"),
        # a gotcha: an action that does nothing until something else is done
        (
            r"\b(?:has|have|had) no effect (?:until|unless|without)\b|"
            r"(?:doesn't|does not|won't|will not) take effect (?:until|unless)\b|"
            r"\bonly takes? effect (?:after|when|once)\b",
            1.0,
            "effect",
        ),
        # a rule given a standing scope: for every later session, not this task
        (
            r"\bfrom now on\b|\bfrom here on\b|\b(?:always )?(?:note|remember) this\b(?! in (?:your|the) plan)|"
            r"\bkeep this in mind\b",
            1.0,
            "now here note remember mind",
        ),
        # a fact about the machine, found by running things
        (
            r"\bnot installed|isn't installed|is not available|\bnot on (?:the )?path\b|command not found|"
            r"(?:is|are)(?: not|n't) (?:configured|connected)\b|"
            r"(?:no|don't have|do not have|without) (?:\w+ )?(?:network|internet) access|(?:cannot|can't|unable to) reach|blocks? (?:all )?(?:outbound|network)|"
            r"network access is (?:blocked|restricted|disabled)|sandbox (?:blocks|denies|prevents)",
            1.0,
            "installed available found network internet reach block blocks sandbox configured "
            "connected",
        ),  # not "path": too common
        (
            r"^(?:always|never|make sure|avoid|don't|do not)\b",
            1.0,
            "always never sure avoid don do",
        ),  # a rule
        (
            r"\balways\b|\bnever\b|make sure|be careful|must not|must be|\bavoid\b",
            0.5,
            "always never sure careful must avoid",
        ),
    ],
    KnowledgeType.REFERENCE: [
        (
            r"documented in|is documented|docs? (?:at|in)|reference:|refer to|specified in",
            1.0,
            "documented doc docs reference refer specified",
        ),
        (r"\bsee (?:the |also )?`?[\w./-]+\.(?:md|rst|txt)\b", 1.0, "see"),
        (r"https?://\S+|\brfc ?\d+", 0.5, "http https rfc"),
    ],
}


_CLASS_SIGNALS: dict[KnowledgeClass, str] = {
    KnowledgeClass.ARCHITECTURE: (
        r"architecture|tech stack|\bstack\b|framework|database|\bschema\b|\bredis\b|postgres|"
        r"sqlite|\bqueue\b|\bbroker\b|microservice|\bservice\b|\bapi\b|component|\bmodule\b|"
        r"infrastructure|\bcluster\b|storage layer"
    ),
    KnowledgeClass.TIMELINE: (
        r"milestone|\bsprint\b|released|\bshipped\b|\bv\d+\.\d+|deadline|\bphase \d|"
        r"\bby (?:monday|tuesday|wednesday|thursday|friday|next week)"
    ),
    KnowledgeClass.WORKFLOW: (
        r"\bci\b|pipeline|pull request|\bprs?\b|code review|\breview(?:er|s)?\b|pre-commit|"
        r"before (?:merging|committing|pushing|release)|release process|workflow|make test|"
        r"\bdeploy(?:ment|s|ed)?\b|run `[^`]+`"
    ),
}


TYPES = [
    (ktype, [(re.compile(p, re.IGNORECASE), w, frozenset(a.split())) for p, w, a in signals])
    for ktype, signals in _TYPE_SIGNALS.items()
]


OBSERVED = next(p for ktype, signals in TYPES for p, _, a in signals if "sandbox" in a)
"""The machine-fact pattern: only what the agent (or a summary) says counts."""


RULE = next(
    p for ktype, signals in TYPES for p, _, a in signals if p.pattern.startswith("^(?:always")
)
RULE_WORDS = next(
    p for ktype, signals in TYPES for p, _, a in signals if p.pattern.startswith(r"\balways\b")
)
""""always / never / must / avoid …" inside a sentence: a supporting cue, unless the sentence
also says why (a rule with its reason is a rule)."""


"""A sentence opening with "Always/Never/Avoid/Don't …" without a reason is advice for the task
at hand, whoever gives it (the user's instruction, the agent's "Don't trigger it by hand"): a
supporting signal only; a reason or another cue must make it a rule (round 4: the agent too)."""


ANCHORS = frozenset().union(*(anchors for _, signals in TYPES for _, _, anchors in signals))


_CLASS_HEADS: dict[KnowledgeClass, tuple[str, ...]] = {
    KnowledgeClass.ARCHITECTURE: (
        "architecture",
        "tech stack",
        "stack",
        "framework",
        "database",
        "schema",
        "redis",
        "postgres",
        "sqlite",
        "queue",
        "broker",
        "microservice",
        "service",
        "api",
        "component",
        "module",
        "infrastructure",
        "cluster",
        "storage layer",
    ),
    KnowledgeClass.TIMELINE: (
        "milestone",
        "sprint",
        "released",
        "shipped",
        "v",
        "deadline",
        "phase",
        "by ",
    ),
    KnowledgeClass.WORKFLOW: (
        "ci",
        "pipeline",
        "pull request",
        "pr",
        "code review",
        "review",
        "pre-commit",
        "before ",
        "release process",
        "workflow",
        "make test",
        "deploy",
        "run `",
    ),
}
"""A literal every match of the class pattern contains (lower-case): most passages need no regex."""


_CLASSES = [
    (kclass, re.compile(p, re.IGNORECASE), _CLASS_HEADS[kclass])
    for kclass, p in _CLASS_SIGNALS.items()
]


PRIORITY = {
    KnowledgeType.FAILURE: 0,
    KnowledgeType.SOLUTION: 1,
    KnowledgeType.DECISION: 2,
    KnowledgeType.LEARNING: 3,
    KnowledgeType.REFERENCE: 4,
}
"""Last tie-breaker: the more specific type wins (a root cause beats a generic 'always')."""


_SEPARATORS = str.maketrans(
    {
        c: " "
        for c in [*map(chr, range(128)), "—", "–", "’", "‘", "“", "”", "…", "•", "→", "·", "\u00a0"]
        if not (c.isascii() and c.isalnum())
    }
)


def tokens_of(text: str) -> list[str]:
    """Lower-case ASCII letter/digit runs (``don't`` → ``don``, ``t``), in order, repeats kept."""
    return text.lower().translate(_SEPARATORS).split()


def words(text: str) -> frozenset[str]:
    """The distinct :func:`tokens_of` ``text``: what anchors are made of."""
    return frozenset(tokens_of(text))


def has_signal_words(text_words: Iterable[str]) -> bool:
    return not ANCHORS.isdisjoint(text_words)


def has_signal(text: str) -> bool:
    """Layer 1 alone: whether any anchor word of a knowledge pattern occurs (one tokenising
    pass; the patterns themselves are not run)."""
    return not ANCHORS.isdisjoint(words(text))


def mentions(lowered: str, heads: tuple[str, ...]) -> bool:
    return any(head in lowered for head in heads)


def knowledge_class(lowered: str, body: str, ktype: KnowledgeType) -> KnowledgeClass | None:
    """``lowered`` is ``body.lower()``: a class pattern runs only when one of its heads occurs."""
    if ktype is KnowledgeType.DECISION:
        return KnowledgeClass.DECISION
    for kclass, pattern, heads in _CLASSES:
        if mentions(lowered, heads) and pattern.search(body):
            return kclass
    return None
