"""Writes ``stores/*.jsonl`` and ``labels.json`` from ``rules.py`` (run from anywhere).

Each rule becomes two opencode-swarm knowledge entries of one store, its English original and
its committed Chinese translation; ids are uuid5 of (repository, rule key, language) so a rebuild
is byte-identical. The labels: every rule's two entries are a ``translation`` duplicate; the
``apart`` pairs below are an English rule and the Chinese of a *different* rule on the same
subject in the same file (``translated_same_topic``), two neighbouring rules of one file in one
language (``adjacent_rules_zh`` / ``_en``, picked by position, not by any score), or a rule of one repository and a
translated rule of the other that says much the same (``translated_different_projects``: the
planner must never merge across projects). Split: held when int(sha1(key), 16) % 3 == 0, key =
the two ids sorted and joined by ``|`` (the rule of ``labels.json``), fixed before any tuning.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from rules import GO_SPRING, TOWN_OS  # noqa: E402

NS = uuid.UUID("6f1c2a4e-2b1d-4c1e-9a0e-26c0ffee2626")
STORES = {
    "go-spring__go-spring": ("go-spring/go-spring", GO_SPRING, "2026-10-03T00:00:00.000Z"),
    "town-os__town-os": ("town-os/town-os", TOWN_OS, "2026-11-20T00:00:00.000Z"),
}

# (store, rule of side a, language of a, store, rule of side b, language of b)
SAME_TOPIC = [
    ("go-spring__go-spring", "one-home", "relocate"),
    ("go-spring__go-spring", "one-way", "relocate"),
    ("go-spring__go-spring", "no-defend", "rederive"),
    ("go-spring__go-spring", "reversal", "rederive"),
    ("go-spring__go-spring", "only-asked", "no-expand"),
    ("go-spring__go-spring", "no-probe", "only-asked"),
    ("go-spring__go-spring", "sacred-core", "user-wins"),
    ("go-spring__go-spring", "fix-own-bug", "fake-boundary"),
    ("go-spring__go-spring", "no-worktree", "no-history"),
    ("go-spring__go-spring", "old-docs", "no-why"),
    ("go-spring__go-spring", "verify", "docs-ruler"),
    ("go-spring__go-spring", "consistency", "docs-ruler"),
    ("go-spring__go-spring", "find-work", "escalate"),
    ("go-spring__go-spring", "tradeoff", "converge"),
    ("go-spring__go-spring", "siblings", "no-why"),
    ("town-os__town-os", "no-force-push", "push-origin"),
    ("town-os__town-os", "push-origin", "pull-rebase"),
    ("town-os__town-os", "no-gpg", "sign"),
    ("town-os__town-os", "sign", "commit-when-told"),
    ("town-os__town-os", "fail-fast", "exit-codes"),
    ("town-os__town-os", "check-errors", "inline-err"),
    ("town-os__town-os", "cmd-entrypoint", "replace"),
    ("town-os__town-os", "tests-everything", "no-remote-push-tests"),
    ("town-os__town-os", "strings-builder", "prealloc"),
    ("town-os__town-os", "context-todo", "os-exit"),
    ("town-os__town-os", "use-make", "free-targets"),
    ("town-os__town-os", "fix-warnings", "check-errors"),
    ("town-os__town-os", "local-repos", "no-remote-push-tests"),
    ("town-os__town-os", "concurrent", "unique-paths"),
]
DIFFERENT_PROJECTS = [
    (("town-os__town-os", "dont-argue"), ("go-spring__go-spring", "tradeoff")),
    (("go-spring__go-spring", "verify"), ("town-os__town-os", "use-make")),
    (("town-os__town-os", "tests-everything"), ("go-spring__go-spring", "verify")),
    (("go-spring__go-spring", "user-wins"), ("town-os__town-os", "dont-argue")),
]


def entry_id(store: str, key: str, lang: str) -> str:
    return str(uuid.uuid5(NS, f"{STORES[store][0]}|{key}|{lang}"))


def split(a: str, b: str) -> str:
    key = "|".join(sorted((a, b)))
    return "held" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 3 == 0 else "tune"


def main() -> None:
    (HERE / "stores").mkdir(exist_ok=True)
    for store, (_repo, rules, when) in STORES.items():
        lines = []
        for key, english, chinese in rules:
            for lang, text in (("en", english), ("zh", chinese)):
                entry = {
                    "id": entry_id(store, key, lang),
                    "tier": "swarm",
                    "lesson": text,
                    "category": "process",
                    "tags": [],
                    "scope": "global",
                    "confidence": 0.5,
                    "status": "candidate",
                    "confirmed_by": [],
                    "retrieval_outcomes": {
                        "applied_count": 0,
                        "succeeded_after_count": 0,
                        "failed_after_count": 0,
                    },
                    "schema_version": 1,
                    "created_at": when,
                    "updated_at": when,
                    "project_name": store,
                }
                lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        (HERE / "stores" / f"{store}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    duplicates = []
    for store, (_, rules, _) in STORES.items():
        for key, *_texts in rules:
            a, b = entry_id(store, key, "en"), entry_id(store, key, "zh")
            duplicates.append(
                {
                    "a": a,
                    "b": b,
                    "kind": "translation",
                    "split": split(a, b),
                    "note": f"{store}: {key}",
                }
            )
    apart = []
    for n, (store, left, right) in enumerate(SAME_TOPIC):
        # alternate which side is Chinese, so both directions are tested
        la, lb = ("en", "zh") if n % 2 == 0 else ("zh", "en")
        a, b = entry_id(store, left, la), entry_id(store, right, lb)
        apart.append(
            {
                "a": a,
                "b": b,
                "kind": "translated_same_topic",
                "split": split(a, b),
                "note": f"{store}: {left} ({la}) / {right} ({lb})",
            }
        )
    for (sa, ka), (sb, kb) in DIFFERENT_PROJECTS:
        a, b = entry_id(sa, ka, "en"), entry_id(sb, kb, "zh")
        apart.append(
            {
                "a": a,
                "b": b,
                "kind": "translated_different_projects",
                "split": split(a, b),
                "note": f"{sa}: {ka} (en) / {sb}: {kb} (zh)",
            }
        )
    for store, (_, rules, _) in STORES.items():
        # neighbouring rules of one file, in one language (Chinese for even positions): two
        # different rules whose only shared words may be identifiers or a date
        for n, ((left, *_), (right, *_)) in enumerate(itertools.pairwise(rules)):
            lang = "zh" if n % 2 == 0 else "en"
            a, b = entry_id(store, left, lang), entry_id(store, right, lang)
            apart.append(
                {
                    "a": a,
                    "b": b,
                    "kind": f"adjacent_rules_{lang}",
                    "split": split(a, b),
                    "note": f"{store}: {left} / {right} ({lang})",
                }
            )
    labels = {
        "about": "Translated duplicates and translated near-misses over stores/ (see SOURCES.md)."
        " split: 'held' items are never tuned on.",
        "split_rule": "held when int(sha1(key), 16) % 3 == 0; key = 'a|b' (sorted ids)",
        "duplicates": duplicates,
        "apart": apart,
        "queries": [],
    }
    (HERE / "labels.json").write_text(
        json.dumps(labels, ensure_ascii=False, indent=1) + "\n", "utf-8"
    )


if __name__ == "__main__":
    main()
