"""Schemathesis fuzzing of the API from its own OpenAPI schema: no input may cause a 5xx."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error


@pytest.fixture
def api_schema(api: TestClient) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", api.app)


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow  # 15-25 s of real processes: handed out first
@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors(case: Any) -> None:
    case.call_and_validate(checks=[not_a_server_error])
