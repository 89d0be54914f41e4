"""Where generated skills live in a project, and the slug and path rules that keep them there.

opencode-swarm's layout::

    .swarm/skills/proposals/<slug>.md           drafts (curator + skill_improver)
    .swarm/skills/evals/<slug>/*.json           optional validation fixtures
    .swarm/skills/rejected-edits.jsonl          FIFO buffer of rejected candidates
    .opencode/skills/generated/<slug>/SKILL.md  active generated skills

A slug is kebab-case ``^[a-z0-9][a-z0-9-]{0,63}$``; every path is resolved (symlinks included)
and must stay inside its directory, so no slug, link or reply can make a write land elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from swarmq.storage.paths import UnsafePathError, resolve_inside

SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
GENERATED_PREFIX = ".opencode/skills/generated/"
PROPOSALS_PREFIX = ".swarm/skills/proposals/"
SKILL_FILE = "SKILL.md"
RETIRED_MARKER = "retired.marker"


class UnsafeSkillPath(UnsafePathError):
    """A slug or path that is not allowed, or would escape the generated-skills directory."""


def slugify(text: str) -> str:
    """Lower-case, runs of anything but ``[a-z0-9-]`` → one ``-``, trimmed, at most 64 chars."""
    mapped = re.sub(r"[^a-z0-9-]+", "-", text.lower().strip())
    return re.sub(r"-+", "-", mapped).strip("-")[:64].strip("-")


def check_slug(slug: object) -> str:
    if not isinstance(slug, str) or SLUG_PATTERN.match(slug) is None:
        shown = repr(slug)[:80]
        raise UnsafeSkillPath(
            f"skill slug {shown} is not allowed: use kebab-case, 1-64 chars of a-z, 0-9 and '-', "
            "starting with a letter or digit (no '/', '..' or spaces)"
        )
    return slug


@dataclass(frozen=True, slots=True)
class SkillLayout:
    """The skill directories of one project (``workspace`` holds ``.swarm`` and ``.opencode``)."""

    workspace: Path

    @property
    def skills_dir(self) -> Path:
        return self.workspace / ".swarm" / "skills"

    @property
    def proposals_dir(self) -> Path:
        return self.skills_dir / "proposals"

    @property
    def evals_dir(self) -> Path:
        return self.skills_dir / "evals"

    @property
    def rejected_edits(self) -> Path:
        return self.skills_dir / "rejected-edits.jsonl"

    @property
    def generated_dir(self) -> Path:
        return self.workspace / ".opencode" / "skills" / "generated"

    @property
    def improver_proposals_dir(self) -> Path:
        return self.workspace / ".swarm" / "skill-improver" / "proposals"

    def proposal_path(self, slug: str) -> Path:
        return self._inside(self.proposals_dir, f"{check_slug(slug)}.md")

    def active_path(self, slug: str) -> Path:
        return self._inside(self.generated_dir, check_slug(slug), SKILL_FILE)

    def evals_path(self, slug: str) -> Path:
        return self._inside(self.evals_dir, check_slug(slug))

    def _inside(self, root: Path, *parts: str) -> Path:
        root.mkdir(parents=True, exist_ok=True)
        try:
            return resolve_inside(root, *parts)
        except UnsafePathError as exc:
            raise UnsafeSkillPath(f"{exc} (skills may only be written under {root})") from exc

    def active_relative(self, slug: str) -> str:
        """The repo-relative path entries record in ``generated_skill_path``."""
        return f"{GENERATED_PREFIX}{check_slug(slug)}/{SKILL_FILE}"

    def proposal_relative(self, slug: str) -> str:
        return f"{PROPOSALS_PREFIX}{check_slug(slug)}.md"

    def generated_target(self, relative: str) -> Path:
        """Resolve a repo-relative ``.opencode/skills/generated/<slug>/SKILL.md`` path (as found in
        a reply or an entry) or refuse it: anything else, ``..``, absolute paths and symlinks
        leading out are :class:`UnsafeSkillPath`."""
        text = relative.replace("\\", "/")
        if not text.startswith(GENERATED_PREFIX) or "\x00" in text:
            raise UnsafeSkillPath(f"skill path {relative!r} is not under {GENERATED_PREFIX}")
        parts = text[len(GENERATED_PREFIX) :].split("/")
        if len(parts) != 2 or parts[1] != SKILL_FILE:
            raise UnsafeSkillPath(
                f"skill path {relative!r} must be {GENERATED_PREFIX}<slug>/{SKILL_FILE}"
            )
        return self.active_path(parts[0])
