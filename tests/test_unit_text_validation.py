"""Store-free unit tests of the text helpers (time stamps, speakers, the light stemmer) and of the input checks
that tests/test_validation.py leaves out: note ids, hashes, millisecond times, whole notes and updates, JSON Lines."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from amem_graph import InvalidInput, NoteInput
from amem_graph.core import validation as v
from amem_graph.core.text import split_speaker, stem, without_stamp
from amem_graph.models import NoteChanges

pytestmark = pytest.mark.embedded


def test_speaker_and_time_stamp_are_read_off_the_front() -> None:
    assert split_speaker("[1:56 pm on 8 May, 2023] Caroline: I went.") == ("Caroline", "I went.")
    assert split_speaker("Mary Ann Smith: hi there") == ("Mary Ann Smith", "hi there")  # up to three names
    assert split_speaker("mary: lower case is no name") == (None, "mary: lower case is no name")
    assert split_speaker("Time:10 sharp") == (None, "Time:10 sharp")  # a space must follow the colon
    assert split_speaker("[stamp] no speaker") == (None, "no speaker")
    assert without_stamp("[1:56 pm on 8 May, 2023] Caroline: I went.") == "Caroline: I went."
    assert without_stamp("[" + "x" * 81 + "] long") == "[" + "x" * 81 + "] long"  # not a stamp past 80 characters


@pytest.mark.parametrize(("word", "expected"), [
    ("ponies", "pony"), ("ties", "tie"), ("running", "runn"), ("walked", "walk"), ("glasses", "glass"),
    ("class", "class"), ("bus", "bus"), ("Caroline's", "caroline"), ("Max’s", "max"), ("sing", "sing"),
])
def test_the_light_stemmer(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_note_ids() -> None:
    assert v.note_id("n:1.x_y-z") == "n:1.x_y-z" and v.note_id("a" * 128)
    for bad in ("", "-a", "a b", "a@b", "a" * 129, 7, None):
        with pytest.raises(InvalidInput, match="note id"):
            v.note_id(bad)
    assert v.tenant("users.alice@example") == "users.alice@example"  # @ is a tenant character, not an id one


def test_content_hash_is_sha256_of_the_utf8() -> None:
    assert v.content_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert v.content_hash("café") != v.content_hash("cafe")


def test_times_are_kept_to_the_millisecond_in_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    said = v.event_time("2023-05-08T13:56:00.123456+02:00")
    assert said == datetime(2023, 5, 8, 13, 56, 0, 123000, tzinfo=plus_two) and said.utcoffset() == timedelta(0)
    # An offset Python allows and Neo4j does not (past 18 hours): the same moment, in UTC.
    far = v.event_time(datetime(2000, 1, 1, tzinfo=timezone(timedelta(hours=18, minutes=1))))
    assert far == datetime(1999, 12, 31, 5, 59, tzinfo=timezone.utc) and far.utcoffset() == timedelta(0)
    assert v.to_millis(datetime(2023, 1, 1, microsecond=999_999)).microsecond == 999_000
    assert v.event_time(None) is None
    with pytest.raises(InvalidInput, match="must be a datetime"):
        v.event_time(1_700_000_000)
    # Year 1 east of UTC, or year 9999 west of it, is no time in UTC: what stores compare and the driver sends.
    for outside in ("0001-01-01T00:00:00+23:59", datetime.max.replace(tzinfo=timezone(timedelta(minutes=-1439)))):
        with pytest.raises(InvalidInput, match="out of range"):
            v.event_time(outside)
    assert v.event_time("0001-01-01T00:00:00-01:00").year == 1


def test_labels_are_capped() -> None:
    assert len(v.labels([f"t{i}" for i in range(100)], "tags")) == 100
    with pytest.raises(InvalidInput, match="more than 100"):
        v.labels([f"t{i}" for i in range(101)], "tags")
    with pytest.raises(InvalidInput, match="a tag has 201 characters"):
        v.labels(["x" * 201], "tags")


def test_a_note_input_is_checked_whole_and_gets_its_speaker() -> None:
    checked = v.note_input(NoteInput(content="[8 May] Caroline: I went.", keywords=("a", "a"), id="n-1"), 100)
    assert (checked.speaker, checked.keywords, checked.id) == ("Caroline", ("a",), "n-1")
    assert v.note_input(NoteInput(content="Caroline: hi", speaker="Mel"), 100).speaker == "Mel"  # given wins
    assert v.note_input(NoteInput(content="hi"), 100).speaker is None
    for item, message in (
        (NoteInput(content="x" * 101), "content has 101 characters; the limit is 100"),
        (NoteInput(content="ok", source="s" * 501), "source has 501"),
        (NoteInput(content="ok", importance=True), "importance"),  # type: ignore[arg-type]
        (NoteInput(content="ok", id="bad id"), "note id"),
        (NoteInput(content="ok", session=""), "session is empty"),
        ("just text", "expected a NoteInput"),
    ):
        with pytest.raises(InvalidInput, match=message):
            v.note_input(item, 100)  # type: ignore[arg-type]


def test_note_changes_need_a_change_and_are_checked() -> None:
    with pytest.raises(InvalidInput, match="nothing to update"):
        v.note_changes(NoteChanges(reason="why"), 100)
    cleared = v.note_changes(NoteChanges(context="", tags=("x", "x")), 100)
    assert (cleared.context, cleared.tags, cleared.content) == ("", ("x",), None)  # a context may be cleared
    with pytest.raises(InvalidInput, match="content is empty"):
        v.note_changes(NoteChanges(content=" "), 100)
    with pytest.raises(InvalidInput, match="importance"):
        v.note_changes(NoteChanges(importance=2.0), 100)


def test_json_lines_name_the_first_bad_line() -> None:
    assert list(v.json_lines(['{"a": 1}', "", "  ", '{"b": 2}'])) == [(1, {"a": 1}), (4, {"b": 2})]
    with pytest.raises(InvalidInput, match="line 2 is not JSON"):
        list(v.json_lines(['{"a": 1}', "{nope"]))
    with pytest.raises(InvalidInput, match="line 3 is not a JSON object"):
        list(v.json_lines(['{"a": 1}', "", "[1, 2]"]))
