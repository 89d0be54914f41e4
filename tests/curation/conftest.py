from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm_server import FakeLLMServer, running_llm_server


def enrichment_reply(body: dict[str, Any]) -> str:
    """A well-behaved model: one directive per lesson it was sent."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    lessons = json.loads(user.split("\n", 1)[1])
    return json.dumps(
        {
            "entries": [
                {
                    "id": item["id"],
                    "triggers": [f"about {item['id']}"],
                    "required_actions": [
                        f"run the check first: {' '.join(item['lesson'].split()[:4]).lower()}"
                    ],
                    "applies_to_agents": ["coder"],
                    "directive_priority": "high",
                }
                for item in lessons
            ]
        }
    )


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server(enrichment_reply) as server:
        yield server
