"""Forge: mine agent transcripts for typed knowledge candidates (AgentOps pending files)."""

from typing import TYPE_CHECKING

from swarmq.memory.lazypkg import lazy_package

if TYPE_CHECKING:
    from swarmq.forge.classifier import KnowledgeClass, Verdict, classify
    from swarmq.forge.config import ForgeConfig, ForgeLLMConfig
    from swarmq.forge.extract import ForgeResult, forge_transcript
    from swarmq.forge.pending_file import ForgedCandidate

__all__ = [
    "ForgeConfig",
    "ForgeLLMConfig",
    "ForgeResult",
    "ForgedCandidate",
    "KnowledgeClass",
    "Verdict",
    "classify",
    "forge_transcript",
]

lazy_package(
    __name__,
    {
        "classifier": ("KnowledgeClass", "Verdict", "classify"),
        "config": ("ForgeConfig", "ForgeLLMConfig"),
        "extract": ("ForgeResult", "forge_transcript"),
        "pending_file": ("ForgedCandidate",),
    },
)
