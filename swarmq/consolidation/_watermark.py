"""What the last successful run of a knowledge tier left behind, so the next one knows what
changed since: the digest of every line of the store as that run wrote it.

The nightly run joins only the entries whose line is not among those digests against the whole
store. A line digest, rather than a timestamp or the change journal, because it cannot miss an
entry: any change to an entry's bytes (an add, a reinforcement, a hand edit, a restore, an
entry promoted with an old ``created_at``, a line written by another host with a skewed clock)
gives a line the last run never saw. The journal is a hint writers may fail to append, and
timestamps are the writers' clocks and choices.

The file is written atomically after the run has committed the store and its events, under the
store lock, from the lines the run wrote; a crash before that leaves the previous watermark, so
the next run sees a superset of the changes, never fewer. It records the settings that shape the
plan: a run under other settings finds its watermark void and does a full pass, as the first run
on a store does. A file that cannot be read is void too (and a full pass follows).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from swarmq.consolidation.config import ConsolidationConfig
from swarmq.knowledge.model import Entry
from swarmq.storage.atomic import write_atomic
from swarmq.storage.locking import Lease

FORMAT = 1
DigestArray = npt.NDArray[np.uint64]

_IRRELEVANT = frozenset({"enabled", "hive", "learnings", "lock_timeout_seconds", "incremental"})
"""Settings that do not change which pairs a run acts on."""


def settings_key(config: ConsolidationConfig) -> str:
    """A digest of the settings that decide the plan (thresholds, measures, policies)."""
    shaping = {k: v for k, v in config.model_dump(mode="json").items() if k not in _IRRELEVANT}
    text = json.dumps(shaping, sort_keys=True)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def line_digests(lines: Iterable[str]) -> DigestArray:
    """64-bit BLAKE2b digest of each line, in line order (a collision could only hide a change
    with probability about ``n / 2**64``)."""
    raw = b"".join(
        hashlib.blake2b(line.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        for line in lines
    )
    digests: DigestArray = np.frombuffer(raw, dtype=np.uint64)
    return digests


@dataclass(frozen=True, slots=True)
class Watermark:
    digests: DigestArray
    settings: str
    run_id: str | None
    at: str

    def changed(self, entries: Sequence[Entry]) -> set[str]:
        """Ids of the entries whose exact line the last run did not write."""
        if not entries:
            return set()
        known = np.isin(line_digests(e.line() for e in entries), self.digests)
        return {entries[k].id for k in np.flatnonzero(~known).tolist()}


def watermark_path(events: Path) -> Path:
    """``<store>-consolidation.watermark`` beside the events file."""
    return events.with_name(events.stem + ".watermark")


def load(path: Path, config: ConsolidationConfig) -> Watermark | None:
    """The watermark at ``path`` if it exists, reads whole and was made under ``config``'s
    plan-shaping settings; ``None`` (a full pass is due) otherwise."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            digests = np.asarray(data["digests"], dtype=np.uint64)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        return None
    if meta.get("settings") != settings_key(config):
        return None
    run_id = meta.get("run_id")
    return Watermark(
        digests=digests,
        settings=str(meta["settings"]),
        run_id=run_id if isinstance(run_id, str) else None,
        at=str(meta.get("at", "")),
    )


def save(
    path: Path,
    lines: Iterable[str],
    config: ConsolidationConfig,
    *,
    run_id: str | None,
    at: str,
    lease: Lease | None,
) -> None:
    """Record ``lines`` (the store as the run left it) as the next run's starting point."""
    save_digests(path, line_digests(lines), config, run_id=run_id, at=at, lease=lease)


def save_digests(
    path: Path,
    digests: DigestArray,
    config: ConsolidationConfig,
    *,
    run_id: str | None,
    at: str,
    lease: Lease | None,
) -> None:
    """:func:`save` from the lines' digests (a run through the index hashes the file's lines
    instead of serialising parsed entries)."""
    meta = {"format": FORMAT, "settings": settings_key(config), "run_id": run_id, "at": at}
    buffer = io.BytesIO()
    np.savez(buffer, digests=np.sort(digests), meta=np.asarray(json.dumps(meta)))
    write_atomic(path, buffer.getvalue(), lease=lease)
