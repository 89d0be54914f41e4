"""Structured logs: every worker log line can be one JSON object carrying worker and task ids.

The default format is Celery's, with ``worker=<id>`` added (set in ``workers/config.py``).
``SWARMQ_LOG_FORMAT=json`` switches worker and task loggers to JSON lines, for log shippers.
"""

from __future__ import annotations

import json
import logging
import os
from datetime import UTC, datetime
from typing import Any

from celery import current_task
from celery.signals import after_setup_logger, after_setup_task_logger

from swarmq.storage.clock import iso

FORMAT_ENV = "SWARMQ_LOG_FORMAT"
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, worker and task, extras."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "at": iso(datetime.fromtimestamp(record.created, UTC)),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.processName,
            "worker_id": os.environ.get("SWARMQ_WORKER_ID"),
        }
        task = current_task
        if task is not None and task.request.id is not None:
            data["task_id"] = task.request.id
            data["task_name"] = task.name
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in data and not key.startswith("_"):
                data[key] = value
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


def _install(logger: logging.Logger, **_: Any) -> None:
    if os.environ.get(FORMAT_ENV, "").lower() != "json":
        return
    for handler in logger.handlers:
        handler.setFormatter(JsonFormatter())


after_setup_logger.connect(_install, weak=False)
after_setup_task_logger.connect(_install, weak=False)
