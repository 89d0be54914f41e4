"""Language-model providers: OpenAI-compatible HTTP, a command-line agent, or none.

:func:`build_provider` reads swarm.yaml's ``llm:`` section; :class:`MeteredCompleter` puts a
provider behind the daily quota, the cluster rate limit, retries and the JSONL ledger. Nothing
here imports Celery or Redis: the gate and the rate limiter are passed in.
"""
