"""Long notes: passages with vectors of their own, so that any part of a note is found, on both stores; and
imports that leave out what they cannot store when asked to."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory
from amem_graph.cli import app
from amem_graph.embedding.passages import spans
from amem_graph.errors import InvalidInput
from amem_graph.models import NO_FILTER, NoteInput
from amem_graph.store import neo4j_notes

STORES = ("neo4j", "embedded")
FACT = "Finally, the launch code for the orbital rocket is PURPLE-ELEPHANT-42."
QUESTION = "What is the launch code for the orbital rocket?"


def long_note(chars: int = 15_000) -> str:
    """Weather talk, then one fact at the very end: the model's window sees only the weather."""
    filler, number = [], 0
    while sum(map(len, filler)) < chars - len(FACT):
        filler.append(f"Paragraph {number} is about the clouds over the valley, the rain and the wind. ")
        number += 1
    return "".join(filler) + FACT


def passages(memory: AgenticMemory) -> int:
    return memory.stats(tenant=memory.tenant).labels.get("Passage", 0)


def test_windows_cover_the_text_after_the_first_and_overlap() -> None:
    offsets = [(i * 2, i * 2 + 1) for i in range(10)]  # ten one-character tokens, a space apart
    assert spans(offsets[:4], 4) == []
    assert spans(offsets, 4) == [(6, 13), (12, 19)]  # tokens 3-6 and 6-9 (stride 3): the last ends with the text
    assert spans(offsets, 4, overlap=0.0) == [(8, 15), (16, 19)]
    with pytest.raises(ValueError):
        spans(offsets, 0)


def test_a_fact_at_the_end_of_a_long_note_is_found_by_its_passage(memory: AgenticMemory) -> None:
    text = long_note()
    note = memory.add(text, source="long")
    memory.add_many([NoteInput(f"Note {i}: we cooked pasta with tomato sauce and basil.") for i in range(12)])
    for mode in ("vector", "hybrid"):
        hits = memory.search(QUESTION, k=3, mode=mode)
        found = [hit for hit in hits if hit.note.id == note.id]
        assert found, f"{mode}: the long note is not among the first three"
        start, end = found[0].passage or (0, 0)
        assert FACT in text[start:end] and end == len(text)
        assert tuple(found[0].to_dict()["passage"]) == (start, end)
    assert passages(memory) >= 10  # a 15,000-character note of short words: many windows


@pytest.mark.neo4j_only
def test_many_passages_are_found_through_their_vector_index(memory: AgenticMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tenant with more passages than the exact scan takes: the shared index, over-fetched by tenant."""
    monkeypatch.setattr(neo4j_notes, "EXACT_PASSAGES", 0)
    note = memory.add(long_note(), source="long")
    hits = memory.search(QUESTION, k=3, mode="vector")
    assert [hit for hit in hits if hit.note.id == note.id][0].passage is not None


@pytest.mark.parametrize("exact", [True, False], ids=["scan", "index"])
def test_a_store_gives_each_long_note_once_with_its_best_passage(
    memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory], monkeypatch: pytest.MonkeyPatch, exact: bool,
) -> None:
    """Many windows of one note near the query are one candidate: k passages' worth of notes, not one note k
    times (and on Neo4j, not its content sent once per window)."""
    if not exact:
        monkeypatch.setattr(neo4j_notes, "EXACT_PASSAGES", 0)  # Neo4j: the index (the embedded store has one path)
    kayak = memory.add("Our kayak is bright orange and we paddle it on the lake. " * 150, source="kayak")
    other = memory.add("Paragraph about rain over the valley. " * 200 + FACT, source="rocket")
    with open_memory(f"{memory.tenant}-n") as neighbour:  # a crowded index: the query's passages are mostly another's
        try:
            neighbour.add_many([NoteInput(f"The orange kayak number {i} paddles on the lake. " * 120) for i in range(6)])
            vector = memory.embedder.embed_one("What colour is the kayak?")
            found = memory._store.read(memory.tenant, lambda tx: tx.search(5, vector=vector, passages=True, filters=NO_FILTER))
        finally:
            memory.admin.delete_tenant(neighbour.tenant)
    ids = [note.id for note, *_ in found]
    assert ids[0] == kayak.id and len(ids) == len(set(ids)) == 2 and other.id in ids
    scores = [score for _, score, *_ in found]
    assert scores == sorted(scores, reverse=True)


def test_short_notes_have_no_passages_and_a_hit_names_none(memory: AgenticMemory) -> None:
    memory.add("Marguerite baked lemon cakes for the volunteers.")
    assert passages(memory) == 0
    assert memory.search("lemon cakes", k=1)[0].passage is None


def test_passages_follow_the_content_bulk_update_and_delete(memory: AgenticMemory) -> None:
    [note_id] = memory.add_many([NoteInput(long_note(6_000), source="bulk")])
    made = passages(memory)
    assert made >= 3
    assert memory.search(QUESTION, k=1, mode="vector")[0].note.id == note_id
    memory.update(note_id, content="Now a short note about gardening.")
    assert passages(memory) == 0
    memory.update(note_id, content=long_note(6_000))
    assert passages(memory) == made
    memory.delete(note_id)
    assert passages(memory) == 0


def test_an_export_carries_the_passages(memory: AgenticMemory) -> None:
    memory.add(long_note(6_000), source="exported")
    made = passages(memory)
    header, records = memory.admin.export()
    nodes, rels = [], []
    for record in records:
        (nodes if record["kind"] == "node" else rels).append(record)
    memory.admin.delete_tenant(memory.tenant)
    memory.admin.import_(nodes, rels)
    assert passages(memory) == made > 0
    assert memory.search(QUESTION, k=1, mode="vector")[0].passage is not None
    assert memory.admin.check().sound


def test_an_import_with_an_item_over_the_limit_stores_the_rest_when_asked(memory: AgenticMemory) -> None:
    limit = memory.settings.max_content_chars
    items = [NoteInput("first"), NoteInput("x" * (limit + 1)), NoteInput("third"), NoteInput("\x00bad")]
    with pytest.raises(InvalidInput, match=f"item 1: content has {limit + 1} characters"):
        memory.add_many(items)
    assert memory.stats(tenant=memory.tenant).labels.get("Note", 0) == 0
    left: list[tuple[int, str]] = []
    ids = memory.add_many(items, on_invalid=lambda position, err: left.append((position, str(err))))
    assert [memory.get(note_id).content for note_id in ids] == ["first", "third"]
    assert [position for position, _ in left] == [1, 3]
    assert "characters" in left[0][1] and "control character" in left[1][1]
    assert sorted(n.content for n in memory.list()) == ["first", "third"]


def test_cli_ingest_skips_invalid_lines_when_asked(memory: AgenticMemory, cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join([
        json.dumps({"content": "the first note"}),
        "{not json",
        json.dumps({"content": "x" * (memory.settings.max_content_chars + 1)}),
        json.dumps({"content": "the last note", "colour": "red"}),
        json.dumps({"content": "the fourth note"}),
    ]) + "\n")
    runner = CliRunner()
    args = ["ingest", str(path), "--tenant", memory.tenant, "--bulk", "--json"]
    refused = runner.invoke(app, args, env=cli_env)
    assert refused.exit_code != 0 and "line 2 is not JSON" in refused.output
    done = runner.invoke(app, [*args, "--skip-invalid"], env=cli_env)
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout[done.stdout.index("{"):])
    assert report["added"] == 2 and len(report["invalid"]) == 3
    assert [r.split(":")[0].split(" is")[0] for r in report["invalid"]] == ["line 2", "line 3", "line 4"]
    assert sorted(n.content for n in memory.list()) == ["the first note", "the fourth note"]


def test_a_note_longer_than_the_window_is_embedded_once(memory: AgenticMemory, settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a composite appends to a long note (context, keywords, tags) lies past the model's window: the note's
    vector is its content's, embedded once for the candidates and the note; a long neighbour whose tags grow
    keeps its vector."""
    from amem_graph.bench.scripted_llm import ScriptedLLM
    from amem_graph.embedding import composite_text, cosine
    from amem_graph.llm import LLMAnalyser, LLMClient
    from amem_graph.settings import LLMSettings

    neighbour = memory.add("Bob: " + long_note(3_000).replace(FACT, "The valley floods every spring."))
    before = memory.get(neighbour.id, with_embedding=True)
    embedded: list[str] = []
    real_embed = memory.embedder.embed

    def counted(texts):
        embedded.extend(texts)
        return real_embed(texts)

    content = "Alice: " + long_note(3_000)
    with ScriptedLLM() as llm:  # a model that links the candidates sharing a word, and tags the first of them
        client = LLMClient(LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0))
        with client, AgenticMemory(settings, tenant=memory.tenant, store=memory._store, embedder=memory.embedder,
                                   analyser=LLMAnalyser(client)) as analysed:
            monkeypatch.setattr(memory.embedder, "embed", counted)
            note = analysed.add(content, background=False)
            monkeypatch.undo()
    assert embedded.count(content) == 1  # the candidates' query and the note's vector, one embedding
    assert not [t for t in embedded if t.startswith(content) and t != content]  # no composite of it
    assert not [t for t in embedded if t.startswith(neighbour.content)]  # the long neighbour is not embedded again
    stored = memory.get(note.id, with_embedding=True)
    composite = memory.embedder.embed_one(composite_text(content, stored.context, stored.keywords, stored.tags))
    assert cosine(stored.embedding, composite) > 0.9999  # the composite's vector all the same
    after = memory.get(neighbour.id, with_embedding=True)
    assert set(after.tags) > set(before.tags) and after.version > before.version  # the neighbour evolved,
    assert cosine(after.embedding, before.embedding) == pytest.approx(1.0)  # its vector kept
    assert memory.embedder.fills_window(content) and not memory.embedder.fills_window("Alice: a short note.")
