"""/api/swarm-memory and /api/missions over ASGI: contracts, hostile input, auth."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from swarmq.api.app import create_app
from swarmq.roster.loader import load_roster
from tests.api.hostile import HOSTILE_IDS


def test_memory_roundtrip_and_search(api: TestClient, tmp_path: Path) -> None:
    profile = api.get("/api/swarm-memory", params={"workerId": "w1", "kind": "profile"}).json()
    assert profile["ok"] and {f["name"] for f in profile["files"]} >= {
        "MEMORY.md",
        "IDENTITY.md",
        "SOUL.md",
    }
    body = {
        "workerId": "w1",
        "kind": "mission",
        "missionId": "mission-abc",
        "eventType": "checkpoint",
        "content": "parser handles nested quotes",
        "event": {"state": "DONE", "result": "ok", "at": "x"},
    }
    written = api.post("/api/swarm-memory", json=body).json()
    assert (
        written["ok"]
        and written["event"]["type"] == "checkpoint"
        and written["event"]["state"] == "DONE"
    )
    assert written["event"]["at"] != "x"  # reserved fields cannot be overridden
    mission = api.get(
        "/api/swarm-memory",
        params={"workerId": "w1", "kind": "mission", "missionId": "mission-abc"},
    ).json()
    names = {f["name"]: f["content"] for f in mission["files"]}
    assert (
        "parser handles nested quotes" in names["SUMMARY.md"]
        and "checkpoint" in names["events.jsonl"]
    )
    episodes = api.get("/api/swarm-memory", params={"workerId": "w1", "kind": "episodic"}).json()
    assert "parser handles nested quotes" in episodes["files"][0]["content"]
    handoff = api.post(
        "/api/swarm-memory",
        json={
            "workerId": "w1",
            "kind": "handoff",
            "missionId": "mission-abc",
            "content": "# Handoff — w1 — mission-abc\n\n## Next exact action\n\nship",
        },
    )
    assert handoff.status_code == 200
    assert (
        (tmp_path / "shared" / "handoffs" / "swarm" / "w1-latest.md")
        .read_text()
        .startswith("# Handoff")
    )
    shared = api.get("/api/swarm-memory", params={"kind": "shared"}).json()
    assert any(f["name"] == "handoffs/swarm/w1-latest.md" for f in shared["files"])
    found = api.get(
        "/api/swarm-memory/search", params={"workerId": "w1", "query": "nested quotes"}
    ).json()
    assert found["ok"] and found["results"][0]["match"] == "phrase"
    assert found["results"][0]["line"] >= 1 and "nested quotes" in found["results"][0]["snippet"]
    every = api.get("/api/swarm-memory/search", params={"query": "ship", "scope": "all"}).json()
    assert any("w1-latest.md" in r["path"] for r in every["results"])
    tight = api.get(
        "/api/swarm-memory/search", params={"workerId": "w1", "query": "nested", "budget": 100}
    ).json()
    assert tight["chars"] <= 100


def test_missions_endpoints(api: TestClient) -> None:
    # No worker is running: the mission is recorded as blocked with the reason, nothing lost.
    created = api.post(
        "/api/missions",
        json={"objective": "Fix it", "workerId": "w1"},
        headers={"Idempotency-Key": "key-1"},
    )
    assert created.status_code == 201
    mission = created.json()["mission"]
    assert mission["state"] == "blocked" and "not running" in mission["reason"]
    again = api.post(
        "/api/missions",
        json={"objective": "Different text", "workerId": "w1", "clientKey": "key-1"},
    )
    assert again.json()["mission"]["id"] == mission["id"]
    unknown = api.post("/api/missions", json={"objective": "x", "workerId": "ghost"})
    assert unknown.status_code == 404 and "unknown worker 'ghost'" in unknown.json()["error"]
    no_role = api.post("/api/missions", json={"objective": "x", "role": "astronaut"})
    assert no_role.status_code == 404 and "role 'astronaut'" in no_role.json()["error"]
    no_agent = api.post("/api/missions", json={"objective": "x", "workerId": "w2"}).json()[
        "mission"
    ]
    assert no_agent["state"] == "failed" and "no agent command" in no_agent["reason"]
    listed = api.get("/api/missions").json()["missions"]
    assert len(listed) == 2  # the refused submits wrote nothing
    shown = api.get(f"/api/missions/{mission['id']}").json()["mission"]
    assert shown["events"][0]["type"] == "blocked"
    cancelled = api.post(
        f"/api/missions/{mission['id']}/cancel", json={"reason": "not needed"}
    ).json()
    assert cancelled["mission"]["state"] == "cancelled"
    conflict = api.post(f"/api/missions/{mission['id']}/resume", json={})
    assert conflict.status_code == 409 and "cancelled" in conflict.json()["error"]
    assert api.get("/api/missions/mission-nope").status_code == 404


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_hostile_ids_are_refused(api: TestClient, tmp_path: Path, bad: str) -> None:
    before = {p for p in tmp_path.rglob("*")}
    responses = [
        api.get("/api/swarm-memory", params={"workerId": bad, "kind": "profile"}),
        api.get(
            "/api/swarm-memory", params={"workerId": "w1", "kind": "mission", "missionId": bad}
        ),
        api.get("/api/swarm-memory", params={"workerId": "w1", "kind": "episodic", "date": bad}),
        api.get("/api/swarm-memory", params={"kind": "shared", "missionId": bad}),
        api.post(
            "/api/swarm-memory", json={"workerId": bad, "kind": "profile", "content": "pwned"}
        ),
        api.post(
            "/api/swarm-memory",
            json={
                "workerId": "w1",
                "kind": "mission",
                "missionId": bad,
                "eventType": "note",
                "content": "pwned",
            },
        ),
        api.post(
            "/api/swarm-memory",
            json={"workerId": "w1", "kind": "handoff", "missionId": bad, "content": "pwned"},
        ),
        api.post("/api/swarm-memory", json={"kind": "shared", "file": bad, "content": "pwned"}),
        api.post(
            "/api/swarm-memory",
            json={
                "workerId": "w1",
                "kind": "mission",
                "missionId": "m1",
                "eventType": "note",
                "event": {"assignmentId": bad},
            },
        ),
        api.get("/api/swarm-memory/search", params={"workerId": bad, "query": "x"}),
        api.post("/api/missions", json={"objective": "x", "workerId": bad}),
        api.post("/api/missions", json={"objective": "x", "workerId": "w1", "missionId": bad}),
        api.post(
            "/api/missions", json={"objective": "x", "workerId": "w1", "clientKey": bad + "\x00/.."}
        ),
        api.get("/api/missions", params={"workerId": bad}),
        api.post("/api/missions/x/resume", json={"workerId": bad}),
    ]
    if bad.isprintable() and "/" not in bad and "\\" not in bad and bad not in (".", ".."):
        responses += [
            api.get(f"/api/missions/{bad}"),
            api.post(f"/api/missions/{bad}/cancel", json={}),
        ]
    for response in responses:
        assert 400 <= response.status_code < 500, (
            response.request.url,
            response.status_code,
            response.text,
        )
        assert response.json()["ok"] is False and response.json()["error"]
    after = {p for p in tmp_path.rglob("*")}
    created = {
        p
        for p in after - before
        if "pwned" in (p.read_text(errors="ignore") if p.is_file() else "")
    }
    assert not created
    assert not list((tmp_path / "profiles").glob("*pwned*"))
    assert sorted(p.name for p in (tmp_path / "profiles").iterdir()) == ["w1", "w2"]


def test_symlink_out_of_the_root_is_refused(api: TestClient, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "profiles" / "w1" / "memory" / "missions" / "evil").symlink_to(outside)
    response = api.post(
        "/api/swarm-memory",
        json={
            "workerId": "w1",
            "kind": "mission",
            "missionId": "evil",
            "eventType": "note",
            "content": "pwned",
        },
    )
    assert response.status_code == 400 and "outside" in response.json()["error"]
    assert list(outside.iterdir()) == []


def test_bearer_token(roster_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARMQ_API_TOKEN", "s3cret")
    roster = load_roster(roster_file, env={})
    with TestClient(create_app(roster)) as http:
        assert http.get("/api/swarm-memory", params={"workerId": "w1"}).status_code == 401
        wrong = http.get(
            "/api/swarm-memory", params={"workerId": "w1"}, headers={"Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401
        ok = http.get(
            "/api/swarm-memory",
            params={"workerId": "w1"},
            headers={"Authorization": "Bearer s3cret"},
        )
        assert ok.status_code == 200
    assert os.environ["SWARMQ_API_TOKEN"] == "s3cret"


def test_openapi_schema_lists_the_contract(api: TestClient) -> None:
    schema: dict[str, Any] = api.get("/openapi.json").json()
    assert {
        "/api/swarm-memory",
        "/api/swarm-memory/search",
        "/api/missions",
        "/api/missions/{mission_id}",
        "/api/missions/{mission_id}/cancel",
        "/api/missions/{mission_id}/resume",
    } <= set(schema["paths"])
