"""``python -m swarmq.hooks <agent> [<event>]``: the same as ``swarmq-hook``."""

from swarmq.hooks.client import main

main()
