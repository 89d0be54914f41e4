"""Curator enrichment: plain-prose knowledge turned into actionable directives by a language
model under the ``enrichment`` quota, merged with compare-and-swap, with an honest fallback."""
