"""Editing ``## `` sections of a Markdown file in place, so human text around them survives."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HEADING = re.compile(r"^## +(.+?)\s*$")
PLACEHOLDER_BULLET = "- ..."


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Document:
    """A Markdown file as its preamble plus ``## `` sections in order."""

    preamble: list[str]
    sections: list[Section]

    @classmethod
    def parse(cls, text: str) -> Document:
        preamble: list[str] = []
        sections: list[Section] = []
        fence = False
        for line in text.splitlines():
            if line.lstrip().startswith("```"):
                fence = not fence
            match = None if fence else _HEADING.match(line)
            if match:
                sections.append(Section(match.group(1)))
            elif sections:
                sections[-1].lines.append(line)
            else:
                preamble.append(line)
        return cls(preamble, sections)

    def render(self) -> str:
        out = list(self.preamble)
        for section in self.sections:
            out.append(f"## {section.title}")
            out.extend(section.lines)
        return "\n".join(out).rstrip("\n") + "\n"

    def find(self, title: str) -> Section | None:
        wanted = title.casefold()
        return next((s for s in self.sections if s.title.casefold() == wanted), None)

    def section(self, title: str) -> Section:
        found = self.find(title)
        if found is None:
            found = Section(title, [""])
            if self.sections and self.sections[-1].lines and self.sections[-1].lines[-1].strip():
                self.sections[-1].lines.append("")
            self.sections.append(found)
        return found

    def body(self, title: str) -> str:
        found = self.find(title)
        return "" if found is None else "\n".join(found.lines).strip()

    def set_body(self, title: str, body: str) -> None:
        self.section(title).lines = ["", *body.strip("\n").splitlines(), ""]

    def add_bullets(self, title: str, items: list[str]) -> int:
        """Append ``- item`` lines not already present; drops the template's ``- ...``."""
        section = self.section(title)
        content = [
            line for line in section.lines if line.strip() and line.strip() != PLACEHOLDER_BULLET
        ]
        existing = {line.strip() for line in content}
        added = 0
        for item in items:
            bullet = f"- {' '.join(item.split())}"
            if bullet not in existing and item.strip():
                content.append(bullet)
                existing.add(bullet)
                added += 1
        if added or len(content) != len([x for x in section.lines if x.strip()]):
            section.lines = ["", *content, ""] if content else ["", PLACEHOLDER_BULLET, ""]
        return added
