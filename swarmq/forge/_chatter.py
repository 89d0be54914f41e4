"""What is not knowledge, whatever its words: questions, chit-chat and requests, narration of
the agent's next step and progress reports, tool noise (stack traces, shell transcripts, diffs,
tables, machine output), and the lead-in sentence of a list.
"""

from __future__ import annotations

import re

_QUESTION_START = re.compile(
    r"^(?:should|shall|could|would|can|do|does|did|is|are|was|were|what|why|how|which|when|"
    r"where|who|any idea|have you|has anyone)\b",
    re.IGNORECASE,
)


NEGATIVE = re.compile(
    r"^(?:let me|let's (?:see|check|look|try|run|start)|i'll|i will|i'm going to|i am going to|"
    r"now i|now let|next,? i|first,? (?:i|let)|okay|ok\b|sure\b|great\b|perfect\b|excellent\b|"
    r"thanks|thank you|hello|hi\b|hey\b|got it|sounds good|done\b|alright|looking at|checking|"
    r"running|here(?:'s| is) (?:the|a|what)|i see\b|i can see|yes\b|no\b|nope\b|cool\b|"
    # an apology or a concession answers the user's complaint, it states no rule
    r"hmm+\b|i apologi[sz]e\b|(?:i'm |i am )?sorry\b|my apologies\b|you're right\b|you are right\b|"
    # requests and instructions: what someone wants done, not what was learned
    r"please\b|can you|could you|would you|make (?:the|it|a)\b|add\b|implement\b|"
    r"write\b|create\b|update\b|delete\b|refactor\b|rename\b|fix (?!:)|run the\b|try\b|"
    r"read\b|check\b|look (?:at|into)\b|find\b|investigate\b|"
    # a source line naming a document, not what it says
    r"post-?mortem (?:for|of)\b|source:)",
    re.IGNORECASE,
)


_NOISE = re.compile(
    r"traceback \(most recent call last\)|^\s*file \"[^\"]+\", line \d+|<system-reminder>|"
    r"\bpanicked at\b|tool_use_id|exit code:? \d|^\s*\$ |^\s*[+-]{3} |^\s*@@ |^\s*[{\[]\s*\"|\bnpm err!|"
    r"^\s*(?:error|warning): [\w./-]+:\d+|^\s*(?:error|warning)(?:\[[A-Z]*\d+\])?: |^\s*--> \S+:\d+|"
    r"^\s*\|.*\|.*\||"  # a markdown table row
    r"^\s*(?://|/\*)|\b\w+ := \S|^\s*\d+,\s*//",  # source code: a comment line, a Go assignment
    re.IGNORECASE | re.MULTILINE,
)


_NOISE_HEADS = (
    "traceback",
    "panicked at",
    'file "',
    "<system-reminder>",
    "tool_use_id",
    "exit code",
    "$ ",
    "++",
    "--",
    "+-",
    "-+",
    "@@ ",
    "{",
    "[",
    "npm err!",
    "error",
    "warning",
    "|",
    "//",
    "/*",
    ":=",
)
"""Literals (lower-case) one of which every :data:`_NOISE` match contains."""


_NARRATION_START = re.compile(
    r"(?:below is|here(?:'s| is| are)|the (?:remaining|next) (?:issue|step))\b|"
    r"(?:done|all set|summary|status|progress)\b",
    re.IGNORECASE,
)


_NARRATION_SELF = re.compile(
    r"\bI(?:'m (?:still |now |also |just )?[a-z]+ing\b|'ll\b| will\b|"
    r"'ve (?:created|added|updated|written|implemented|expanded|made|fixed|changed|"
    r"traced|found|identified|located|looked|checked|investigated|analy[sz]ed|reviewed)\b|"
    r" (?:did not|didn't) (?:touch|change|modify|edit)\b)"
)
"""The agent telling what it is doing, will do or has done, or what it left alone ("a change
that I did not touch"): its own progress, not what it learned. "I tried" is not here: "I tried
to start the server and it is blocked by the sandbox" tells what the machine allows."""


_NARRATION_STATE = re.compile(
    r"\bwe're (?:going|now)\b|\b(?:is|are) (?:in place|close now|ready now)\b", re.I
)
"""Narration of the agent's next step and progress reports: what it does, not what it learned."""


_FENCED = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)


_SPACES = re.compile(r"[ \t]+")


_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|[。！？]")


SENTENCE = re.compile(r"(?<=[.!?])\s+")


_QUESTION_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def clean(text: str) -> str:
    """Drop fenced code (a lesson is the sentence around it, not the listing) and tidy spaces."""
    if "```" in text or "~~~" in text:
        text = _FENCED.sub(" ", text)
    if "  " in text or "\t" in text:  # else the substitution would change nothing
        text = _SPACES.sub(" ", text)
    return text.strip()


_CONFIRMED = re.compile(
    r"^\s*(?:got it|understood|agreed|noted|confirmed)\s*[:;]\s+", re.IGNORECASE
)


_CONFIRMED_INITIALS = frozenset("gGuUaAnNcC")
"""First letters of the :data:`_CONFIRMED` phrases: other messages skip the regex."""


_QUESTION_TAIL = re.compile(
    r"(?<=[.!])\s+(?=(?:question\s*\d*\s*(?:of \d+)?\s*:|[^.!?]*\?))", re.IGNORECASE
)


def confirmed_decision(text: str) -> str:
    """What the agent confirms it was told ("Got it: X. Question 4: …?" → "X."), else ``""``:
    a user's answer restated by the agent is a decision, the next question is not part of it."""
    match = _CONFIRMED.match(text) if text.lstrip()[:1] in _CONFIRMED_INITIALS else None
    if match is None:
        return ""
    rest = text[match.end() :]
    return _QUESTION_TAIL.split(rest, maxsplit=1)[0].strip()


def is_chatter(text: str) -> bool:
    """Layers 2 and 3 alone: a question, chit-chat, narration, a request or tool noise."""
    body = clean(text)
    return (
        is_question(body) or bool(NEGATIVE.match(body.lstrip("-*>#• ").lstrip())) or is_noise(body)
    )


def is_narration(opening: str) -> bool:
    """The first sentence narrates the agent's next step or reports progress (cheap checks first)."""
    if _NARRATION_START.match(opening):
        return True
    if "I" in opening and _NARRATION_SELF.search(opening):
        return True
    lowered = opening.lower()
    return ("we're" in lowered or " in place" in lowered or " now" in lowered) and bool(
        _NARRATION_STATE.search(opening)
    )


_NEXT_STEP = re.compile(
    r"^(?:I(?:'ll| will| am going to|'m going to| need to| now need)\b|"
    r"I'm (?:now |also )?(?:checking|looking|starting|trying|running|going|switching|adding)\b|"
    r"(?:now |next,? |first,? )?let me\b(?! know)|let's\b|next,? I\b|now I\b|"
    r"I (?:chose|decided|opted) to\b|"
    r"(?:我|让我|讓我)(?:先|来|來|再|们先|們先)|让我|讓我|接下来我|接下來我|"
    r"다음으로)|"
    r"(?:します|しましょう|していきます|하겠습니다|할게요|보겠습니다)[。.]?$",
    re.IGNORECASE,
)
"""A sentence announcing what the agent does next ("I'll start an interactive push session",
"Let me fix both", "让我先配置…", "順に説明します") or which way it chose for the task ("I chose
to spawn two agents"): a step of the task at hand."""


def ends_in_next_step(body: str) -> bool:
    """Whether a sentence after the first announces the agent's next step: what comes before it
    explains the situation the agent is about to act on (a state of this task), not a rule it
    learned. "Let me know …" is an offer to the reader, not a step."""
    sentences = [s.strip() for s in _QUESTION_SPLIT.split(body.replace("\u2019", "'"))]
    return any(_NEXT_STEP.search(s) for s in sentences[1:] if s)


def is_question(body: str) -> bool:
    if "?" not in body and "？" not in body:
        return False  # no sentence can end with a question mark
    sentences = [s for s in _QUESTION_SPLIT.split(body) if s.strip()]
    if not sentences:
        return False
    questions = sum(1 for s in sentences if s.rstrip().endswith(("?", "？")))
    if questions * 2 >= len(sentences):
        return True
    return bool(_QUESTION_START.match(sentences[0]) and sentences[0].rstrip().endswith("?"))


def statement_before_questions(body: str) -> str:
    """The statements a mostly-questioning passage opens with, before its first question
    ("I don't have internet access here. Could you paste the page?" → the first sentence), or
    ``""``: what someone asks is not known yet, what they state first still is a statement."""
    kept = []
    for sentence in _QUESTION_SPLIT.split(body):
        if sentence.rstrip().endswith(("?", "？")):
            break
        kept.append(sentence.strip())
    statement = " ".join(s for s in kept if s)
    return statement if len(statement) >= MIN_STATEMENT else ""


MIN_STATEMENT = 30


def without_lead_in(body: str) -> str:
    """``body`` without its last sentence, which ends in a colon ("Run these commands:"): what
    comes before it may be a finding, the lead-in itself is not; ``""`` when nothing is left."""
    sentences = [s for s in _QUESTION_SPLIT.split(body) if s.strip()]
    return " ".join(sentences[:-1]).strip() if len(sentences) > 1 else ""


def width(body: str) -> int:
    """Length in letters' worth: an ideograph counts three times (one says about as much as a
    short English word: "记住往后的回复都用中文" is "remember to answer in Chinese from now on"),
    kana and hangul twice."""
    return len(body) + sum(
        2 if "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff" else 1
        for c in body
        if c >= "\u2e80"
    )


def is_noise(body: str) -> bool:
    lowered = body.lower()
    if any(head in lowered for head in _NOISE_HEADS) and _NOISE.search(body):
        return True
    letters = sum(map(str.isalpha, body))
    if letters < 0.55 * len(body):  # paths, hashes, numbers, punctuation: machine output
        return True
    if _SENTENCE_END.search(body) is not None:
        return False
    # a few words and no sentence: a fragment (CJK text has no spaces: count its ideographs)
    return len(body.split()) + (0 if body.isascii() else width(body) - len(body)) < 6
