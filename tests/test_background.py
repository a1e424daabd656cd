"""Writes that do not wait for the model: the note is stored with the offline analysis, marked pending, and a
worker applies the model's analysis later, once, from a queue in the store that a kill does not lose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import Fault, ScriptedLLM, slow_answer
from amem_graph.errors import LLMNotConfigured
from amem_graph.settings import LLMSettings

STORES = ("neo4j", "embedded")
pytestmark = pytest.mark.usefixtures("no_queue_elsewhere")
TEXTS = (
    "Alice adopted a beagle named Max in May.",
    "Max the beagle loves the park near Alice's flat.",
    "Bob plays the violin in a youth orchestra.",
    "Alice walks Max in the park every morning.",
    "Bob's orchestra tours Vienna in the autumn.",
)


@pytest.fixture
def slow_llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(slow_answer(0.3)) as server:
        yield server


def queued(settings: Settings, llm: ScriptedLLM, **llm_settings: object) -> Settings:
    return replace(settings, llm=LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=5.0,
                                             max_retries=1, **llm_settings))  # type: ignore[arg-type]


def opened(memory: AgenticMemory, settings: Settings) -> AgenticMemory:
    """Another memory of `memory`'s tenant and store with `settings` (on Neo4j, a connection of its own)."""
    shared = memory._store if memory.admin.kind == "embedded" else None
    return AgenticMemory(settings, tenant=memory.tenant, store=shared)


def calls_per_note(llm: ScriptedLLM) -> Counter[str]:
    return Counter(r["messages"][-1]["content"].splitlines()[0] for r in llm.requests)


def test_an_add_returns_before_the_model_and_the_worker_applies_its_analysis_once(
    memory: AgenticMemory, settings: Settings, slow_llm: ScriptedLLM,
) -> None:
    with opened(memory, queued(settings, slow_llm)) as mem:
        notes = [mem.add(text) for text in TEXTS]
        assert {n.analysis for n in notes} == {"pending"}  # the model answers in 0.3 s: none has come back yet
        assert all(n.keywords for n in notes)  # the offline analysis is there already
        assert mem.search("beagle park", k=5)[0].note.id in {notes[0].id, notes[1].id, notes[3].id}
        assert mem.pending() >= 1
        assert mem.wait(60)
        assert mem.pending() == 0
        analysed = [mem.get(n.id) for n in notes]
    assert {n.analysis for n in analysed} == {"llm"}
    assert all(n.context.startswith("A note about") for n in analysed)
    assert any(link.reason.startswith("both mention") for n in analysed for link in n.links)
    assert len(calls_per_note(slow_llm)) == len(TEXTS)
    # The note as it was before the model's analysis is a version: what the memory held until then.
    assert any(v.reason == "analysis" and v.analysis == "pending" for v in memory.history(notes[0].id).versions)


def test_inline_when_asked(memory: AgenticMemory, settings: Settings, llm: ScriptedLLM) -> None:
    with opened(memory, queued(settings, llm)) as mem:
        assert mem.add(TEXTS[0], background=False).analysis == "llm"
    with opened(memory, queued(settings, llm, background=False)) as mem:
        assert mem.add(TEXTS[1]).analysis == "llm"
        assert mem.add(TEXTS[2], background=True).analysis == "pending"
        assert mem.wait(30)


def test_the_users_edit_of_a_pending_note_wins_over_the_late_analysis(
    memory: AgenticMemory, settings: Settings, llm: ScriptedLLM,
) -> None:
    with opened(memory, queued(settings, llm, worker="off")) as mem:
        edited = mem.add(TEXTS[0])
        given = mem.add(TEXTS[1], context="Said by Alice's neighbour.")
        gone = mem.add(TEXTS[2])
        mem.update(edited.id, tags=["dogs"])
        mem.delete(gone.id)
        assert not mem.wait(0.5)  # no worker in this process: the queue waits
    with opened(memory, queued(settings, llm)) as mem:  # a worker: what the first left queued is analysed
        assert mem.wait(30)
        edited, given = mem.get(edited.id), mem.get(given.id)
    assert edited.analysis == given.analysis == "llm"
    # The user's tags stay (a neighbour's evolution may add one, as it may to any note); the model's own for this
    # note ("Alice", "adopted") are not put in their place. Its context, which the user did not set, is the model's.
    assert edited.tags[0] == "dogs" and not {"alice", "adopted"} & {t.lower() for t in edited.tags}
    assert edited.context.startswith("A note about")
    assert given.context == "Said by Alice's neighbour." and given.tags
    assert len(calls_per_note(llm)) == 2  # the deleted note's analysis was dropped, never asked for


def test_a_failed_call_keeps_the_offline_analysis_marked_degraded(
    memory: AgenticMemory, settings: Settings,
) -> None:
    with ScriptedLLM() as server:
        server.script(*[Fault(500)] * 4)
        with opened(memory, queued(settings, server)) as mem:
            note = mem.add(TEXTS[0])
            assert mem.wait(30)
            after = mem.get(note.id)
    assert after.analysis == "degraded"
    assert (after.keywords, after.tags, after.version) == (note.keywords, note.tags, note.version)


def test_add_many_queues_the_analysis_and_the_worker_drains_it(
    memory: AgenticMemory, settings: Settings, llm: ScriptedLLM,
) -> None:
    with pytest.raises(LLMNotConfigured):
        memory.add_many(TEXTS, analyse=True)
    with opened(memory, queued(settings, llm, concurrency=3)) as mem:
        ids = mem.add_many(TEXTS, analyse=True)
        assert mem.wait(60)
        analysed = [mem.get(i) for i in ids]
    assert {n.analysis for n in analysed} == {"llm"}
    assert all(n.keywords and n.context for n in analysed)
    assert len(llm.requests) <= 1.1 * len(TEXTS) + 1
    assert llm.max_in_flight <= 3


def test_claims_are_fair_between_tenants_and_expire(memory: AgenticMemory, settings: Settings, llm: ScriptedLLM) -> None:
    store = memory._store
    other = f"{memory.tenant}-b"
    with opened(memory, queued(settings, llm, worker="off")) as mem:
        mem.add_many([f"Import row {i}: a line of the big import." for i in range(12)], analyse=True)
        late = mem.add("Bob's next note: the orchestra rehearses on Friday.", tenant=other)
        try:
            first = store.claim_analyses("worker-a", 3, 0.5)
            assert (other, late.id) in first  # the other tenant's one note does not wait behind the import
            second = store.claim_analyses("worker-b", 20, 60.0)
            assert not set(first) & set(second) and len(second) == 10
            assert store.claim_analyses("worker-c", 20, 60.0) == []  # every pending note is held
            time.sleep(0.6)  # worker-a died: its claims expire
            assert sorted(store.claim_analyses("worker-c", 20, 60.0)) == sorted(first)
            store.claim_analyses("worker-b", 0, 60.0, release=[i for _, i in second])  # handed back
            assert len(store.claim_analyses("worker-d", 20, 60.0)) == 10
            assert store.analysis_queue(memory.tenant)[0] == 12 and store.analysis_queue(other)[0] == 1
        finally:
            mem.admin.delete_tenant(other)


WORKER = """
import sys
from amem_graph import AgenticMemory
with AgenticMemory() as memory:
    memory.add_many([f"Worker test {sys.argv[1]} row {i}: notes about gardens and orchestras." for i in range(30)],
                    analyse=True)
"""


@pytest.mark.slow
def test_two_worker_processes_analyse_each_note_exactly_once(
    memory: AgenticMemory, settings: Settings, cli_env: dict[str, str], slow_llm: ScriptedLLM, store_kind: str,
) -> None:
    if store_kind == "embedded":
        pytest.skip("one process holds an embedded store at a time: its worker is a thread (test above)")
    env = {**os.environ, **cli_env, "AMEM_TENANT": memory.tenant, "AMEM_LLM_BASE_URL": slow_llm.base_url,
           "AMEM_LLM_MODEL": "scripted", "AMEM_LLM_WORKER": "off", "AMEM_LLM_CONCURRENCY": "3"}
    subprocess.run([sys.executable, "-c", WORKER, "x"], env=env, check=True, timeout=300)
    assert memory.pending() == 30
    workers = [subprocess.Popen([str(Path(sys.executable).with_name("amem-graph")), "worker", "--until-empty", "--json"],
                                env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [w.communicate(timeout=300)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers), outputs
    assert memory.pending() == 0
    per_note = calls_per_note(slow_llm)
    assert len(per_note) == 30 and max(per_note.values()) == 1, per_note
    applied = [json.loads(out)["applied"] for out in outputs]
    assert sum(applied) == 30 and min(applied) > 0, applied  # both worked, and no note was analysed twice
    assert {memory.get(n.id).analysis for n in memory.list(limit=50)} == {"llm"}


def test_an_analysis_two_workers_made_applies_once(
    memory: AgenticMemory, settings: Settings, slow_llm: ScriptedLLM,
) -> None:
    """A claim that expired under a slow worker lets a second one analyse the same note: the later write finds the
    note analysed already and applies nothing."""
    with opened(memory, queued(settings, slow_llm, worker="off")) as mem:
        note = mem.add(TEXTS[0])
        with ThreadPoolExecutor(2) as pool:
            outcomes = list(pool.map(lambda _: mem._evolver.analyse_pending(mem.tenant, note.id), range(2)))
        history = mem.history(note.id)
    assert sum(outcome is not None for outcome in outcomes) == 1
    assert len(slow_llm.requests) == 2  # both asked the model
    assert [v.reason for v in history.versions].count("analysis") == 1
    assert len([e for e in history.evolutions if e.trigger_note_id == note.id]) == 2  # the offline one, the model's
