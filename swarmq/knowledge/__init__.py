"""opencode-swarm-compatible knowledge store: swarm, hive and link tiers.

The public API (see ``docs/knowledge.md``)::

    from swarmq.knowledge import KnowledgeStore, NewLesson, QueryContext

    knowledge = KnowledgeStore(swarm_dir, locks=locks, config=...)  # wiring.knowledge_store(roster, locks)
    knowledge.add_lesson("Run ruff before committing python files", phase=3)
    knowledge.swarm.get(entry_id); knowledge.swarm.update(entry_id, {...}, expected_revision=r)
    with knowledge.swarm.transaction() as txn: ...
    injection = inject(knowledge, QueryContext(text=task, agent="coder"), headroom=0.7)
"""
