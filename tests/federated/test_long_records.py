"""A record longer than a whole block is cut to fit, not left out for ever (a learning of 1,900
characters under a 2,000-character budget could never be shown, however relevant)."""

from __future__ import annotations

from swarmq.federated.finding import Finding, Fused, Store
from swarmq.federated.inject import render
from swarmq.knowledge.render import Budget

LONG = "Run the formatter before pushing, because CI checks formatting first. " * 30
SHORT = "Pin the node version in .nvmrc for CI."


def _fused(ident: str, text: str, rank: int) -> Fused:
    return Fused(Finding(Store.LEARNING, ident, text, rank, 0.9, f"/w/{ident}.md"), 1.0 / rank)


def test_a_record_too_long_for_any_block_is_cut_to_the_room_left() -> None:
    budget = Budget("full", 5, 2000)
    block, shown = render([_fused("long", LONG, 1)], trace_id="t", budget=budget, max_display=2000)
    assert block is not None and len(block) <= budget.max_chars
    assert [f.finding.id for f in shown] == ["long"]
    assert "- id: long" in block and "Run the formatter before pushing" in block
    assert "…" in block  # cut, and says so


def test_whole_records_still_come_first_and_short_ones_are_never_cut() -> None:
    budget = Budget("full", 5, 2000)
    items = [_fused("short", SHORT, 1), _fused("long", LONG, 2)]
    block, shown = render(items, trace_id="t", budget=budget, max_display=2000)
    assert block is not None and len(block) <= budget.max_chars
    assert [f.finding.id for f in shown] == ["short", "long"]
    assert SHORT in block  # whole


def test_no_room_for_a_useful_start_leaves_it_out() -> None:
    budget = Budget("full", 5, 400)
    block, shown = render([_fused("long", LONG, 1)], trace_id="t", budget=budget, max_display=2000)
    assert block is None and shown == []  # under MIN_CLIPPED_DISPLAY of it would fit


def test_the_directive_block_cuts_a_first_entry_too_long_for_it() -> None:
    from swarmq.knowledge.config import KnowledgeConfig
    from swarmq.knowledge.model import Tier
    from swarmq.knowledge.query import Ranked
    from swarmq.knowledge.reinforcement import NewLesson, new_entry
    from swarmq.knowledge.render import render_directives
    from swarmq.storage.clock import iso

    config = KnowledgeConfig()
    entry = new_entry(
        NewLesson(LONG.strip(), confidence=0.9),
        tier=Tier.SWARM,
        project_name="p",
        phase=1,
        at=iso(),
        config=config,
    )
    budget = Budget("full", 5, 2000)
    block, shown = render_directives(
        [Ranked(entry, "swarm", 1.0)], trace_id="t", budget=budget, max_display=2000
    )
    assert block is not None and len(block) <= budget.max_chars and shown[0].entry.id == entry.id
    assert "Run the formatter before pushing" in block and "…" in block


MIDDLE = "Measure each overlay box from the rendered page at capture time, never guess it. " * 11


def test_a_long_first_record_leaves_room_for_the_records_after_it() -> None:
    """Cut to the whole room, a long learning ranked first would push out the 900-character
    record after it: it is cut to what that record leaves instead."""
    budget = Budget("full", 5, 2000)
    items = [_fused("long", LONG, 1), _fused("middle", MIDDLE, 2), _fused("short", SHORT, 3)]
    block, shown = render(items, trace_id="t", budget=budget, max_display=2000)
    assert block is not None and len(block) <= budget.max_chars
    assert [f.finding.id for f in shown] == ["long", "middle", "short"]
    assert MIDDLE.strip() in block and SHORT in block  # whole
    assert "Run the formatter before pushing" in block and "…" in block  # cut, still first
    assert len(block) > budget.max_chars - 60  # the room the others left went to the long one


def test_long_records_share_the_block_best_first() -> None:
    budget = Budget("full", 5, 2000)
    items = [_fused("first", LONG, 1), _fused("second", LONG.upper(), 2)]
    block, shown = render(items, trace_id="t", budget=budget, max_display=2000)
    assert block is not None and len(block) <= budget.max_chars
    assert [f.finding.id for f in shown] == ["first", "second"]
    first, second = block.split("- id: second")
    assert len(first) > 3 * len(second)  # the room left goes to the first-ranked
