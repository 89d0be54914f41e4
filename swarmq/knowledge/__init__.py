"""opencode-swarm-compatible knowledge store: swarm, hive and link tiers.

Owns the entries, their validation, dedup and reinforcement, quarantine and archive, the
directive block injected into prompts and the receipts agents send back. Imports nothing of
swarmq but :mod:`swarmq.similarity`, :mod:`swarmq.storage` and the shared names and errors.

The public API (see ``docs/knowledge.md``)::

    from swarmq.knowledge.inject import inject
    from swarmq.knowledge.project import KnowledgeStore
    from swarmq.knowledge.query import QueryContext

    knowledge = KnowledgeStore(swarm_dir, locks=locks, config=config)
    # in a worker or the CLI: swarmq.wiring.knowledge.knowledge_store(roster, locks)
    knowledge.add_lesson("Run ruff before committing python files", phase=3)
    knowledge.swarm.get(entry_id)
    knowledge.swarm.update(entry_id, {...}, expected_revision=revision)
    with knowledge.swarm.transaction() as txn: ...
    injection = inject(knowledge, QueryContext(text=task, agent="coder"), headroom=0.7)
"""
