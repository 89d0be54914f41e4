"""``swarmq knowledge audit --secrets``: find (and with ``fix``, redact) secrets already written
to a store and its sidecars, for stores filled before adds were redacted.

Everything happens under the store lock, so no add interleaves: the store is rewritten once
(changed entries keep their place, their ``revision`` bumped and the kinds found recorded in
``secrets_redacted``), then each sidecar that holds a secret is rewritten atomically; the
corrupt-line sidecar goes last, since the rewrites before it may move corrupt lines there. A
sidecar record that holds another line as a JSON string (evicted lines, quarantine places) has
that inner line redacted as JSON, so its escaped quotes do not hide a ``"password": "…"``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from swarmq.knowledge._quarantine import places_path
from swarmq.knowledge.secrets import REDACTED_KEY, Redaction, redact
from swarmq.knowledge.serialize import dumps_js
from swarmq.knowledge.store import TierStore
from swarmq.storage.boundedjson import loads_bounded
from swarmq.storage.jsonl import read_jsonl, rewrite_jsonl
from swarmq.storage.locking import Lease


def _redacted_value(value: Any, kinds: Counter[str]) -> Any:
    """``value`` with secrets redacted in every string, and in JSON held in a string."""
    if isinstance(value, str):
        if value.startswith("{") and value.endswith("}"):
            try:
                inner = loads_bounded(value)
            except ValueError:
                inner = None
            if isinstance(inner, dict):
                seen: Counter[str] = Counter()
                cleaned = _redacted_value(inner, seen)
                if seen:
                    kinds.update(seen)
                    return dumps_js(cleaned)
        found: Redaction = redact(value)
        kinds.update(f.kind for f in found.findings)
        return found.text
    if isinstance(value, list):
        return [_redacted_value(v, kinds) for v in value]
    if isinstance(value, dict):
        return {k: _redacted_value(v, kinds) for k, v in value.items()}
    return value


def _sidecar(path: Path, corrupt_to: Path, lease: Lease, fix: bool) -> dict[str, Any] | None:
    """The secrets of one sidecar file (``None`` when it has none), rewritten when ``fix``."""
    current = read_jsonl(path)
    kinds: Counter[str] = Counter()
    lines: list[str] = []
    found_lines: list[int] = []
    for line in current.lines:
        seen: Counter[str] = Counter()
        cleaned = _redacted_value(line.value, seen)
        if seen:
            kinds.update(seen)
            found_lines.append(line.line_no)
            lines.append(dumps_js(cleaned))
        else:
            lines.append(line.raw)
    if not kinds:
        return None
    unfixable = path == corrupt_to and bool(current.corrupt)  # its own bad lines have no home
    if fix and not unfixable:
        rewrite_jsonl(path, lines, lease=lease, corrupt=current.corrupt, corrupt_to=corrupt_to)
    return {
        "file": str(path),
        "lines": found_lines,
        "kinds": dict(kinds),
        "fixed": fix and not unfixable,
    }


def audit_secrets(store: TierStore, *, fix: bool = False) -> dict[str, Any]:
    """Every secret in ``store``'s entries and sidecars, by entry id / file; with ``fix`` they
    are redacted in place (atomic rewrites under the store lock)."""
    files = store.files
    entries: list[dict[str, Any]] = []
    sidecars: list[dict[str, Any]] = []
    with store.locked() as txn:
        for entry in txn.entries:
            kinds: Counter[str] = Counter()
            cleaned = _redacted_value(dict(entry.data), kinds)
            if not kinds:
                continue
            entries.append({"id": entry.id, "kinds": dict(kinds)})
            if fix:
                cleaned[REDACTED_KEY] = sorted(set(entry.strings(REDACTED_KEY)) | set(kinds))
                txn.put(cleaned)
        if fix:
            txn.commit()
        paths = [
            files.rejected,
            files.quarantined,
            places_path(store.tier_file),
            files.unactionable,
            files.retractions,
            files.application,
            files.events,
            files.evicted,
            files.corrupt,
        ]
        for path in paths:
            found = _sidecar(path, files.corrupt, txn.lease, fix)
            if found is not None:
                sidecars.append(found)
    return {
        "tier": str(store.tier),
        "file": str(files.knowledge),
        "fixed": fix,
        "entries": entries,
        "sidecars": sidecars,
        "secrets": sum(sum(e["kinds"].values()) for e in [*entries, *sidecars]),
    }
