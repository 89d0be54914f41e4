"""Publishing active skills where each agent reads them.

opencode-swarm's ``.opencode/skills/generated/<slug>/SKILL.md`` is the canonical copy; Claude
Code reads ``.claude/skills/<name>/SKILL.md`` and Codex ``.agents/skills/<name>/SKILL.md``
(both: a directory per skill, YAML front matter with ``name`` (lower-case letters, digits and
hyphens, at most 64, equal to the directory's name) and ``description`` (at most 1024
characters, what the skill does and when to use it), extra data under ``metadata``, a string
map, as the open Agent Skills format has it). The published copy carries exactly those keys:
swarmq's own (``status``, ``version``, sources, ...) go under ``metadata``, so no agent refuses
or misreads it. It keeps the generated marker: a published file without it (someone's own skill
of the same name) is never overwritten or removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from swarmq.skills._render import has_marker, parse_skill
from swarmq.skills.layout import SKILL_FILE, SkillLayout, UnsafeSkillPath, check_slug
from swarmq.storage.atomic import write_atomic
from swarmq.storage.locking import StoreLocks, file_resource
from swarmq.storage.paths import UnsafePathError, resolve_inside

DESCRIPTION_LIMIT = 1024


@dataclass
class Published:
    """Where one skill was published for one agent, or why not."""

    agent: str
    path: str
    written: bool
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": self.path,
            "written": self.written,
            "reason": self.reason,
        }


def agent_front_matter(text: str, slug: str) -> str:
    """The SKILL.md an agent reads: ``name``, ``description`` and a ``metadata`` string map
    carrying every other front-matter key; the body is kept as it is."""
    doc = parse_skill(text)
    if doc is None:
        raise ValueError("the canonical SKILL.md has no readable front matter")
    data = dict(doc.frontmatter)
    description = str(data.pop("description", "") or f"Generated swarm skill {slug}.")
    data.pop("name", None)
    metadata: dict[str, str] = {"generator": "swarmq"}
    for key, value in data.items():
        if isinstance(value, list):
            metadata[key] = ", ".join(str(v) for v in value)
        elif value is not None:
            metadata[key] = str(value)
    head = yaml.safe_dump(
        {
            "name": slug,
            "description": " ".join(description.split())[:DESCRIPTION_LIMIT],
            "metadata": metadata,
        },
        sort_keys=False,
        allow_unicode=True,
        width=1_000_000,
    )
    return f"---\n{head}---\n{doc.body}"


class SkillPublisher:
    """Writes (or links) active skills into each agent's skills directory."""

    def __init__(
        self, layout: SkillLayout, agent_dirs: Mapping[str, Path], *, link: bool = False
    ) -> None:
        self.layout = layout
        self.link = link
        self.dirs = {agent: self._root(path) for agent, path in agent_dirs.items()}

    def _root(self, path: Path) -> Path:
        expanded = Path(os.path.expanduser(str(path)))
        return expanded if expanded.is_absolute() else self.layout.workspace / expanded

    def _target(self, root: Path, slug: str) -> Path:
        root.mkdir(parents=True, exist_ok=True)
        try:
            return resolve_inside(root, check_slug(slug))
        except UnsafePathError as exc:
            raise UnsafeSkillPath(f"{exc} (skills may only be published under {root})") from exc

    def publish(self, slug: str, locks: StoreLocks) -> list[Published]:
        """Publish the active skill ``slug`` to every agent directory."""
        source = self.layout.active_path(slug)
        text = source.read_text(encoding="utf-8")
        return [
            self._publish_one(agent, root, slug, source, text, locks)
            for agent, root in self.dirs.items()
        ]

    def _publish_one(
        self, agent: str, root: Path, slug: str, source: Path, text: str, locks: StoreLocks
    ) -> Published:
        directory = root / slug
        if directory.is_symlink():
            if directory.resolve() == source.parent.resolve():
                if self.link:
                    return Published(agent, str(directory), True, "linked")
                directory.unlink()  # our own link, replaced by a copy
            else:
                return Published(
                    agent, str(directory), False, f"{directory} links elsewhere; left as it is"
                )
        target = self._target(root, slug)
        skill = target / SKILL_FILE
        if skill.exists() and not has_marker(skill.read_text(encoding="utf-8", errors="replace")):
            return Published(
                agent,
                str(skill),
                False,
                f"{skill} exists without the generated marker; not overwritten",
            )
        if self.link:
            if target.exists():
                shutil.rmtree(target)
            relative = os.path.relpath(source.parent, target.parent)
            target.symlink_to(relative, target_is_directory=True)
            return Published(agent, str(target), True, "linked")
        with locks.hold(file_resource(skill)) as lease:
            write_atomic(skill, agent_front_matter(text, slug), lease=lease)
        return Published(agent, str(skill), True)

    def withdraw(self, slug: str, locks: StoreLocks) -> list[Published]:
        """Remove the published copies (and links) of a retired skill; a file without the
        marker is someone's own and stays."""
        out = []
        for agent, root in self.dirs.items():
            directory = root / check_slug(slug)
            if directory.is_symlink():
                if directory.resolve() == self.layout.active_path(slug).parent.resolve():
                    directory.unlink()
                    out.append(Published(agent, str(directory), True, "unlinked"))
                continue
            skill = directory / SKILL_FILE
            if not skill.is_file():
                continue
            if not has_marker(skill.read_text(encoding="utf-8", errors="replace")):
                out.append(Published(agent, str(skill), False, "no generated marker; kept"))
                continue
            with locks.hold(file_resource(skill)):
                skill.unlink()
                with contextlib.suppress(OSError):
                    directory.rmdir()
            out.append(Published(agent, str(skill), True, "removed"))
        return out
