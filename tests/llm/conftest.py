from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm_server import FakeLLMServer, running_llm_server


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with running_llm_server() as server:
        yield server
