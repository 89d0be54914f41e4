"""swarmq: the distributed worker system that keeps an AI agent swarm's knowledge alive."""

__version__ = "0.1.0"
