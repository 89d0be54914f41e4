"""The port through which domain jobs ask a language model for text, and the checks every reply
passes before anything is written.

Curation, the skill improver and forge's optional LLM pass depend on this package only; the
HTTP, quota and ledger machinery that implements it lives in :mod:`swarmq.llm`, a layer above.
Imports nothing of swarmq but :mod:`swarmq.errors` and :mod:`swarmq.storage`.
"""
