"""How far the forge labels' word rules measure what a lesson says, and how far two labellers agree.

    python tools/label_agreement.py self LABELS...
    python tools/label_agreement.py pair FIRST SECOND
    python tools/label_agreement.py forge FIRST SECOND [FIRST SECOND ...] [--json]

``self``: for each labels file, how many of its lessons the labeller's own sentence (``lesson``)
matches by that lesson's own ``words`` (the rule ``swarmq eval forge`` scores candidates with).
A lesson whose words its own sentence does not hold asks a candidate for strings beyond what the
lesson says (an output's count, a later call's exact text): a ceiling on what any candidate that
states the lesson can be credited with.

``pair``: two independent labellings of the same sessions; each labeller's lessons are taken as
candidates and scored by the other's word rules (the same matching as ``eval forge``), once as
the sentence alone and once with its own words appended: how far two careful readers of one
session agree on what its lessons are, by the instrument that scores forge.

``forge``: forge runs on the first labelling's sessions as ``swarmq eval forge --split all``
runs it (one scratch workspace, file-name order, default settings), and its candidates are
judged by each labelling and by both: a candidate is true by *either* when it states a lesson of
one of the two. One labeller's list misses lessons a second careful reader keeps, so a
candidate stating such a lesson is a false positive by that list alone; *either* credits it,
and recall stays each labeller's own (a lesson only one of them kept is not asked of forge by
the other). Several pairs (one per split) are counted one by one and pooled.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from swarmq.eval.forge import LabelledSession, LabelsError, Lesson, forged, load_labels, score


def _self_match(path: Path) -> tuple[int, int]:
    lessons = [lesson for session in load_labels(path) for lesson in session.lessons]
    return sum(lesson.matches(lesson.text) for lesson in lessons), len(lessons)


def _as_candidate(lesson: Lesson, with_words: bool) -> dict[str, str]:
    words = " ".join(entry[0] for entry in lesson.words) if with_words else ""
    return {"content": f"{lesson.text} {words}".strip()}


def _judged(
    judge: dict[str, LabelledSession], other: dict[str, LabelledSession], with_words: bool
) -> tuple[int, int, int]:
    tp = fp = fn = 0
    for name, session in judge.items():
        said = other.get(name)
        candidates = [_as_candidate(lesson, with_words) for lesson in said.lessons] if said else []
        counts = score(session, candidates).counts
        tp, fp, fn = tp + counts.tp, fp + counts.fp, fn + counts.fn
    return tp, fp, fn


def _forged(sessions: list[LabelledSession]) -> dict[str, list[str]]:
    """Each session's candidate contents, forged as ``swarmq eval forge`` forges them."""
    ordered = sorted(sessions, key=lambda s: s.file.name)
    return {s.file.name: [c.content for c in result.found] for s, result in forged(ordered)}


def _forge_judged(first: Path, second: Path) -> dict[str, dict[str, int]]:
    """Forge's candidates on the first labelling's sessions, counted by each labelling and by
    either: ``tp`` candidates-or-lessons found, ``fp`` candidates matching none, ``fn`` lessons
    missed, and the tool-error lessons found (``te``) of all (``te_all``)."""
    ones = load_labels(first)
    twos = {s.file.name: s for s in load_labels(second)}
    missing = sorted(s.file.name for s in ones if s.file.name not in twos)
    if missing:
        raise LabelsError(f"{second}: no labels for {', '.join(missing)} (labelled in {first})")
    forged = _forged(ones)
    counts = {
        name: dict.fromkeys(("tp", "fp", "fn", "te", "te_all"), 0)
        for name in ("first", "second", "either")
    }
    for one in ones:
        two = twos[one.file.name]
        candidates = forged[one.file.name]
        for name, session in (("first", one), ("second", two)):
            outcome = score(session, ({"content": c} for c in candidates))
            row = counts[name]
            row["tp"] += outcome.counts.tp
            row["fp"] += outcome.counts.fp
            row["fn"] += outcome.counts.fn
            row["te"] += outcome.found_kinds.get("tool-error", 0)
            row["te_all"] += sum(lesson.kind == "tool-error" for lesson in session.lessons)
        lessons = (*one.lessons, *two.lessons)
        true = sum(any(lesson.matches(c) for lesson in lessons) for c in candidates)
        counts["either"]["tp"] += true
        counts["either"]["fp"] += len(candidates) - true
    return counts


def _print_counts(counts: dict[str, dict[str, int]], indent: str) -> None:
    for name, row in counts.items():
        tp, fp = row["tp"], row["fp"]
        line = f"{indent}{name:7} P {tp / max(1, tp + fp):.2f} ({tp} of {tp + fp} candidates)"
        if name != "either":
            line += (
                f", R {tp / max(1, tp + row['fn']):.2f} ({tp}/{tp + row['fn']}),"
                f" tool-error {row['te']}/{row['te_all']}"
            )
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    own = sub.add_parser("self")
    own.add_argument("labels", nargs="+", type=Path)
    pair = sub.add_parser("pair")
    pair.add_argument("first", type=Path)
    pair.add_argument("second", type=Path)
    forge = sub.add_parser("forge")
    forge.add_argument("labels", nargs="+", type=Path, help="FIRST SECOND, one pair per split")
    forge.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.command == "forge":
        if len(args.labels) % 2:
            parser.error("forge: give labels files in pairs, FIRST SECOND for each split")
        pairs = list(zip(args.labels[::2], args.labels[1::2], strict=True))
        each = [_forge_judged(first, second) for first, second in pairs]
        pooled = {
            name: {key: sum(counts[name][key] for counts in each) for key in row}
            for name, row in each[0].items()
        }
        if args.json:
            print(json.dumps(pooled))
            return
        if len(pairs) > 1:
            for (first, _), counts in zip(pairs, each, strict=True):
                print(first.name)
                _print_counts(counts, "  ")
            print("pooled")
        _print_counts(pooled, "  " if len(pairs) > 1 else "")
        return
    if args.command == "self":
        total = matched = 0
        for path in args.labels:
            hit, count = _self_match(path)
            matched, total = matched + hit, total + count
            print(f"{path.name:32} {hit:4d}/{count:<4d} {hit / max(1, count):.2f}")
        print(f"{'all':32} {matched:4d}/{total:<4d} {matched / max(1, total):.2f}")
        return
    first = {s.file.name: s for s in load_labels(args.first)}
    second = {s.file.name: s for s in load_labels(args.second)}
    for title, judge, other in (
        ("second's lessons judged by the first's words", first, second),
        ("first's lessons judged by the second's words", second, first),
    ):
        for with_words in (False, True):
            tp, fp, fn = _judged(judge, other, with_words)
            how = "sentence and its words" if with_words else "sentence alone"
            print(
                f"{title} ({how}): {tp}/{fp}/{fn}, P {tp / max(1, tp + fp):.2f}, "
                f"R {tp / max(1, tp + fn):.2f}"
            )


if __name__ == "__main__":
    try:
        main()
    except LabelsError as exc:  # names the file and the session it could not read
        raise SystemExit(f"label_agreement: {exc}") from None
