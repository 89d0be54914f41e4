"""Recognising a project fact from a lesson's text: something true in every session of the
project (its environment, where things are, the user's standing preferences), as opposed to a
lesson that matters only when a task touches its subject.

Kept apart from :mod:`swarmq.knowledge.facts` so the add path (:mod:`.reinforcement`) can tag a
new entry without importing injection. The rules and their measured precision and recall on
real sessions' lessons are in ``docs/knowledge.md`` (Project facts).
"""

from __future__ import annotations

import re
from enum import StrEnum

from swarmq.knowledge.signature import failure_signature

FACT_TAG = "project-fact"
"""The tag that marks a project fact (opencode-swarm keeps tags; ``inferTags`` never makes it)."""


class FactKind(StrEnum):
    ENVIRONMENT = "environment"
    LAYOUT = "layout"
    PREFERENCE = "preference"


CATEGORY = {
    FactKind.ENVIRONMENT: "tooling",
    FactKind.LAYOUT: "architecture",
    FactKind.PREFERENCE: "process",
}
"""The opencode-swarm category a fact gets when its adder names none."""

_ENV_SIGNATURES = re.compile(
    r": command not found$|^zsh: no matches found$|^sudo: a terminal is required$"
)
_ENVIRONMENT = re.compile(
    r"\b(?:not installed|isn'?t installed|not on (?:the )?PATH|on (?:the )?PATH|command not found|"
    r"is not available|use python3|python3? (?:is|points to|must point)|"
    r"(?:the|this|login|default) shell (?:is|here|uses|on)\b|\bshell is\b|zsh|powershell|cmd\.exe|"
    r"sandbox(?:ed)?|escalated permissions|escalation|sudo|non-interactive|"
    r"on (?:this|the|my|the user's) (?:work |home )?"
    r"(?:mac|machine|host|computer|box|server|laptop|system)|here\b(?= *[;,.)])|"
    r"(?:api |llm )?gateway|not (?:registered|connected) in the session|"
    r"nix flakes?|nix-shell|dev ?shells?|"
    r"macos|windows|linux|ubuntu|debian|nixos|wsl|homebrew|brew|apt-get|"
    r"(?:console|terminal|text|default|locale) encoding (?:here |on this \w+ )?is\b|"
    r"code ?page|pythonioencoding|"
    r"pm2 restart|systemctl|restart (?:the )?(?:server|service|daemon|app|dev server)|"
    r"not live until|takes? effect only after|only after (?:a |the )?restart|"
    r"docker exec|(?:in|inside) (?:the |a )?(?:docker |ubuntu [\d.]+ )?container|"
    r"network (?:access )?(?:is )?(?:blocked|restricted)|no (?:network|internet)|"
    r"cannot be resolved|could not resolve|"
    r"keeps its working directory between calls)",
    re.IGNORECASE,
)
_LAYOUT = re.compile(
    r"(?:^|\s)~/[\w.-]|"  # a path in the user's home: where this machine keeps something
    r"\b(?:lives? in|belongs? in|does not exist in this (?:project|repo|repository|checkout)|is located (?:in|at)|(?:is )?installed (?:in|at|into)|"
    r"(?:is|are) kept in|is built at|the (?:\w+ )?(?:directory|folder|repo|repository) (?:is|for))\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\b(?:the user (?:does not|doesn'?t|wants|prefers|asked|likes|insists)|"
    r"(?:user'?s? )?standing (?:rule|preference)|do not commit|don'?t commit|"
    r"no automatic commits|always (?:ask|use|run|write|answer|reply)|"
    r"never (?:commit|push|use|run|edit))\b",
    re.IGNORECASE,
)


def fact_kind(lesson: str) -> FactKind | None:
    """What kind of project fact ``lesson`` states, or ``None`` when it is an ordinary lesson."""
    signature = failure_signature(lesson)
    if signature is not None and _ENV_SIGNATURES.search(signature):
        return FactKind.ENVIRONMENT
    if _PREFERENCE.search(lesson):
        return FactKind.PREFERENCE
    if _ENVIRONMENT.search(lesson):
        return FactKind.ENVIRONMENT
    if _LAYOUT.search(lesson):
        return FactKind.LAYOUT
    return None
