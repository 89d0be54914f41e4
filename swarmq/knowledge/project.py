"""``KnowledgeStore``: one project's knowledge — its swarm tier (or the link store it is linked
to), the hive tier in the platform data dir, and the project-local receipt journal."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmq.knowledge.config import KnowledgeConfig, Retrieval, ValidationMode
from swarmq.knowledge.files import LINK_FILE, RECEIPTS_FILE, TierFiles, platform_data_dir
from swarmq.knowledge.store import TierStore
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.locking import StoreLocks
from swarmq.storage.paths import UnsafePathError, check_id

if TYPE_CHECKING:  # numpy and the model load only when a query ranks by meaning
    from swarmq.knowledge.batch import AddResult
    from swarmq.similarity.embedding import Embedder


def read_link(swarm_dir: Path) -> dict[str, Any] | None:
    """``.swarm/link.json`` when this worktree is linked, else ``None``."""
    try:
        data = loads_bounded((swarm_dir / LINK_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UnsafePathError(f"{swarm_dir / LINK_FILE}: not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise UnsafePathError(f"{swarm_dir / LINK_FILE}: expected a JSON object")
    check_id(data.get("linkId"), f"linkId in {swarm_dir / LINK_FILE}")
    return data


class KnowledgeStore:
    """The knowledge of one project: ``swarm`` and ``hive`` :class:`TierStore` objects."""

    def __init__(
        self,
        swarm_dir: Path | str,
        *,
        locks: StoreLocks,
        config: KnowledgeConfig | None = None,
        data_dir: Path | str | None = None,
        project_name: str | None = None,
        clock: Callable[[], datetime] | None = None,
        embedder: Embedder | None = None,
        recall_dir: Path | None = None,
    ) -> None:
        self.swarm_dir = Path(swarm_dir)
        self.recall_dir = recall_dir
        """Where recall keeps the stores' persisted signature indexes (``<runtime>/recall``),
        so a process that has not loaded a store recalls from it without loading the store;
        ``None``: recall reads the mirror unless told a directory."""
        self._embedder = embedder
        self.config = config or KnowledgeConfig()
        self.locks = locks
        self.data_dir = Path(data_dir) if data_dir is not None else platform_data_dir()
        self.project_name = (
            project_name or self.config.project_name or self.swarm_dir.resolve().parent.name
        )
        self.clock = clock
        self.link = read_link(self.swarm_dir)
        files = (
            TierFiles.link(self.data_dir, self.link["linkId"])
            if self.link
            else TierFiles.swarm(self.swarm_dir)
        )
        self.swarm = TierStore(
            files, locks=locks, config=self.config, project_name=self.project_name, clock=clock
        )
        self.hive = TierStore(
            TierFiles.hive(self.data_dir),
            locks=locks,
            config=self.config,
            project_name=self.project_name,
            clock=clock,
        )
        self.receipts_path = self.swarm_dir / RECEIPTS_FILE
        """Always project-local: a link never redirects receipt authority."""

    def with_config(self, config: KnowledgeConfig) -> KnowledgeStore:
        """The same project's knowledge read and written under other settings (a prompt
        builder's own ``inject_char_budget``, say)."""
        return KnowledgeStore(
            self.swarm_dir,
            locks=self.locks,
            config=config,
            data_dir=self.data_dir,
            project_name=self.project_name,
            clock=self.clock,
            embedder=self._embedder,
            recall_dir=self.recall_dir,
        )

    @property
    def embedder(self) -> Embedder | None:
        """The model hybrid retrieval embeds with (the packaged one unless another was
        given); ``None`` under ``retrieval: lexical``, so nothing is loaded."""
        if self.config.retrieval != Retrieval.HYBRID:
            return None
        if self._embedder is None:
            from swarmq.similarity.packaged import packaged_embedder

            return packaged_embedder(self.config.model.value)
        return self._embedder

    @property
    def tiers(self) -> list[TierStore]:
        return [self.swarm, self.hive] if self.config.hive_enabled else [self.swarm]

    def tier(self, name: str) -> TierStore:
        if name == "swarm":
            return self.swarm
        if name == "hive":
            return self.hive
        raise ValueError(f"unknown tier {name!r}: use 'swarm' or 'hive'")

    def current_phase(self) -> int | None:
        """``current_phase`` of ``.swarm/plan.json`` when a plan tracks phases."""
        try:
            plan = loads_bounded((self.swarm_dir / "plan.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        phase = plan.get("current_phase") if isinstance(plan, dict) else None
        return phase if isinstance(phase, int) and not isinstance(phase, bool) else None

    # -- the calls other jobs make ---------------------------------------------------------------

    def add_lesson(
        self,
        lesson: str,
        *,
        category: str | None = None,
        tags: Sequence[str] | None = None,
        phase: int | None = None,
        confidence: float | None = None,
        auto_generated: bool = True,
        directives: Mapping[str, Any] | None = None,
        source_refs: Iterable[str] = (),
        source_knowledge_ids: Iterable[str] = (),
        extra: Mapping[str, Any] | None = None,
        validation_mode: ValidationMode | str | None = None,
    ) -> AddResult:
        """Add a lesson to the swarm tier with the curator's rules: validate, reinforce an
        active near-duplicate, else append (promoted AgentOps learnings come this way).
        ``validation_mode`` overrides ``knowledge.validation_mode`` for this add (the flywheel
        bridge validates machine-promoted, already-reviewed lessons in its own mode)."""
        store = self.swarm
        if (
            validation_mode is not None
            and ValidationMode(validation_mode) != self.config.validation_mode
        ):
            config = self.config.model_copy(
                update={"validation_mode": ValidationMode(validation_mode)}
            )
            store = TierStore(
                self.swarm.files,
                locks=self.locks,
                config=config,
                project_name=self.project_name,
                clock=self.clock,
            )
        from swarmq.knowledge.reinforcement import NewLesson  # adds only: not a reader's import

        fields = dict(directives or {})
        refs, ids = list(source_refs), list(source_knowledge_ids)
        if refs:
            fields["source_refs"] = refs
        if ids:
            fields["source_knowledge_ids"] = ids
        return store.add(
            NewLesson(
                lesson,
                category=category,
                tags=list(tags) if tags is not None else None,
                confidence=confidence,
                auto_generated=auto_generated,
                directives=fields,
                extra=dict(extra or {}),
            ),
            phase=phase,
        )
