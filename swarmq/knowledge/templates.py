"""Machine-generated lessons, recognised by their template and compared by their fields.

opencode-swarm writes some lessons from a template (its co-change analyser: "Files A and B
co-change with NPMI=… but have no import relationship …"). Two such notes share almost every
word whatever files they name, so word similarity would merge notes about different file pairs.
Here a templated lesson is identified by its kind and fields (the unordered file pair): notes
with the same fields are duplicates, every other pair involving a templated note is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    kind: str
    pattern: re.Pattern[str]
    unordered: bool
    """Whether the fields' order is irrelevant (a file pair is the same pair either way)."""


TEMPLATES: tuple[Template, ...] = (
    Template(
        "co-change",
        re.compile(
            r"^Files (\S+) and (\S+) co-change with NPMI=[0-9.]+ but have no import relationship\."
        ),
        True,
    ),
    Template(
        "hive-promotion-summary",
        re.compile(
            r"^Hive promotion: (\d+) new, (\d+) encounters, (\d+) advancements, (\d+) total entries$"
        ),
        False,
    ),
)


def template_key(lesson: str) -> str | None:
    """``kind:field|field`` for a templated lesson, ``None`` for a hand-written one."""
    for template in TEMPLATES:
        match = template.pattern.match(lesson)
        if match:
            fields = sorted(match.groups()) if template.unordered else list(match.groups())
            return f"{template.kind}:" + "|".join(fields)
    return None
