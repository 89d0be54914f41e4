"""One question, every store: the workspace's knowledge entries (swarm and hive), AgentOps
learnings, patterns and pool candidates, and Swarm2 worker and shared memory, asked at once and
answered as one ranked, de-duplicated list.

Each store is asked through its own search (its ranking and its relevance floor stay its own);
this package only fuses the answers (reciprocal-rank fusion), folds one fact found in several
stores into one result (the bridge's ``source_refs`` link, then near-identical text), and
renders or records what is shown. It imports the stores it asks (``knowledge``, ``flywheel``,
``profiles``) and nothing above them; the entry points (CLI, MCP, hooks) call it.
"""
