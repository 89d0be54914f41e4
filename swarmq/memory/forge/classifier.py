"""The layered classifier that decides whether a passage of a transcript is knowledge.

In the spirit of openknowledge's four-layer defence, cheapest first:

1. **Trigger filter**: one compiled regex over the text; most passages stop here.
2. **Questions** are rejected: a question records what someone did not know yet.
3. **Negative patterns**: chit-chat, narration of the agent's next step, tool noise (JSON,
   stack traces, shell transcripts, diffs, injected reminders) are rejected.
4. **Keyword scoring** per knowledge type, plus evidence (specific names, numbers, a reason),
   minus hedging; the **confidence** must reach the threshold (openknowledge's 0.6).

The result is a typed candidate: AgentOps' ``decision / solution / learning / failure /
reference`` type and, where one applies, openknowledge's ``architecture / decision / timeline /
workflow`` class.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from swarmq.memory.flywheel.model import KnowledgeType
from swarmq.memory.forge import multilingual

DEFAULT_MIN_CONFIDENCE = 0.6
MIN_CHARS = 30
MAX_CHARS = 1500


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
        (r"we decided|decided to|decision:|we chose|chose to|going with|opted for|settled on", 1.0,
         "decided decision chose going opted settled"),
        (r"we(?:'ll| will) (?:use|store|keep|run|write|go with)", 1.0, "ll will"),
        (r"switch(?:ed|ing)? (?:\S+ ){0,4}?to\b|migrat(?:e|ed|ing) (?:\S+ ){0,4}?to\b|standardi[sz]e on", 1.0,
         "switch switched switching migrate migrated migrating standardize standardise"),
        (r"instead of|rather than|in favou?r of|trade-?off", 0.5, "instead rather favor favour trade tradeoff"),
        (r"\bprefer\b|convention|\bpolicy\b", 0.5, "prefer convention conventions policy"),
        # a preference: "use pyyaml instead of ruamel.yaml"
        (r"\b(?:use|prefer|choose|pick) [\w./@-]+(?: [\w./@-]+)? (?:instead of|rather than)\b", 1.0, "instead rather"),
    ],
    KnowledgeType.FAILURE: [
        (r"root cause|failed because|post-?mortem|anti-?pattern|the bug was|caused by", 1.0,
         "root failed post postmortem anti antipattern bug caused"),
        (r"\bregression\b|\bcrash(?:ed|es)?\b|\bbroke\b|deadlock|race condition|outage", 1.0,
         "regression crash crashed crashes broke deadlock race outage"),
        (r"did not work|didn't work|does not work|doesn't work|silently (?:drop|fail|lose)", 0.5, "work silently"),
    ],
    KnowledgeType.SOLUTION: [
        (r"fixed (?:it )?by|the fix (?:is|was)|\bfix:|resolved by|solved by|the solution", 1.0,
         "fixed fix resolved solved solution"),
        (r"\bworkaround\b|to fix (?:this|it)|\bfixes (?:it|this|the)\b|the answer is", 1.0,
         "workaround fix fixes answer"),
    ],
    KnowledgeType.LEARNING: [
        (r"lesson(?:s)? learned|we learned|i learned|\blearned that|turns out|\bgotcha\b", 1.0,
         "lesson lessons learned turns gotcha"),
        (r"\btil\b|key insight|\bpitfall\b|\bcaveat\b|important:|\bnote:", 1.0,
         "til insight pitfall caveat important note"),
        # a standing instruction or fact the speaker wants kept
        (r"\bnote that\b|\bkeep in mind\b|\bremember that\b", 1.0, "note mind remember"),
        # a fact about the machine, found by running things
        (r"\bnot installed|isn't installed|is not available|\bnot on (?:the )?path\b|command not found|"
         r"no (?:network|internet) access|(?:cannot|can't|unable to) reach|blocks? (?:all )?(?:outbound|network)|"
         r"network access is (?:blocked|restricted|disabled)|sandbox (?:blocks|denies|prevents)",
         1.0, "installed available found network internet reach block blocks sandbox"),  # not "path": too common
        (r"^(?:always|never|make sure|avoid|don't|do not)\b", 1.0, "always never sure avoid don do"),  # a rule
        (r"\balways\b|\bnever\b|make sure|be careful|must not|must be|\bavoid\b", 0.5,
         "always never sure careful must avoid"),
    ],
    KnowledgeType.REFERENCE: [
        (r"documented in|is documented|docs? (?:at|in)|reference:|refer to|specified in", 1.0,
         "documented doc docs reference refer specified"),
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

_TYPES = [
    (ktype, [(re.compile(p, re.IGNORECASE), w, frozenset(a.split())) for p, w, a in signals])
    for ktype, signals in _TYPE_SIGNALS.items()
]
_OBSERVED = next(p for ktype, signals in _TYPES for p, _, a in signals if "sandbox" in a)
"""The machine-fact pattern: only what the agent (or a summary) says counts."""
_RULE = next(p for ktype, signals in _TYPES for p, _, a in signals if p.pattern.startswith("^(?:always"))
"""A sentence opening with "Always/Never/Don't …": from a user it is an instruction for the task
at hand and counts as a supporting signal only (a reason or another cue must make it a rule)."""
_ANCHORS = frozenset().union(*(anchors for _, signals in _TYPES for _, _, anchors in signals))
_CLASS_HEADS: dict[KnowledgeClass, tuple[str, ...]] = {
    KnowledgeClass.ARCHITECTURE: ("architecture", "tech stack", "stack", "framework", "database", "schema", "redis",
                                  "postgres", "sqlite", "queue", "broker", "microservice", "service", "api",
                                  "component", "module", "infrastructure", "cluster", "storage layer"),
    KnowledgeClass.TIMELINE: ("milestone", "sprint", "released", "shipped", "v", "deadline", "phase", "by "),
    KnowledgeClass.WORKFLOW: ("ci", "pipeline", "pull request", "pr", "code review", "review", "pre-commit",
                              "before ", "release process", "workflow", "make test", "deploy", "run `"),
}
"""A literal every match of the class pattern contains (lower-case): most passages need no regex."""
_CLASSES = [(kclass, re.compile(p, re.IGNORECASE), _CLASS_HEADS[kclass]) for kclass, p in _CLASS_SIGNALS.items()]
_REASON_HEADS = ("because", "so that", "since", "due to", "which means", "→", "->")
_HEDGE_HEADS = ("maybe", "perhaps", "might", "not sure", "i think", "i guess", "possibly", "probably", "could try",
                "we could", "one option")
"""Literals (lower-case) without which :data:`_REASON` / :data:`_HEDGE` cannot match."""

_QUESTION_START = re.compile(
    r"^(?:should|shall|could|would|can|do|does|did|is|are|was|were|what|why|how|which|when|"
    r"where|who|any idea|have you|has anyone)\b",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"^(?:let me|let's (?:see|check|look|try|run|start)|i'll|i will|i'm going to|i am going to|"
    r"now i|now let|next,? i|first,? (?:i|let)|okay|ok\b|sure\b|great\b|perfect\b|excellent\b|"
    r"thanks|thank you|hello|hi\b|hey\b|got it|sounds good|done\b|alright|looking at|checking|"
    r"running|here(?:'s| is) (?:the|a|what)|i see\b|i can see|yes\b|no\b|nope\b|cool\b|"
    # requests and instructions: what someone wants done, not what was learned
    r"please\b|can you|could you|would you|make (?:the|it|a)\b|add\b|implement\b|"
    r"write\b|create\b|update\b|delete\b|refactor\b|rename\b|fix (?!:)|run the\b|try\b|"
    # a source line naming a document, not what it says
    r"post-?mortem (?:for|of)\b|source:)",
    re.IGNORECASE,
)
_NOISE = re.compile(
    r"traceback \(most recent call last\)|^\s*file \"[^\"]+\", line \d+|<system-reminder>|"
    r"tool_use_id|exit code:? \d|^\s*\$ |^\s*[+-]{3} |^\s*@@ |^\s*[{\[]\s*\"|\bnpm err!|"
    r"^\s*(?:error|warning): [\w./-]+:\d+|^\s*(?:error|warning)(?:\[[A-Z]*\d+\])?: |^\s*--> \S+:\d+|"
    r"^\s*\|.*\|.*\|",  # a markdown table row
    re.IGNORECASE | re.MULTILINE,
)
_NOISE_HEADS = ("traceback", 'file "', "<system-reminder>", "tool_use_id", "exit code", "$ ", "++", "--", "+-", "-+",
                "@@ ", "{", "[", "npm err!", "error", "warning", "|")
"""Literals (lower-case) one of which every :data:`_NOISE` match contains."""
_NARRATION_START = re.compile(
    r"(?:below is|here(?:'s| is| are)|the (?:remaining|next) (?:issue|step))\b|"
    r"(?:done|all set|summary|status|progress)\b",
    re.IGNORECASE,
)
_NARRATION_SELF = re.compile(
    r"\bI(?:'m (?:still |now |also |just )?[a-z]+ing\b|'ll\b| will\b|"
    r"'ve (?:created|added|updated|written|implemented|expanded|made|fixed|changed)\b)"
)
_NARRATION_STATE = re.compile(r"\bwe're (?:going|now)\b|\b(?:is|are) (?:in place|close now|ready now)\b", re.I)
"""Narration of the agent's next step and progress reports: what it does, not what it learned."""
_HEDGE = re.compile(
    r"\bmaybe\b|\bperhaps\b|\bmight\b|not sure|i think|i guess|possibly|probably|could try|"
    r"we could|one option",
    re.IGNORECASE,
)
_REASON = re.compile(r"\bbecause\b|\bso that\b|\bsince\b|\bdue to\b|\bwhich means\b|→|->", re.I)
_SPECIFIC = re.compile(r"`[^`]+`|\b[\w./-]+\.(?:py|go|ts|js|rs|md|yaml|yml|jsonl?|toml|sh|sql)\b|\d")
_FENCED = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_SPACES = re.compile(r"[ \t]+")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|[。！？]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Verdict:
    """The classifier's answer for one passage; ``accepted`` only when confident enough."""

    accepted: bool
    reason: str
    type: KnowledgeType | None = None
    knowledge_class: KnowledgeClass | None = None
    confidence: float = 0.0
    text: str = ""


_SEPARATORS = str.maketrans({c: " " for c in [*map(chr, range(128)), "—", "–", "’", "‘", "“", "”", "…", "•",
                                                 "→", "·", "\u00a0"] if not (c.isascii() and c.isalnum())})


def tokens_of(text: str) -> list[str]:
    """Lower-case ASCII letter/digit runs (``don't`` → ``don``, ``t``), in order, repeats kept."""
    return text.lower().translate(_SEPARATORS).split()


def words(text: str) -> frozenset[str]:
    """The distinct :func:`tokens_of` ``text``: what anchors are made of."""
    return frozenset(tokens_of(text))


def has_signal_words(text_words: Iterable[str]) -> bool:
    return not _ANCHORS.isdisjoint(text_words)


def has_signal(text: str) -> bool:
    """Layer 1 alone: whether any anchor word of a knowledge pattern occurs (one tokenising
    pass; the patterns themselves are not run)."""
    return not _ANCHORS.isdisjoint(words(text))


def clean(text: str) -> str:
    """Drop fenced code (a lesson is the sentence around it, not the listing) and tidy spaces."""
    if "```" in text or "~~~" in text:
        text = _FENCED.sub(" ", text)
    if "  " in text or "\t" in text:  # else the substitution would change nothing
        text = _SPACES.sub(" ", text)
    return text.strip()


def classify(
    text: str,
    *,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    bonus: float = 0.0,
    lead: str = "",
    text_words: frozenset[str] | None = None,
    observed: bool = True,
) -> Verdict:
    """Classify one passage; ``bonus`` lifts passages from trusted sources (summaries),
    ``lead`` is the sentence introducing the list the passage belongs to, ``text_words`` the
    passage's :func:`words` when the caller already has them. ``observed`` is false for what a
    user typed: a pasted "command not found" is a report, not a fact the agent found out."""
    scored_words = words(f"{lead} {text}") if lead else (text_words if text_words is not None else words(text))
    foreign = multilingual.foreign(text, scored_words) or (bool(lead) and multilingual.foreign(lead, scored_words))
    if _ANCHORS.isdisjoint(scored_words) and not foreign:
        return Verdict(False, "no-signal")  # layer 1: the fast filter
    # layers 2 and 3 (the anchored negative patterns first: they are the cheapest)
    opening = text.lstrip().lstrip("-*>#• ").lstrip().replace("’", "'")
    if _NEGATIVE.match(opening) or (foreign and multilingual.NARRATION.match(opening)):
        return Verdict(False, "negative-pattern")
    body = clean(text)
    if (len(body) if body.isascii() else _width(body)) < MIN_CHARS:
        return Verdict(False, "too-short")
    if len(body) > MAX_CHARS:
        return Verdict(False, "too-long")
    if body.rstrip("*_ ").endswith((":", "：")):  # introduces what follows (steps, a list)
        body = _without_lead_in(body)
        if not body:
            return Verdict(False, "lead-in")
    if _is_question(body):
        return Verdict(False, "question")
    if _is_noise(body):
        return Verdict(False, "negative-pattern")
    if _is_narration(_SENTENCE.split(body[:240].replace("’", "'"), maxsplit=1)[0]):
        return Verdict(False, "narration")
    scored = f"{lead} {body}" if lead else body
    cues = multilingual.signals(scored, observed=observed) if foreign else {}
    scores = []  # layer 4
    for ktype, signals in _TYPES:
        strong = weak = 0
        first = len(scored)
        for pattern, weight, anchors in signals:
            if anchors.isdisjoint(scored_words) or (not observed and pattern is _OBSERVED):
                continue
            match = pattern.search(body) or (pattern.search(lead) if lead else None)
            if match:
                first = min(first, match.start())
                if weight >= 1.0 and (observed or pattern is not _RULE):
                    strong += 1
                else:
                    weak += 1
        if ktype in cues:
            more_strong, more_weak, at = cues[ktype]
            strong, weak, first = strong + more_strong, weak + more_weak, min(first, at)
        scores.append((strong + 0.5 * weak, -first, -_PRIORITY[ktype], strong, weak, ktype))
    # Most signal wins; on a tie the type named first ("We chose …, because a crash …" is a
    # decision), then the more specific type.
    total, _, _, strong, weak, ktype = max(scores)
    if total <= 0:
        return Verdict(False, "no-signal")
    confidence = 0.4 + 0.2 * min(strong, 2) + 0.08 * min(weak, 3) + bonus
    lowered = body.lower()
    if (_mentions(lowered, _REASON_HEADS) and _REASON.search(body)) or (foreign and multilingual.REASON.search(body)):
        confidence += 0.1
    if _SPECIFIC.search(body):
        confidence += 0.1
    if (_mentions(lowered, _HEDGE_HEADS) and _HEDGE.search(body)) or (foreign and multilingual.HEDGE.search(body)):
        confidence -= 0.2
    confidence = round(max(0.0, min(0.99, confidence)), 4)
    kclass = _knowledge_class(f"{lead.lower()} {lowered}" if lead else lowered, scored, ktype)
    if confidence < min_confidence:
        return Verdict(False, "low-confidence", ktype, kclass, confidence, body)
    return Verdict(True, "accepted", ktype, kclass, confidence, body)


_PRIORITY = {
    KnowledgeType.FAILURE: 0,
    KnowledgeType.SOLUTION: 1,
    KnowledgeType.DECISION: 2,
    KnowledgeType.LEARNING: 3,
    KnowledgeType.REFERENCE: 4,
}
"""Last tie-breaker: the more specific type wins (a root cause beats a generic 'always')."""


_CONFIRMED = re.compile(r"^\s*(?:got it|understood|agreed|noted|confirmed)\s*[:;]\s+", re.IGNORECASE)
_CONFIRMED_INITIALS = frozenset("gGuUaAnNcC")
"""First letters of the :data:`_CONFIRMED` phrases: other messages skip the regex."""
_QUESTION_TAIL = re.compile(r"(?<=[.!])\s+(?=(?:question\s*\d*\s*(?:of \d+)?\s*:|[^.!?]*\?))", re.IGNORECASE)


def confirmed_decision(text: str) -> str:
    """What the agent confirms it was told ("Got it: X. Question 4: …?" → "X."), else ``""``:
    a user's answer restated by the agent is a decision, the next question is not part of it."""
    match = _CONFIRMED.match(text) if text.lstrip()[:1] in _CONFIRMED_INITIALS else None
    if match is None:
        return ""
    rest = text[match.end():]
    return _QUESTION_TAIL.split(rest, maxsplit=1)[0].strip()


def is_chatter(text: str) -> bool:
    """Layers 2 and 3 alone: a question, chit-chat, narration, a request or tool noise."""
    body = clean(text)
    return _is_question(body) or bool(_NEGATIVE.match(body.lstrip("-*>#• ").lstrip())) or _is_noise(body)


def _mentions(lowered: str, heads: tuple[str, ...]) -> bool:
    return any(head in lowered for head in heads)


def _knowledge_class(lowered: str, body: str, ktype: KnowledgeType) -> KnowledgeClass | None:
    """``lowered`` is ``body.lower()``: a class pattern runs only when one of its heads occurs."""
    if ktype is KnowledgeType.DECISION:
        return KnowledgeClass.DECISION
    for kclass, pattern, heads in _CLASSES:
        if _mentions(lowered, heads) and pattern.search(body):
            return kclass
    return None


def _is_narration(opening: str) -> bool:
    """The first sentence narrates the agent's next step or reports progress (cheap checks first)."""
    if _NARRATION_START.match(opening):
        return True
    if "I" in opening and _NARRATION_SELF.search(opening):
        return True
    lowered = opening.lower()
    return ("we're" in lowered or " in place" in lowered or " now" in lowered) and bool(
        _NARRATION_STATE.search(opening))


def _is_question(body: str) -> bool:
    if "?" not in body and "？" not in body:
        return False  # no sentence can end with a question mark
    sentences = [s for s in _QUESTION_SPLIT.split(body) if s.strip()]
    if not sentences:
        return False
    questions = sum(1 for s in sentences if s.rstrip().endswith(("?", "？")))
    if questions * 2 >= len(sentences):
        return True
    return bool(_QUESTION_START.match(sentences[0]) and sentences[0].rstrip().endswith("?"))


def _without_lead_in(body: str) -> str:
    """``body`` without its last sentence, which ends in a colon ("Run these commands:"): what
    comes before it may be a finding, the lead-in itself is not; ``""`` when nothing is left."""
    sentences = [s for s in _QUESTION_SPLIT.split(body) if s.strip()]
    return " ".join(sentences[:-1]).strip() if len(sentences) > 1 else ""


_QUESTION_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def _width(body: str) -> int:
    """Length counting East Asian ideographs and kana twice: 30 of them say more than 30 letters."""
    return len(body) + sum(1 for c in body if c >= "\u2e80")


def _is_noise(body: str) -> bool:
    lowered = body.lower()
    if any(head in lowered for head in _NOISE_HEADS) and _NOISE.search(body):
        return True
    letters = sum(map(str.isalpha, body))
    if letters < 0.55 * len(body):  # paths, hashes, numbers, punctuation: machine output
        return True
    return _SENTENCE_END.search(body) is None and len(body.split()) < 6
