"""Forge: mine agent transcripts for typed knowledge candidates (AgentOps pending files)."""
