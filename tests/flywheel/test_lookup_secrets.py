"""``lookup`` never shows a secret, even one a learning file holds (written by hand or before
forge redacted): its titles and snippets go into an agent's context."""

from __future__ import annotations

from pathlib import Path

from swarmq.flywheel.lookup import search
from swarmq.flywheel.store import AgentsLayout
from tests.chaos.test_secrets_chaos import fake_secrets


def test_lookup_output_is_redacted(tmp_path: Path) -> None:
    secret = fake_secrets(5)["github"]
    layout = AgentsLayout(tmp_path / ".agents")
    layout.learnings.mkdir(parents=True)
    (layout.learnings / "2026-03-01-gh-token.md").write_text(
        f"# Learning: the gh release token {secret}\n\n"
        f"Export GH_TOKEN={secret} in the runner before calling gh release create, because "
        "the checkout step does not pass it on.\n",
        encoding="utf-8",
    )
    hits = search(layout, "gh release token runner", limit=5)
    assert hits, "the learning should be found"
    shown = " ".join(f"{h.title} {h.snippet}" for h in hits)
    assert secret not in shown and "[REDACTED:github-token]" in shown
