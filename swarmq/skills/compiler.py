"""The knowledge-to-skill compiler: generate drafts or active skills, apply, regenerate.

Every SKILL.md write holds the lock of that file (``file_resource(path)``), and follows the same
rules: the target must lie under its directory; an active file without the generated marker
(a human wrote or edited it) is never overwritten unless ``force``; content equal to a rejected
edit is skipped; with fixtures, the candidate must pass them and strictly improve on the
incumbent, otherwise it goes to the rejected-edits buffer and nothing is written. The
rejected-edits buffer belongs to the evaluation: without evaluation (``evaluate_it=False``) it
is neither read nor written. ``force`` is the user overriding the gates: it writes a candidate
the evaluation refused or the buffer lists (the evaluation is still run and reported, and
nothing is recorded as rejected), so a stale skill can always be refreshed. Activation
stamps the source entries with ``generated_skill_slug``/``generated_skill_path`` through the
knowledge store's own update (under the store lock). Nothing is ever activated automatically:
only :meth:`SkillCompiler.apply`, ``generate(mode="active")`` and ``regenerate`` write there.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from swarmq.knowledge.errors import EntryNotFound
from swarmq.knowledge.model import Entry
from swarmq.knowledge.store import TierStore
from swarmq.skills._evals import Evaluation, evaluate, load_eval_set
from swarmq.skills._grouping import (
    DEFAULT_SIMILARITY,
    SkillCluster,
    cluster_by_ids,
    discover_clusters,
)
from swarmq.skills._readiness import readiness_gate
from swarmq.skills._rejected import RejectedEdits
from swarmq.skills._render import has_marker, parse_skill, render_skill, with_status
from swarmq.skills.config import (
    DEFAULT_AGENT_DIRS,
    DEFAULT_MIN_SKILL_CONFIDENCE,
    DEFAULT_MIN_SKILL_CONFIRMATIONS,
)
from swarmq.skills.layout import RETIRED_MARKER, SkillLayout, UnsafeSkillPath, check_slug, slugify
from swarmq.skills.publish import Published, SkillPublisher
from swarmq.storage.atomic import write_atomic
from swarmq.storage.clock import iso
from swarmq.storage.locking import StoreLocks, file_resource

Mode = Literal["draft", "active"]


@dataclass(frozen=True, slots=True)
class CompilerSettings:
    min_confidence: float = DEFAULT_MIN_SKILL_CONFIDENCE
    min_confirmations: int = DEFAULT_MIN_SKILL_CONFIRMATIONS
    similarity: float = DEFAULT_SIMILARITY


@dataclass
class SkillWrite:
    """What one compile step did for one slug."""

    slug: str
    written: bool
    path: str | None = None
    mode: str | None = None
    reason: str | None = None
    source_ids: list[str] = field(default_factory=list)
    missing_ids: list[str] = field(default_factory=list)
    evaluation: Evaluation | None = None
    published: list[Published] = field(default_factory=list)
    """The copies (or links) in each agent's skills directory (``skills.agent_dirs``)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "published": [p.as_dict() for p in self.published],
            "slug": self.slug,
            "written": self.written,
            "path": self.path,
            "mode": self.mode,
            "reason": self.reason,
            "source_ids": self.source_ids,
            "missing_ids": self.missing_ids,
            "evaluation": self.evaluation.as_dict() if self.evaluation else None,
        }


def stale_reasons(text: str, by_id: dict[str, Entry]) -> list[str]:
    """Why an active generated skill no longer reflects its knowledge (empty: up to date)."""
    doc = parse_skill(text)
    if doc is None:
        return ["unreadable_frontmatter"]
    reasons: list[str] = []
    if not doc.source_ids:
        reasons.append("missing_source_knowledge_ids")
    generated = doc.generated_at
    if not generated:
        reasons.append("missing_generated_at")
    for entry_id in doc.source_ids:
        source = by_id.get(entry_id)
        if source is None:
            reasons.append(f"missing_source:{entry_id}")
        elif source.status == "archived":
            reasons.append(f"archived_source:{entry_id}")
        elif generated and source.updated_at and source.updated_at > generated:
            reasons.append(f"updated_after_generation:{entry_id}")
    return reasons[:6]


class SkillCompiler:
    def __init__(
        self,
        layout: SkillLayout,
        locks: StoreLocks,
        stores: Sequence[TierStore],
        settings: CompilerSettings | None = None,
        *,
        clock: Callable[[], str] = iso,
        publisher: SkillPublisher | None = None,
    ) -> None:
        self.layout = layout
        self.publisher = publisher or SkillPublisher(layout, DEFAULT_AGENT_DIRS)
        """Publishes every activated skill where the agents read skills (see :mod:`.publish`)."""
        self.locks = locks
        self.stores = list(stores)
        """Swarm tier first; hive (and link) tiers after, read for sources and stamped too."""
        self.settings = settings or CompilerSettings()
        self.clock = clock
        self.rejected = RejectedEdits(layout.rejected_edits)

    # -- knowledge ------------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        return [e for store in self.stores for e in store.read().entries]

    def candidates(self) -> list[Entry]:
        """Active, not yet compiled entries that pass the readiness gate."""
        return [
            e
            for e in self.entries()
            if e.is_active
            and not e.get("generated_skill_slug")
            and readiness_gate(
                e,
                min_confidence=self.settings.min_confidence,
                min_confirmations=self.settings.min_confirmations,
            ).passed
        ]

    def clusters(
        self, source_ids: Sequence[str] | None = None, slug: str | None = None
    ) -> tuple[list[SkillCluster], list[str]]:
        if source_ids:
            cluster, missing = cluster_by_ids(self.entries(), source_ids, slug and check_slug(slug))
            return ([cluster] if cluster else []), missing
        found = discover_clusters(self.candidates(), self.settings.similarity)
        if slug and found:
            found[0].slug = check_slug(slug)
        return found, []

    def stamp(self, slug: str, ids: Sequence[str]) -> list[str]:
        """Record the compiled skill on its source entries; returns the ids found nowhere."""
        updates = {
            "generated_skill_slug": slug,
            "generated_skill_path": self.layout.active_relative(slug),
        }
        missing = []
        for entry_id in ids:
            for store in self.stores:
                with contextlib.suppress(EntryNotFound):
                    current = store.get(entry_id)
                    if current is None:
                        continue
                    if any(current.get(k) != v for k, v in updates.items()):
                        store.update(entry_id, updates)  # metadata: updated_at is for content
                    break
            else:
                missing.append(entry_id)
        return missing

    # -- writing one file -----------------------------------------------------------------------------

    def _write(
        self,
        path: Path,
        slug: str,
        content: str,
        *,
        force: bool,
        evaluate_it: bool,
        operation: str,
        incumbent_path: Path | None = None,
    ) -> SkillWrite:
        """Write ``content`` to ``path`` if every rule allows (see the module docstring)."""
        with self.locks.hold(file_resource(path)) as lease:
            existing = path.read_text(encoding="utf-8") if path.exists() else None
            if existing is not None and not has_marker(existing) and not force:
                return SkillWrite(
                    slug,
                    False,
                    str(path),
                    reason=(
                        f"{path} exists without the generated marker (written or edited by hand); "
                        "not overwritten (use force to overwrite)"
                    ),
                )
            evaluation = None
            reason = None
            if evaluate_it:
                eval_set = load_eval_set(self.layout, slug)
                if not force and self.rejected.is_rejected(slug, content, eval_set.fingerprint):
                    return SkillWrite(
                        slug,
                        False,
                        str(path),
                        reason="equivalent content was rejected before by the same eval fixtures",
                    )
                source = incumbent_path or path
                incumbent = source.read_text(encoding="utf-8") if source.exists() else None
                evaluation = evaluate(eval_set, content, incumbent)
                if not evaluation.passed and force:
                    reason = f"forced past the eval gate: {evaluation.reason}"
                elif not evaluation.passed:
                    self.rejected.record(
                        self.locks,
                        slug=slug,
                        operation=operation,
                        candidate=content,
                        evaluation=evaluation,
                        incumbent=incumbent,
                    )
                    return SkillWrite(
                        slug,
                        False,
                        str(path),
                        reason=f"validation_failed: {evaluation.reason}",
                        evaluation=evaluation,
                    )
            write_atomic(path, content, lease=lease)
            return SkillWrite(slug, True, str(path), reason=reason, evaluation=evaluation)

    # -- the verbs --------------------------------------------------------------------------------------

    def generate(
        self,
        *,
        mode: Mode = "draft",
        source_ids: Sequence[str] | None = None,
        slug: str | None = None,
        force: bool = False,
        evaluate_it: bool = True,
    ) -> list[SkillWrite]:
        """Compile clusters (the named entries, or discovered mature ones) into skills."""
        clusters, missing = self.clusters(source_ids, slug)
        if not clusters:
            reason = (
                "no named source entry exists" if source_ids else "no mature knowledge to compile"
            )
            return [SkillWrite(slug or "-", False, reason=reason, missing_ids=missing)]
        results = []
        for cluster in clusters:
            status = "active" if mode == "active" else "draft"
            content = render_skill(cluster, status=status, generated_at=self.clock())
            if mode == "active":
                path, operation = self.layout.active_path(cluster.slug), "skill_generate:active"
            else:
                path, operation = self.layout.proposal_path(cluster.slug), "skill_generate:draft"
            result = self._write(
                path,
                cluster.slug,
                content,
                force=force,
                evaluate_it=evaluate_it,
                operation=operation,
                incumbent_path=self.layout.active_path(cluster.slug),
            )
            result.mode, result.source_ids, result.missing_ids = status, cluster.source_ids, missing
            if result.written and mode == "active":
                result.missing_ids = sorted(
                    set(missing) | set(self.stamp(cluster.slug, cluster.source_ids))
                )
                result.published = self._publish(cluster.slug)
            results.append(result)
        return results

    def apply(self, slug: str, *, force: bool = False, evaluate_it: bool = True) -> SkillWrite:
        """Activate the draft ``.swarm/skills/proposals/<slug>.md``."""
        slug = check_slug(slug)
        draft_path = self.layout.proposal_path(slug)
        with self.locks.hold(file_resource(draft_path)):
            if not draft_path.exists():
                return SkillWrite(slug, False, reason=f"no draft at {draft_path}")
            draft = draft_path.read_text(encoding="utf-8")
            doc = parse_skill(draft)
            if doc is None:
                return SkillWrite(slug, False, reason=f"{draft_path} has no readable frontmatter")
            if doc.name is not None and doc.name != slug:
                return SkillWrite(
                    slug, False, reason=f"draft names itself {doc.name!r}, not {slug!r}"
                )
            result = self._write(
                self.layout.active_path(slug),
                slug,
                with_status(draft, "active"),
                force=force,
                evaluate_it=evaluate_it,
                operation="skill_apply",
            )
            result.mode, result.source_ids = "active", doc.source_ids
            if result.written:
                result.missing_ids = self.stamp(slug, doc.source_ids)
                draft_path.unlink()
                result.published = self._publish(slug)
        return result

    def regenerate(self, slug: str, *, force: bool = False, evaluate_it: bool = True) -> SkillWrite:
        """Rebuild an active skill from the current state of its source knowledge."""
        slug = check_slug(slug)
        path = self.layout.active_path(slug)
        if not path.exists():
            return SkillWrite(slug, False, reason=f"no active skill at {path}")
        doc = parse_skill(path.read_text(encoding="utf-8"))
        if doc is None or not doc.source_ids:
            return SkillWrite(
                slug, False, str(path), reason="active skill names no source knowledge ids"
            )
        by_id = {e.id: e for e in self.entries()}
        found = [by_id[i] for i in doc.source_ids if i in by_id]
        live = [e for e in found if e.status != "archived"]
        if found and not live:
            self.retire(slug, "all source knowledge entries archived")
            return SkillWrite(
                slug, False, str(path), reason="all source knowledge archived: skill retired"
            )
        if not live:
            return SkillWrite(
                slug, False, str(path), reason="none of the source knowledge ids exists any more"
            )
        cluster = SkillCluster.of(live, slug=slug, title=None)
        content = render_skill(
            cluster, status="active", generated_at=self.clock(), version=doc.version + 1
        )
        result = self._write(
            path, slug, content, force=force, evaluate_it=evaluate_it, operation="skill_regenerate"
        )
        result.mode, result.source_ids = "active", cluster.source_ids
        result.missing_ids = [i for i in doc.source_ids if i not in by_id]
        if result.written:
            self.stamp(slug, cluster.source_ids)
            result.published = self._publish(slug)
        return result

    def _publish(self, slug: str) -> list[Published]:
        """Publish an activated skill for the agents; the canonical copy is written already, so
        a failure here is reported with the result, never a lost activation."""
        try:
            return self.publisher.publish(slug, self.locks)
        except (OSError, UnsafeSkillPath, ValueError) as exc:
            return [
                Published("*", str(self.layout.active_path(slug)), False, f"not published: {exc}")
            ]

    def retire(self, slug: str, reason: str) -> Path:
        marker = self.layout.active_path(slug).with_name(RETIRED_MARKER)
        with self.locks.hold(file_resource(marker)) as lease:
            write_atomic(
                marker, json.dumps({"retiredAt": self.clock(), "reason": reason}), lease=lease
            )
        self.publisher.withdraw(slug, self.locks)  # agents stop seeing a retired skill
        return marker

    # -- reading -------------------------------------------------------------------------------------------

    def listing(self) -> dict[str, list[dict[str, Any]]]:
        by_id = {e.id: e for e in self.entries()}
        drafts, active = [], []
        if self.layout.proposals_dir.is_dir():
            for path in sorted(self.layout.proposals_dir.glob("*.md")):
                doc = parse_skill(path.read_text(encoding="utf-8"))
                drafts.append(
                    {
                        "slug": path.stem,
                        "path": str(path),
                        "status": doc.status if doc else None,
                        "source_ids": doc.source_ids if doc else [],
                    }
                )
        if self.layout.generated_dir.is_dir():
            for directory in sorted(p for p in self.layout.generated_dir.iterdir() if p.is_dir()):
                skill = directory / "SKILL.md"
                if not skill.is_file() or (directory / RETIRED_MARKER).exists():
                    continue
                text = skill.read_text(encoding="utf-8")
                doc = parse_skill(text)
                active.append(
                    {
                        "slug": directory.name,
                        "path": str(skill),
                        "generated": has_marker(text),
                        "version": doc.version if doc else None,
                        "source_ids": doc.source_ids if doc else [],
                        "stale": stale_reasons(text, by_id) if has_marker(text) else [],
                    }
                )
        return {"drafts": drafts, "active": active}

    def inspect(
        self, slug: str, prefer: Literal["auto", "draft", "active"] = "auto"
    ) -> dict[str, Any] | None:
        slug = check_slug(slugify(slug) or slug)
        order: list[tuple[str, Path]] = []
        if prefer in ("auto", "active"):
            order.append(("active", self.layout.active_path(slug)))
        if prefer in ("auto", "draft"):
            order.append(("draft", self.layout.proposal_path(slug)))
        by_id = {e.id: e for e in self.entries()}
        for kind, path in order:
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                doc = parse_skill(text)
                ids = doc.source_ids if doc else []
                return {
                    "slug": slug,
                    "kind": kind,
                    "path": str(path),
                    "content": text,
                    "generated": has_marker(text),
                    "source_ids": ids,
                    "sources": [
                        {
                            "id": i,
                            "lesson": by_id[i].lesson if i in by_id else None,
                            "status": by_id[i].status if i in by_id else "missing",
                        }
                        for i in ids
                    ],
                }
        return None
