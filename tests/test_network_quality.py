"""A network worth looking at: the gold set of entity mentions and the extractors measured on it, one form per tag,
reasons that name notes by their words, content as it was said, and `bench network` on both stores."""

from __future__ import annotations

import json
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory, Settings
from amem_graph.bench import entities as gold_bench
from amem_graph.cli import app
from amem_graph.core.english import common_word
from amem_graph.core.text import distinct_forms, excerpt, word_form
from amem_graph.entities.extract import RuleExtractor, extract
from amem_graph.ingest import dated, locomo
from amem_graph.models import NoteInput
from amem_graph.write.evolution import readable

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = [DATA / "locomo" / "locomo-dev.json", DATA / "realtalk" / "realtalk-dev.json", DATA / "beam" / "beam-dev.json"]
GOLD = Path(__file__).parent / "data" / "entities" / "gold.jsonl"
STORES = ("neo4j", "embedded")
HAVE_DATA = all(path.exists() for path in SETS)


@pytest.mark.embedded
def test_the_gold_set_names_real_turns_with_kinds_of_the_model() -> None:
    gold = gold_bench.load_gold(GOLD)
    assert len(gold) >= 300 and {s for s, _, _ in gold} == {"locomo", "realtalk", "beam"}
    kinds = {kind for mentions in gold.values() for _, kind in mentions}
    assert kinds <= {"person", "pet", "place", "org", "product", "work", "event", "topic"}
    if HAVE_DATA:  # every labelled turn exists, and every label is words of its turn
        turns = {("locomo" if "locomo" in p.name else "realtalk" if "realtalk" in p.name else "beam",
                  str(c["sample_id"]), str(n.source)): n.content
                 for p in SETS for c in locomo.load(p) for n in locomo.turns(c)}
        for key, mentions in gold.items():
            assert key in turns, key
            assert all(name.lower() in turns[key].lower() for name, _ in mentions), key


@pytest.mark.embedded
@pytest.mark.skipif(not HAVE_DATA, reason=f"the development sets are not at {DATA}")
def test_the_rules_name_the_gold_sets_things_as_the_targets_ask() -> None:
    measured = gold_bench.run(GOLD, SETS, ["rules"])["extractors"]["rules"]["overall"]
    named = measured["named"]
    assert named["precision"] >= 0.90 and named["recall"] >= 0.85, named


@pytest.mark.embedded
def test_common_words_never_become_entities_and_names_do() -> None:
    assert all(common_word(w) for w in ("photo", "support", "always", "help", "family"))
    assert not any(common_word(w) for w in ("Gina", "Python", "pottery class", "kombucha"))
    found = RuleExtractor().mentions([
        "Yeah, awesome! Glad you liked the photo, it was always fun.",
        "Hey Kate! I moved to Denver with my dog Biscuit and started using Flask at Google.",
        "## Step-by-Step Guide\n```python\nclass Reflection: pass\n```\nThat is all.",
    ])
    assert found[0] == ()  # "Glad" opens a sentence as a word, and the rest are common words
    assert {(m.key, m.kind) for m in found[1]} >= {("kate", "person"), ("denver", "place"), ("biscuit", "pet"),
                                                  ("flask", "product"), ("google", "org")}
    assert found[2] == ()  # a heading's capitals and code name nothing


@pytest.mark.embedded
def test_an_assistants_turns_raise_no_topics_but_name_things() -> None:
    notes = [NoteInput("user: my kombucha keeps going flat", speaker="user"),
             NoteInput("assistant: For kombucha from Portland, try a second fermentation.", speaker="assistant")]
    found = extract(RuleExtractor(), notes, assistant="assistant")
    assert ("kombucha", "topic") in {(m.key, m.kind) for m in found[0]}
    assert {(m.key, m.kind) for m in found[1]} == {("portland", "place")}


@pytest.mark.embedded
def test_tags_and_keywords_keep_one_form_per_word() -> None:
    assert [word_form(w) for w in ("looks", "looking", "Alice's", "paintings")] == ["look", "look", "alice", "painting"]
    assert distinct_forms(["look", "looks", "looking", "alice's", "alice", "painted", "painting"]) == (
        "look", "alice", "paint")


@pytest.mark.embedded
def test_a_reason_names_the_other_note_by_its_words() -> None:
    note_id = str(uuid.uuid4())
    other = NoteInput("Gina: I opened my own dance studio downtown last spring, finally!", id=note_id)
    said = excerpt(other.content)
    assert said == "“I opened my own dance studio downtown last...”"  # its first eight words
    assert readable(f"contradicts note {note_id}", {note_id: other}) == f"contradicts {said}"
    assert readable(f"same as '{note_id.upper()}'", {note_id: other}) == f"same as {said}"
    unknown = str(uuid.uuid4())
    assert readable(f"see {unknown}", {note_id: other}) == f"see {unknown}"  # only notes it was shown


@pytest.mark.embedded
def test_readers_keep_the_date_in_the_event_time() -> None:
    conversation = {"sample_id": "c", "conversation": {
        "speaker_a": "Gina", "speaker_b": "Jon", "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Gina", "dia_id": "D1:1", "text": "I lost my job.", "blip_caption": "a desk"}],
    }}
    [turn] = locomo.turns(conversation)
    assert turn.content == "Gina: I lost my job. [shares a photo: a desk]"
    assert turn.event_time == datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    assert locomo.documents(conversation) == {"D1:1": "[1:56 pm on 8 May, 2023] " + turn.content}  # the baselines' text
    when, said = dated("[1:56 pm on 8 May, 2023] Gina: I lost my job.")
    assert said == "Gina: I lost my job." and when == turn.event_time
    assert dated("[brackets] are words") == (None, "[brackets] are words")


def test_jsonl_notes_with_a_stamp_are_stored_as_said(memory: AgenticMemory, cli_env, tmp_path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text(json.dumps({"content": "[1:56 pm on 8 May, 2023] Gina: I lost my job.", "source": "a"}) + "\n")
    result = CliRunner().invoke(app, ["ingest", str(path), "-t", memory.tenant], env=cli_env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    [note] = memory.list()
    assert note.content == "Gina: I lost my job." and note.event_time is not None and note.event_time.day == 8


LOCOMO = SETS[0]


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_bench_network_reports_versions_entities_tags_and_lifts(cli_env: dict[str, str], tmp_path) -> None:
    out = tmp_path / "network.json"
    prefix = f"n{uuid.uuid4().hex[:8]}-"
    try:
        result = CliRunner().invoke(app, ["bench", "network", "--data", str(LOCOMO), "--conversations", "conv-26",
                                          "--turns", "60", "--prefix", prefix, "--json", str(out)],
                                    env=cli_env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    finally:
        with AgenticMemory(Settings.from_env(cli_env)) as mem:
            mem.admin.delete_tenant(f"{prefix}conv-26")
    figures = json.loads(out.read_text())["sets"]["locomo-dev"]["conversations"]["conv-26"]
    assert figures["turns"] == 60
    assert 1.0 <= figures["versions_per_note"] <= 1.3
    assert figures["revisions_derived_only"] == 0 and figures["reasons_naming_an_id"] == 0
    assert "neighbourhood" not in figures["reasons"]
    assert figures["common_word_mention_share"] <= 0.10 and figures["near_duplicate_tag_share"] <= 0.05
    assert figures["co_evidence"]["all_pairs"] > figures["co_evidence"]["pairs"] > 0


def _as_schema_9(memory: AgenticMemory) -> None:
    """The schema marker as a release before schema 10 left it."""
    store = memory._store
    if memory.admin.kind == "neo4j":
        with store._driver.session() as session:
            session.run("MATCH (s:AmemSchema {name: 'amem-graph'}) SET s.version = 9").consume()
    else:
        store._write(lambda: store.graph.set(store.graph.unique("AmemSchema", name="amem-graph"), version=9))


def test_an_older_database_folds_the_versions_its_neighbourhoods_kept(memory: AgenticMemory) -> None:
    """Releases before schema 10 kept a version each time a turn joined a note's neighbourhood: opening the
    database folds them into the states after them, numbers the rest again, and reads as of any moment still show
    the fields and the neighbourhood of then."""
    from amem_graph.maintenance import schema
    from amem_graph.store.base import SCHEMA_VERSION, NoteRevision

    turns = ["Alice: I adopted a beagle.", "Bob: What is its name?", "Alice: Max, after my grandfather."]
    first = memory.add(turns[0], session="s1")

    def bookkept(text: str) -> None:  # what an older release wrote when a turn joined the neighbourhood
        revision = NoteRevision(first.id, {"neighbourhood": text}, f"neighbourhood: note {uuid.uuid4()} follows in its session")
        memory._store.write(memory.tenant, lambda tx: tx.revise([revision], None))

    def moment() -> datetime:  # strictly between two writes: the stores keep times to the millisecond
        time.sleep(0.005)
        at = datetime.now(timezone.utc)
        time.sleep(0.005)
        return at

    moments = [moment()]
    bookkept("\n".join(turns[:2]))
    moments.append(moment())
    memory.update(first.id, tags=["beagle"], reason="tagged by hand")
    moments.append(moment())
    bookkept("\n".join(turns))
    moments.append(moment())
    assert memory.get(first.id).version == 4
    _as_schema_9(memory)
    schema.ensure(memory._store, memory.embedder.model_name, memory.embedder.dimension)
    assert memory.stats().schema["version"] == SCHEMA_VERSION
    history = memory.history(first.id)
    assert [(v.version, v.reason, v.tags) for v in history.versions] == [(1, "tagged by hand", first.tags)]
    assert history.note.version == 2 and history.note.tags == ("beagle",) != first.tags
    then = [memory.get(first.id, as_of=at) for at in moments]
    assert [n.neighbourhood for n in then] == ["\n".join(turns[:1]), "\n".join(turns[:2]), "\n".join(turns[:2]),
                                               "\n".join(turns)]
    assert [n.tags for n in then] == [first.tags, first.tags, ("beagle",), ("beagle",)]
    assert memory.admin.check().sound
    schema.ensure(memory._store, memory.embedder.model_name, memory.embedder.dimension, force=True)
    assert memory.history(first.id).note.version == 2  # once
