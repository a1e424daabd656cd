"""The entity layer on both stores: extraction into the add's transaction, one entity per thing per tenant,
counts kept through deletes, lookups by name."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from amem_graph import AgenticMemory, EntityNotFound, InvalidInput
from amem_graph.core import validation
from amem_graph.core.entity_keys import entity_key, singular
from amem_graph.entities.extract import RuleExtractor, default_extractor, extract, model_path, note_mentions
from amem_graph.models import NoteInput
from amem_graph.store.records import note_row

STORES = ("neo4j", "embedded")


def _entities(memory: AgenticMemory) -> dict[str, tuple[str, int]]:
    return {e.key: (e.kind, e.mentions) for e in memory.entities.list(limit=1000)}


def test_an_add_writes_the_entities_its_note_mentions_and_its_speaker(memory: AgenticMemory) -> None:
    note = memory.add("Caroline: I took my dog Oscar to a pottery class in Sweden.", session="s1")
    found = _entities(memory)
    assert found["caroline"] == ("person", 1)  # the speaker
    assert found["sweden"] == ("place", 1)
    assert found["oscar"] == ("pet", 1)
    assert "dog" not in found  # a common word is never an entity
    assert "pottery class" not in found  # a topic is shown once it recurs
    assert memory.entities.get("pottery class").kind == "topic"
    mentioned = {e.key: confidence for e, confidence in memory.entities.of_note(note.id)}
    assert mentioned["caroline"] == 1.0 and 0 < mentioned["sweden"] < 1.0 and "pottery class" not in mentioned


def test_a_topic_is_shown_once_three_notes_mention_it(memory: AgenticMemory) -> None:
    memory.add("Jon: I opened a dance studio.", session="s1")
    memory.add("Gina: How is the dance studio going?", session="s1")
    assert "dance studio" not in _entities(memory)
    third = memory.add("Jon: The dance studios keep me busy.", session="s2")
    assert _entities(memory)["dance studio"] == ("topic", 3)
    assert "dance studio" in {e.key for e, _ in memory.entities.of_note(third.id)}


def test_one_entity_per_thing_across_notes_and_spellings(memory: AgenticMemory) -> None:
    memory.add("Melanie: My kids love the dinosaur exhibits.", session="s1")
    memory.add("Melanie: The dinosaur exhibit was their favourite.", session="s2")
    memory.add("Caroline: Melanie’s photos of the dinosaur exhibit are lovely.", session="s2")
    found = _entities(memory)
    assert found["melanie"] == ("person", 3)  # twice the speaker, once named (curly possessive)
    assert found["dinosaur exhibit"] == ("topic", 3) and "dinosaur exhibits" not in found
    assert not {"kid", "kids", "photo", "favourite"} & found.keys()  # common words are no entities
    exhibit = memory.entities.get("Dinosaur exhibits")
    assert exhibit.key == "dinosaur exhibit" and exhibit.mentions == 3
    assert exhibit.first_seen is not None and exhibit.last_seen is not None


def test_a_repeat_add_mentions_nothing_twice(memory: AgenticMemory) -> None:
    memory.add("Jon: I opened a dance studio.", source="t1")
    memory.add("Jon: I opened a dance studio.", source="t1")
    assert _entities(memory)["jon"] == ("person", 1) and memory.entities.get("dance studio").mentions == 1


def test_bulk_import_writes_mentions_in_its_transaction(memory: AgenticMemory) -> None:
    ids = memory.add_many([NoteInput("Gina: Paris was lovely in May.", speaker="Gina"),
                           NoteInput("Jon: I want to see Paris too.", speaker="Jon")])
    found = _entities(memory)
    assert found["paris"] == ("place", 2) and found["gina"] == ("person", 1)
    assert {e.key for e, _ in memory.entities.of_note(ids[1])} >= {"jon", "paris"}


def test_first_and_last_seen_span_the_notes_event_times(memory: AgenticMemory) -> None:
    may, june = datetime(2023, 5, 8, tzinfo=timezone.utc), datetime(2023, 6, 9, tzinfo=timezone.utc)
    memory.add("Gina: I visited Rome.", event_time=june)
    memory.add("Jon: Rome was hot.", event_time=may)
    rome = memory.entities.get("Rome")
    assert (rome.first_seen, rome.last_seen) == (may, june)


def test_deleting_a_note_counts_its_entities_down_and_drops_orphans(memory: AgenticMemory) -> None:
    first = memory.add("Gina: My cat Luna sleeps all day.")
    second = memory.add("Jon: I fed Gina's cat, Luna, this morning.")
    assert _entities(memory)["luna"] == ("pet", 2)
    memory.delete(second.id)
    found = _entities(memory)
    assert found["luna"] == ("pet", 1) and found["gina"] == ("person", 1)
    assert "jon" not in found  # only the deleted note mentioned him
    memory.delete(first.id)
    assert _entities(memory) == {}


def test_profile_lists_the_notes_in_time_order_and_related_entities(memory: AgenticMemory) -> None:
    later = memory.add("Gina: Luna chased a mouse.", event_time="2023-06-01T10:00:00+00:00")
    earlier = memory.add("Gina: I adopted Luna from the shelter.", event_time="2023-05-01T10:00:00+00:00")
    profile = memory.entities.profile("luna")
    assert [n.id for n in profile.notes] == [earlier.id, later.id]
    related = {e.key: count for e, count in profile.related}
    assert related == {"gina": 2}  # the shelter, a topic named once, is not shown
    assert profile.to_dict()["entity"]["key"] == "luna"


def test_entities_stay_in_their_tenant(memory: AgenticMemory, open_memory) -> None:
    memory.add("Gina: Tokyo is my favourite city.")
    other = open_memory(memory.tenant + "-other")
    try:
        assert other.entities.list() == []
        with pytest.raises(EntityNotFound):
            other.entities.get("Tokyo")
    finally:
        other.admin.delete_tenant(other.tenant)
        other.close()


def test_bad_names_are_refused_and_unknown_ones_not_found(memory: AgenticMemory) -> None:
    with pytest.raises(EntityNotFound):
        memory.entities.get("nobody here")
    with pytest.raises(InvalidInput):
        memory.entities.get("bad\x00name")
    with pytest.raises(InvalidInput):
        memory.entities.list(limit=-1)


# -- store-free ---------------------------------------------------------------------------------------


@pytest.mark.embedded
@pytest.mark.parametrize(("name", "kind", "key"), [
    ("Melanie's", "person", "melanie"), ("Melanie’s", "person", "melanie"), ("Dr. Jones", "person", "jones"),
    ("the Kids", "thing", "kid"), ("My pottery classes", "thing", "pottery class"), ("Berries", "thing", "berry"),
    ("boxes", "thing", "box"), ("glass", "thing", "glass"), ("Paris", "place", "paris"), ("  ", "thing", ""),
])
def test_entity_keys(name: str, kind: str, key: str) -> None:
    assert entity_key(name, kind=kind) == key


@pytest.mark.embedded
def test_singular_leaves_short_and_non_plural_words() -> None:
    assert [singular(w) for w in ("bus", "cats", "its", "analysis", "stories")] == ["bus", "cat", "its", "analysis", "story"]


@pytest.mark.embedded
def test_the_rule_extractor_finds_names_titles_and_nouns() -> None:
    found = {m.key: m.kind for m in RuleExtractor().mentions(['I read "Charlotte\'s Web" with Jon in Boston.'])[0]}
    assert found == {"charlotte web": "work", "jon": "person", "boston": "place"}  # "charlotte": inside the title


@pytest.mark.embedded
def test_a_note_mentions_its_speaker_without_an_extractor() -> None:
    notes = [NoteInput("[1:56 pm on 8 May, 2023] Gina: hello", speaker="Gina")]
    mentions = note_mentions(notes, extract(None, notes))[0]
    assert [(m.key, m.kind) for m in mentions] == [("gina", "person")]


@pytest.mark.embedded
def test_the_rules_are_the_default_and_spacy_serves_when_asked() -> None:
    extractor = default_extractor("auto")
    assert extractor is not None and extractor.name == "rules" and default_extractor("off") is None
    if model_path() is None:
        pytest.skip("spaCy's model is not installed here (scripts/setup.sh installs it)")
    asked = default_extractor("spacy")
    assert asked is not None and asked.name == "spacy"


@pytest.mark.embedded
def test_spacy_finds_names_in_a_batch_and_takes_no_opening_word_for_one() -> None:
    if model_path() is None:
        pytest.skip("spaCy's model is not installed here (scripts/setup.sh installs it)")
    extractor = default_extractor("spacy")
    assert extractor is not None
    texts = ["Yeah, awesome! Glad to be part of it.", "I flew to Paris with Melanie last May.",
             "Paris was lovely in the spring.", "we loved the pottery class"]
    found = [{(m.key, m.kind) for m in mentions} for mentions in extractor.mentions(texts)]
    assert not {kind for _, kind in found[0]} - {"topic"}  # the whole pipeline took "Glad" for a person
    assert {("paris", "place"), ("melanie", "person")} <= found[1]
    assert ("paris", "place") in found[2]  # a name that opens its sentence is still a proper noun
    assert ("pottery class", "topic") in found[3]


def test_a_speaker_is_a_person_whatever_the_extractor_said_first(memory: AgenticMemory) -> None:
    memory.add("Alice adopted a beagle named Max.")  # the small model may take "Alice" here for an organisation
    memory.add("Alice: Max sleeps a lot.", speaker="Alice")
    assert memory.entities.get("Alice").kind == "person"


def test_with_an_llm_the_analysis_names_the_entities(memory: AgenticMemory, settings) -> None:
    import json
    from dataclasses import replace as with_

    from amem_graph.bench.scripted_llm import Answer, ScriptedLLM
    from amem_graph.settings import LLMSettings

    with ScriptedLLM() as llm:
        llm_settings = with_(settings, llm=LLMSettings(background=False, base_url=llm.base_url, api_key="test", model="scripted"))
        store = memory._store if memory.admin.kind == "embedded" else None
        with AgenticMemory(llm_settings, tenant=memory.tenant, store=store) as smart:
            llm.script(Answer(json.dumps({
                "keywords": ["paris"], "context": "Gina liked Paris.", "tags": ["travel"], "links": [],
                "neighbour_updates": [], "entities": ["Paris", "the Louvre", "Mona Lisa"],
            })))
            note = smart.add("Gina: Paris and the Louvre were lovely, and so was the Mona Lisa.", speaker="Gina")
            assert note.analysis == "llm" and len(llm.requests) == 1
    found = {e.key: (e.kind, c) for e, c in memory.entities.of_note(note.id)}
    assert found["gina"] == ("person", 1.0) and found["paris"] == ("place", 0.9)  # the extractor's kind wins
    assert "mona lisa" in found and "louvre" in found


def test_backfill_finds_the_entities_again_and_keeps_the_merges(memory: AgenticMemory) -> None:
    from amem_graph.store.base import MentionWrite

    memory.add("Gina: Luna the cat sleeps all day.", speaker="Gina")
    before = _entities(memory)
    assert memory.entities.backfill() == 0 and _entities(memory) == before  # read by today's extractor already
    with pytest.raises(InvalidInput):
        memory.entities.backfill(batch=0)
    # A note as an older release wrote it: no record of an extractor, and what the rules of then found.
    checked = validation.note_input(NoteInput("Jon: Rome was hot, my photo of Lunita shows it.", speaker="Jon"), 1000)
    old = note_row(checked, memory.embedder.embed_one("Rome"), "none", None, memory.embedder.dimension)
    now = validation.now()

    def then(tx):  # noqa: ANN001, ANN202
        [(note_id, _)] = tx.create_notes([old])
        tx.mention([MentionWrite(note_id, "jon", "Jon", "person", 1.0, now, sure=True),
                    MentionWrite(note_id, "rome", "Rome", "person", 0.5, now),  # the old rules: a capital, a person
                    MentionWrite(note_id, "photo", "photo", "thing", 0.5, now),  # and every content word a thing
                    MentionWrite(note_id, "lunita", "Lunita", "person", 0.5, now)])

    memory._store.write(memory.tenant, then)
    memory.entities.merge("Lunita", "Luna", reason="nickname")
    assert _entities(memory)["photo"] == ("thing", 1)
    assert memory.entities.backfill(batch=1) == 1  # the old note only
    found = _entities(memory)
    assert "photo" not in found and found["rome"] == ("place", 1) and found["jon"] == ("person", 1)
    assert memory.entities.get("Lunita").key == "luna"  # the merge stays, though no note names Lunita now
    assert memory.entities.backfill() == 0 and _entities(memory) == found  # nothing read twice
    memory.delete(memory.list()[0].id)
    memory.delete(memory.list()[0].id)
    assert _entities(memory) == {}  # an entity kept for a merge, and mentioned by no note, is not listed


def test_a_backfill_stopped_part_way_goes_on_where_it_stopped(memory: AgenticMemory) -> None:
    from amem_graph.entities.lookup import Entities

    dimension = memory.embedder.dimension
    olds = [note_row(validation.note_input(NoteInput(f"Jon: day {i} in Rome."), 1000), memory.embedder.embed_one("Rome"),
                     "none", None, dimension) for i in range(3)]  # as a release before schema 6 wrote them
    memory._store.write(memory.tenant, lambda tx: tx.create_notes(olds))
    calls = []

    class Killed(RuleExtractor):
        def mentions(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            if len(calls) == 2:
                raise RuntimeError("killed")
            return super().mentions(texts)

    with pytest.raises(RuntimeError, match="killed"):
        Entities(memory._store, memory.tenant, Killed()).backfill(batch=1)
    assert _entities(memory)["rome"] == ("place", 1)  # the first batch committed
    assert memory.entities.backfill(batch=1) == 2  # and is not read again
    assert _entities(memory)["rome"] == ("place", 3) and memory.entities.backfill() == 0


def test_a_long_repetitive_note_makes_no_oversized_entity(memory: AgenticMemory) -> None:
    memory.add("word " * 3000 + "and a pottery class")
    assert all(len(e.key) <= 100 for e in memory.entities.list(limit=1000))
    assert memory.entities.get("pottery class").mentions == 1


@pytest.mark.embedded
def test_keys_longer_than_a_name_are_refused() -> None:
    assert entity_key("x" * 101) == "" and entity_key("x" * 100, kind="person") == "x" * 100


def test_a_merge_makes_two_names_one_entity_and_unmerge_undoes_it_exactly(memory: AgenticMemory) -> None:
    memory.add("Caroline: I love my ice-cream maker.", speaker="Caroline")
    memory.add("Melanie: My friend Caroline Hill said she was tired.", speaker="Melanie")
    before = memory.entities.list(limit=1000)
    full = memory.entities.get("Caroline Hill")
    assert full.kind == "person" and full.mentions == 1
    made = memory.entities.merge("Caroline Hill", "caroline", reason="her surname")
    assert (made.alias, made.into, made.reason, made.by) == ("caroline hill", "caroline", "her surname", "user")
    assert made.at is not None
    caroline = memory.entities.get("Caroline Hill")  # an alias reads as the entity it was merged into
    assert caroline.key == "caroline" and caroline.merged == ("caroline hill",)
    assert "caroline hill" not in {e.key for e in memory.entities.list(limit=1000)}
    profile = memory.entities.profile("Caroline")
    assert len(profile.notes) == 2  # its own note and the alias's
    assert "caroline hill" not in {e.key for e, _ in profile.related}
    tired = profile.notes[1].id
    assert "caroline" in {e.key for e, _ in memory.entities.of_note(tired)}
    assert [m.alias for m in memory.entities.merges("caroline")] == ["caroline hill"]
    restored = memory.entities.unmerge("Caroline Hill")
    assert restored.key == "caroline hill" and restored.alias_of is None and restored.mentions == 1
    assert memory.entities.list(limit=1000) == before
    assert len(memory.entities.profile("Caroline").notes) == 1 and memory.entities.merges("caroline") == []


def test_merges_stay_one_level_deep_and_bad_ones_change_nothing(memory: AgenticMemory) -> None:
    memory.add("Jon: Paris, Rome and Berlin this summer.", speaker="Jon")
    with pytest.raises(InvalidInput, match="one entity already"):
        memory.entities.merge("Paris", "paris")
    with pytest.raises(EntityNotFound):
        memory.entities.merge("Atlantis", "Paris")
    with pytest.raises(InvalidInput):
        memory.entities.merge("Paris", "Rome", reason="x" * 501)
    with pytest.raises(InvalidInput, match="not merged"):
        memory.entities.unmerge("Paris")
    memory.entities.merge("Rome", "Paris")
    memory.entities.merge("Berlin", "Rome")  # into what Rome was merged into: Paris
    assert memory.entities.get("Paris").merged == ("berlin", "rome")
    with pytest.raises(InvalidInput, match="already"):
        memory.entities.merge("Rome", "Jon")
    with pytest.raises(InvalidInput, match="merged into it"):
        memory.entities.merge("Paris", "Jon")
    assert memory.entities.get("Jon").merged == () and memory.entities.get("Rome").key == "paris"


def test_search_anchors_find_an_aliases_notes_by_either_name(memory: AgenticMemory) -> None:
    from amem_graph.models import NO_FILTER

    first = memory.add("Gina: Luna chased a moth all night.", speaker="Gina")
    second = memory.add("Gina: At the vet they call my cat Lunita.", speaker="Gina")
    memory.entities.merge("Lunita", "Luna")
    for key in ("luna", "lunita"):
        found = memory._store.read(memory.tenant, lambda tx, k=key: tx.mentioning([k, "luna"], 10, filters=NO_FILTER))
        assert {e.key for e, _, _ in found} == {"luna"}  # each entity once, as the one merged into
        assert {n.id for _, n, _ in found} == {first.id, second.id}


def test_suggested_merges_by_rule_and_by_llm(memory: AgenticMemory, settings) -> None:
    from dataclasses import replace as with_

    from amem_graph.bench.scripted_llm import ScriptedLLM
    from amem_graph.settings import LLMSettings

    memory.add("Caroline: We had ice cream again, the best icecream.", speaker="Caroline")
    memory.add("Melanie: My friend Caroline Hill said she was tired.", speaker="Melanie")
    memory.add("Melanie: Melanie Stone is my stage name, said Melanie Stone.", speaker="Melanie")
    memory.add("Jon: Jon Lee and Jon Park both came.", speaker="Jon")  # two full names: no clear first name
    spellings = {("ice cream", "icecream"), ("icecream", "ice cream")}
    found = {(s.alias.key, s.into.key) for s in memory.entities.suggest()}
    assert {("caroline hill", "caroline"), ("melanie stone", "melanie")} <= found
    assert len(found & spellings) == 1 and len(found) == 3
    with ScriptedLLM() as llm:
        llm_settings = with_(settings, llm=LLMSettings(background=False, base_url=llm.base_url, api_key="test", model="scripted"))
        store = memory._store if memory.admin.kind == "embedded" else None
        with AgenticMemory(llm_settings, tenant=memory.tenant, store=store) as smart:
            made = smart.entities.merge_suggested()
            asked = [r for r in llm.requests if r["messages"][-1]["content"].startswith("PAIRS:")]
    assert len(asked) == 1  # every pair in one request
    assert "said she was tired" in asked[0]["messages"][-1]["content"]  # each name with a line that mentions it
    # The model decides: it confirmed the names and left out the spellings (the rules alone would merge them).
    assert {(m.alias, m.into, m.by) for m in made} == {("caroline hill", "caroline", "llm"), ("melanie stone", "melanie", "llm")}
    assert {(s.alias.key, s.into.key) for s in memory.entities.suggest()} == found & spellings
    [by_rule] = memory.entities.merge_suggested()
    assert by_rule.by == "rules" and (by_rule.alias, by_rule.into) in spellings and "one spelling" in by_rule.reason
    assert memory.entities.suggest() == []


def test_merges_survive_export_and_import(memory: AgenticMemory) -> None:
    memory.add("Gina: Luna and Lunita are the same cat.", speaker="Gina")
    memory.entities.merge("Lunita", "Luna", reason="nickname")
    _, records = memory.admin.export()
    exported = list(records)
    memory.admin.delete_tenant()
    memory.admin.import_([r for r in exported if r["kind"] == "node"], [r for r in exported if r["kind"] == "relationship"])
    assert memory.entities.get("Lunita").key == "luna"
    assert [(m.alias, m.reason, m.by) for m in memory.entities.merges("Luna")] == [("lunita", "nickname", "user")]
