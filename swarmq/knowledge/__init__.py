"""opencode-swarm-compatible knowledge store: swarm, hive and link tiers.

The public API (see ``docs/knowledge.md``)::

    from swarmq.knowledge import KnowledgeStore, NewLesson, QueryContext

    knowledge = KnowledgeStore.for_roster(roster, locks)       # or KnowledgeStore(swarm_dir, ...)
    knowledge.add_lesson("Run ruff before committing python files", phase=3)
    knowledge.swarm.get(entry_id); knowledge.swarm.update(entry_id, {...}, expected_revision=r)
    with knowledge.swarm.transaction() as txn: ...
    injection = inject(knowledge, QueryContext(text=task, agent="coder"), headroom=0.7)
"""

from typing import TYPE_CHECKING

from swarmq.memory.lazypkg import lazy_package

if TYPE_CHECKING:
    from swarmq.knowledge.config import KnowledgeConfig, ValidationMode
    from swarmq.knowledge.errors import (
        EntryNotFound,
        InvalidEntry,
        KnowledgeError,
        ReceiptChainBroken,
        RestoreRefused,
        RevisionConflict,
    )
    from swarmq.knowledge.files import TierFiles, platform_data_dir
    from swarmq.knowledge.inject import Injection, inject, record_shown
    from swarmq.knowledge.model import (
        ACTIVE_STATUSES,
        Category,
        DirectivePriority,
        Entry,
        RetrievalMode,
        Status,
        Tier,
    )
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.query import QueryContext, Ranked, search
    from swarmq.knowledge.reinforcement import NewLesson, compute_confidence
    from swarmq.knowledge.render import Budget, budget_for, render_directives
    from swarmq.knowledge.store import AddResult, ReinforceResult, TierStore
    from swarmq.knowledge.tierfile import Snapshot
    from swarmq.knowledge.transaction import Transaction
    from swarmq.knowledge.validation import (
        NEGATION_PAIRS,
        ValidationResult,
        negation_contexts,
        validate_lesson,
    )

__all__ = [
    "ACTIVE_STATUSES",
    "NEGATION_PAIRS",
    "AddResult",
    "Budget",
    "Category",
    "DirectivePriority",
    "Entry",
    "EntryNotFound",
    "Injection",
    "InvalidEntry",
    "KnowledgeConfig",
    "KnowledgeError",
    "KnowledgeStore",
    "NewLesson",
    "QueryContext",
    "Ranked",
    "ReceiptChainBroken",
    "ReinforceResult",
    "RestoreRefused",
    "RetrievalMode",
    "RevisionConflict",
    "Snapshot",
    "Status",
    "Tier",
    "TierFiles",
    "TierStore",
    "Transaction",
    "ValidationMode",
    "ValidationResult",
    "budget_for",
    "compute_confidence",
    "inject",
    "negation_contexts",
    "platform_data_dir",
    "record_shown",
    "render_directives",
    "search",
    "validate_lesson",
]

lazy_package(
    __name__,
    {
        "config": ("KnowledgeConfig", "ValidationMode"),
        "errors": (
            "EntryNotFound",
            "InvalidEntry",
            "KnowledgeError",
            "ReceiptChainBroken",
            "RestoreRefused",
            "RevisionConflict",
        ),
        "files": ("TierFiles", "platform_data_dir"),
        "inject": ("Injection", "inject", "record_shown"),
        "model": (
            "ACTIVE_STATUSES",
            "Category",
            "DirectivePriority",
            "Entry",
            "RetrievalMode",
            "Status",
            "Tier",
        ),
        "project": ("KnowledgeStore",),
        "query": ("QueryContext", "Ranked", "search"),
        "reinforcement": ("NewLesson", "compute_confidence"),
        "render": ("Budget", "budget_for", "render_directives"),
        "store": ("AddResult", "ReinforceResult", "TierStore"),
        "tierfile": ("Snapshot",),
        "transaction": ("Transaction",),
        "validation": (
            "NEGATION_PAIRS",
            "ValidationResult",
            "negation_contexts",
            "validate_lesson",
        ),
    },
)
