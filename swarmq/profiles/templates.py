"""The Swarm2 Markdown templates shipped in ``swarmq/profiles/templates/``."""

from __future__ import annotations

import functools
from importlib import resources
from string import Template


@functools.cache
def template(name: str) -> Template:
    text = resources.files("swarmq.profiles").joinpath("templates", name).read_text("utf-8")
    return Template(text)


def render(template_name: str, /, **values: object) -> str:
    """Fill ``${placeholders}``; a missing value renders as ``...`` rather than failing."""
    tpl = template(template_name)
    filled = {
        key: ("..." if value is None or value == "" else str(value))
        for key, value in values.items()
    }
    for key in tpl.get_identifiers():
        filled.setdefault(key, "...")
    return tpl.substitute(filled)
