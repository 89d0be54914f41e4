"""Claude Code and Codex hooks: the settings entries swarmq installs (:mod:`settings`), the lean
command the agents run on each event (:mod:`client`, ``swarmq-hook``) and the warm process that
answers it (:mod:`server`). An interface like ``cli`` and ``api``: it may import everything
below it; the domain work stays in ``knowledge``, ``forge`` and ``wiring``."""
