"""Leave-one-workspace-out folds for this folder's scripts: each examined workspace's queries
alone, judged while the learned relevance in force is a fold's model, the shipped one put back
afterwards however the run ends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from relevance_features import EXAMINED  # this folder's sibling script

from swarmq.eval.cross_store import CrossStoreLabels
from swarmq.federated import meaning


def workspace_folds(labels: CrossStoreLabels) -> Iterator[tuple[str, CrossStoreLabels]]:
    """Every examined workspace with the labels of its own queries only."""
    for name in EXAMINED:
        yield (
            name,
            CrossStoreLabels(
                labels.path,
                labels.workspaces,
                [q for q in labels.queries if q["workspace"] == name],
            ),
        )


@contextmanager
def shipped_model_kept() -> Iterator[None]:
    """The fold models a script puts in ``meaning.LEARNED`` last only as long as the block."""
    kept = dict(meaning.LEARNED)
    try:
        yield
    finally:
        meaning.LEARNED.clear()
        meaning.LEARNED.update(kept)
