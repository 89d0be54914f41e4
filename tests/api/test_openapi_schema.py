"""The OpenAPI schema documents what the API really answers: the error bodies of 400, 401,
404, 409 (and 413, 503) and the id pattern ``check_id`` enforces (issue 31 item 8e)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from swarmq.storage.paths import ID_PATTERN


def test_the_schema_names_the_error_answers_and_the_id_pattern(api: TestClient) -> None:
    schema: dict[str, Any] = api.get("/openapi.json").json()
    paths = schema["paths"]
    cancel = paths["/api/missions/{mission_id}/cancel"]["post"]
    assert {"400", "401", "404", "409", "413", "503"} <= set(cancel["responses"])
    error = cancel["responses"]["409"]["content"]["application/json"]["schema"]
    assert error == {"$ref": "#/components/schemas/ErrorBody"}
    assert set(schema["components"]["schemas"]["ErrorBody"]["properties"]) == {"ok", "error"}
    [path_id] = [p for p in cancel["parameters"] if p["name"] == "mission_id"]
    assert path_id["schema"]["pattern"] == ID_PATTERN.pattern
    show = paths["/api/missions/{mission_id}"]["get"]
    assert {"400", "401", "404"} <= set(show["responses"])
    memory = paths["/api/swarm-memory"]["get"]
    [worker] = [p for p in memory["parameters"] if p["name"] == "workerId"]
    assert ID_PATTERN.pattern in str(worker["schema"])
    submit = schema["components"]["schemas"]["MissionSubmitBody"]["properties"]["workerId"]
    assert ID_PATTERN.pattern in str(submit)


def test_an_id_against_the_pattern_is_still_a_clear_400(api: TestClient) -> None:
    answer = api.post("/api/missions/..%2f..%2fetc/cancel", json={})
    assert answer.status_code in (400, 404)
    answer = api.post("/api/missions/bad.id/cancel", json={})
    assert (
        answer.status_code == 400 and "missionId 'bad.id' is not allowed" in answer.json()["error"]
    )
