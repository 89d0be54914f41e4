"""Streaming readers for agent transcripts: Claude Code, Codex (rollouts and history), Markdown."""
