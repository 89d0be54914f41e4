"""How far the forge labels' word rules measure what a lesson says, and how far two labellers agree.

    python tools/label_agreement.py self LABELS...
    python tools/label_agreement.py pair FIRST SECOND

``self``: for each labels file, how many of its lessons the labeller's own sentence (``lesson``)
matches by that lesson's own ``words`` (the rule ``swarmq eval forge`` scores candidates with).
A lesson whose words its own sentence does not hold asks a candidate for strings beyond what the
lesson says (an output's count, a later call's exact text): a ceiling on what any candidate that
states the lesson can be credited with.

``pair``: two independent labellings of the same sessions; each labeller's lessons are taken as
candidates and scored by the other's word rules (the same matching as ``eval forge``), once as
the sentence alone and once with its own words appended: how far two careful readers of one
session agree on what its lessons are, by the instrument that scores forge.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from swarmq.eval.forge import LabelledSession, LabelsError, Lesson, load_labels, score


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    own = sub.add_parser("self")
    own.add_argument("labels", nargs="+", type=Path)
    pair = sub.add_parser("pair")
    pair.add_argument("first", type=Path)
    pair.add_argument("second", type=Path)
    args = parser.parse_args()
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
