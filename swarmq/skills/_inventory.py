"""What the skill improver looks at: knowledge, skills, repeatedly ignored or violated
directives, stale skills, and mature knowledge not yet compiled."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swarmq.knowledge.model import Entry
from swarmq.skills.compiler import SkillCompiler

REPEAT_THRESHOLD = 2
"""An active directive ignored or violated at least this often is reported."""
MAX_ROWS = 25


@dataclass
class Inventory:
    knowledge_total: int = 0
    knowledge_active: int = 0
    archived: int = 0
    directives: int = 0
    drafts: int = 0
    active_skills: int = 0
    stale_skills: list[tuple[str, list[str]]] = field(default_factory=list)
    mature_uncompiled: list[Entry] = field(default_factory=list)
    ignored_or_violated: list[tuple[Entry, int, int]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "knowledge": {
                "total": self.knowledge_total,
                "active": self.knowledge_active,
                "archived": self.archived,
                "directives": self.directives,
            },
            "skills": {
                "drafts": self.drafts,
                "active": self.active_skills,
                "stale": len(self.stale_skills),
            },
            "mature_uncompiled": [e.id for e in self.mature_uncompiled],
            "ignored_or_violated": [
                {"id": e.id, "ignored": i, "violated": v} for e, i, v in self.ignored_or_violated
            ],
            "stale_skills": [{"slug": s, "reasons": r} for s, r in self.stale_skills],
        }


def gather_inventory(compiler: SkillCompiler) -> Inventory:
    entries = compiler.entries()
    listing = compiler.listing()
    inventory = Inventory(
        knowledge_total=len(entries),
        knowledge_active=sum(1 for e in entries if e.is_active),
        archived=sum(1 for e in entries if e.status == "archived"),
        directives=sum(
            1 for e in entries if e.strings("required_actions") or e.strings("forbidden_actions")
        ),
        drafts=len(listing["drafts"]),
        active_skills=len(listing["active"]),
        stale_skills=[(s["slug"], s["stale"]) for s in listing["active"] if s["stale"]],
        mature_uncompiled=compiler.candidates()[:MAX_ROWS],
    )
    repeated = []
    for entry in entries:
        if not entry.is_active:
            continue
        ignored, violated = entry.counter("ignored_count"), entry.counter("violated_count")
        if ignored + violated >= REPEAT_THRESHOLD:
            repeated.append((entry, ignored, violated))
    repeated.sort(key=lambda row: (-(row[1] + row[2]), row[0].id))
    inventory.ignored_or_violated = repeated[:MAX_ROWS]
    return inventory


def inventory_text(inv: Inventory) -> str:
    """The inventory as the plain text block the model reads (lessons clipped to 140 chars)."""

    def clip(text: str) -> str:
        return " ".join(text.split())[:140]

    mature = (
        "\n".join(
            f'- {e.id} | conf={e.confidence:.2f} | {e.category} | "{clip(e.lesson)}"'
            for e in inv.mature_uncompiled
        )
        or "(none)"
    )
    repeated = (
        "\n".join(
            f'- {e.id} | ignored={i} violated={v} | "{clip(e.lesson)}"'
            for e, i, v in inv.ignored_or_violated
        )
        or "(none)"
    )
    stale = (
        "\n".join(f"- {slug} | {', '.join(reasons)}" for slug, reasons in inv.stale_skills[:10])
        or "(none)"
    )
    return (
        f"INVENTORY\nknowledge_entries: {inv.knowledge_total}\nactive_entries: {inv.knowledge_active}\n"
        f"archived: {inv.archived}\nactionable_directives: {inv.directives}\ndraft_skills: {inv.drafts}\n"
        f"active_skills: {inv.active_skills}\nstale_active_skills: {len(inv.stale_skills)}\n"
        f"mature_uncompiled_entries: {len(inv.mature_uncompiled)}\n\n"
        f"REPEATEDLY IGNORED OR VIOLATED DIRECTIVES:\n{repeated}\n\n"
        f"TOP MATURE CANDIDATES (first {MAX_ROWS}):\n{mature}\n\nSTALE ACTIVE SKILLS (first 10):\n{stale}\n"
    )
