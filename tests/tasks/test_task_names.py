"""Every Celery task swarmq registers is named by a constant of ``swarmq.names``."""

from __future__ import annotations

import importlib
import re

import swarmq.names as names
from swarmq.names import JOB_FAMILIES, TASK_MODULES
from swarmq.workers.app import app

TASK_NAME = re.compile(r"[a-z_]+\.[a-z_]+")


def test_every_registered_task_name_is_a_constant_of_names() -> None:
    for module in TASK_MODULES:
        importlib.import_module(module)
    registered = {  # tests and benchmarks register tasks of their own on the same app
        name for name, task in app.tasks.items() if task.__module__.startswith("swarmq.")
    }
    constants = {
        value
        for key, value in vars(names).items()
        if key.isupper() and isinstance(value, str) and TASK_NAME.fullmatch(value)
    }
    assert len(registered) >= len(TASK_MODULES)
    assert registered <= constants, sorted(registered - constants)
    assert {name.split(".")[0] for name in registered} <= {*JOB_FAMILIES, "ops"}
