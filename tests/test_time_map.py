"""The memory along its time, as pure rules over where notes lie in time (read/time_map.py): steps in the order they
happened, groups past what a map draws, hubs between steps, and the slider's steps gathered by the finest unit that
keeps them few."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from amem_graph.errors import InvalidInput
from amem_graph.models import Entity
from amem_graph.read import time_map
from amem_graph.store.base import Placed

T0 = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)


def placed(i: int, *, said: datetime | None = None, recorded: datetime = T0, session: str | None = None,
           seq: int | None = None, entities: tuple[str, ...] = ()) -> Placed:
    return Placed(f"n{i}", session, seq, said, recorded, None, None, (), entities)


def entity(key: str, kind: str = "place") -> Entity:
    return Entity(tenant="t", key=key, name=key.title(), kind=kind, mentions=5)  # type: ignore[arg-type]


def test_steps_are_sessions_in_the_order_said_and_days_for_notes_in_none() -> None:
    notes = [placed(1, said=T0 + timedelta(days=9), session="late", seq=1),
             placed(2, said=T0, session="early", seq=2), placed(3, said=T0, session="early", seq=1),
             placed(4, recorded=T0 + timedelta(days=3))]  # no session, no event time: the day it was recorded
    steps = time_map.steps(notes)
    assert [(s.key, s.label, s.notes) for s, _ in steps] == [
        ("session:early", "session early", 2), ("day:2023-05-11", "2023-05-11", 1), ("session:late", "session late", 1)]
    assert [n.id for n in steps[0][1]] == ["n3", "n2"]  # within a step, by place in the session
    assert time_map.steps([placed(5, session="Session 4")])[0][0].label == "Session 4"


def test_a_map_past_its_steps_groups_them_and_a_span_opens_a_group() -> None:
    notes = [placed(i, said=T0 + timedelta(days=i), session=f"s{i:02d}", entities=("rome",) if i % 2 else ("oslo",))
             for i in range(45)]
    shown = {"rome": entity("rome"), "oslo": entity("oslo")}
    drawn = time_map.time_map(notes, shown)
    assert len(drawn.steps) == 23 and drawn.notes == 45
    assert all(s.kind == "group" and s.steps == 2 for s in drawn.steps[:-1]) and drawn.steps[-1].kind == "session"
    group = drawn.steps[0]
    assert group.span == ("session:s00", "session:s01")
    inside = time_map.time_map(notes, shown, group.span)
    assert [s.key for s in inside.steps] == ["session:s00", "session:s01"]
    # Both entities are in every group: in nearly every step, they are named, not drawn.
    assert {e.key for e in drawn.throughout} == {"rome", "oslo"} and drawn.hubs == ()
    with pytest.raises(InvalidInput):
        time_map.time_map(notes, shown, ("session:s05", "session:s01"))
    with pytest.raises(InvalidInput):
        time_map.time_map(notes, shown, ("session:nope", "session:s01"))


def test_hubs_are_entities_two_steps_share_and_unshown_entities_are_left_out() -> None:
    notes = [placed(1, said=T0, session="a", entities=("rome", "rare")), placed(2, said=T0, session="a"),
             placed(3, said=T0 + timedelta(days=1), session="b", entities=("rome", "oslo")),
             placed(4, said=T0 + timedelta(days=2), session="c", entities=("oslo",)),
             placed(5, said=T0 + timedelta(days=3), session="d"), placed(6, said=T0 + timedelta(days=4), session="e")]
    drawn = time_map.time_map(notes, {"rome": entity("rome"), "oslo": entity("oslo")})  # "rare": not shown
    assert {h.entity.key: h.steps for h in drawn.hubs} == {
        "rome": (("session:a", 1), ("session:b", 1)), "oslo": (("session:b", 1), ("session:c", 1))}
    assert drawn.entities == 2


def test_the_recorded_slider_gathers_moments_by_the_finest_unit_that_keeps_them_few() -> None:
    each_ms = [placed(i, recorded=T0 + timedelta(milliseconds=10 * i)) for i in range(50)]
    steps = time_map.slider(each_ms, {}, "recorded")["steps"]
    assert len(steps) == 50 and steps[0]["label"].endswith(".000") and steps[-1]["notes"] == 50
    seconds = [placed(i, recorded=T0 + timedelta(milliseconds=300 * i)) for i in range(500)]
    found = time_map.slider(seconds, {}, "recorded")
    steps = found["steps"]
    assert len(steps) == 150 and steps[-1]["notes"] == 500  # 150 seconds of writes: one step a second
    # A step ends with its last moment; what comes before the first step starts before the first write.
    assert steps[0]["at"] == (T0 + timedelta(milliseconds=900)).isoformat() and found["first"] == T0.isoformat()
    years = [placed(i, recorded=T0 + timedelta(days=30 * i)) for i in range(500)]
    assert len(time_map.slider(years, {}, "recorded")["steps"]) <= 200
    with pytest.raises(InvalidInput):
        time_map.slider(years, {}, "sideways")  # type: ignore[arg-type]


def test_the_said_slider_steps_through_sessions_and_counts_entities_by_then() -> None:
    notes = [placed(1, said=T0, session="a", entities=("rome",)), placed(2, said=T0 + timedelta(days=1), session="b",
             entities=("rome", "oslo")), placed(3)]
    found = time_map.slider(notes, {"rome": entity("rome"), "oslo": entity("oslo")}, "said")
    assert [(s["label"], s["notes"], s["entities"]) for s in found["steps"]] == [
        ("session a", 1, 1), ("session b", 2, 2)]
    assert found["notes"] == 3 and found["undated"] == 1
