"""Generated skills: the knowledge-to-skill compiler, its readiness gate, eval fixtures and the
skill improver's proposals (opencode-swarm's layout, AutoCode's SKILL.md format)."""
