"""Symlinks planted under every memory root, pointing at /etc/passwd: every kind refuses them."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from swarmq.api.app import create_app
from swarmq.profiles.layout import SharedLayout
from swarmq.roster.loader import load_roster
from tests.support import write_roster

SECRET = Path("/etc/passwd")


@pytest.fixture
def api(tmp_path: Path, swarm_name: str, redis_url: str, redis_client: redis.Redis) -> TestClient:
    roster = load_roster(write_roster(tmp_path, swarm_name, redis_url), env={})
    return TestClient(create_app(roster, token=None))


@pytest.mark.skipif(not SECRET.is_file(), reason="needs /etc/passwd as the secret to leak")
@pytest.mark.parametrize(
    ("link", "params"),
    [
        ("shared/swarm/notes.md", {"kind": "shared"}),
        ("shared/handoffs/swarm/latest.md", {"kind": "shared"}),
        ("profiles/w1/memory/episodes/2026-01-02.md", {"kind": "episodic", "workerId": "w1"}),
        (
            "profiles/w1/memory/episodes/2026-01-02.md",
            {"kind": "episodic", "workerId": "w1", "date": "2026-01-02"},
        ),
        ("profiles/w1/memory/handoffs/m1.md", {"kind": "handoff", "workerId": "w1"}),
        (
            "profiles/w1/memory/handoffs/m1.md",
            {"kind": "handoff", "workerId": "w1", "missionId": "m1"},
        ),
    ],
)
def test_a_symlink_out_of_the_root_is_refused_for_every_kind(
    api: TestClient, tmp_path: Path, link: str, params: dict[str, str]
) -> None:
    planted = tmp_path / link
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(SECRET)
    response = api.get("/api/swarm-memory", params=params)
    assert response.status_code == 400, response.text
    assert "outside" in response.json()["error"]
    assert "root:" not in response.text


def test_a_symlink_inside_the_root_is_still_served(api: TestClient, tmp_path: Path) -> None:
    swarm = SharedLayout(tmp_path / "shared").swarm_dir
    swarm.mkdir(parents=True)
    (swarm / "real.md").write_text("inside the root")
    (swarm / "alias.md").symlink_to(swarm / "real.md")
    files = api.get("/api/swarm-memory", params={"kind": "shared"}).json()["files"]
    assert sorted(f["content"] for f in files) == ["inside the root", "inside the root"]
