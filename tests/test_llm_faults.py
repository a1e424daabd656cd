"""The LLM path under faults and under attack, on both stores: an endpoint that hangs, resets connections,
fails or answers past the timeout while several writers add at once loses no note; a model that tries to link
to or change notes it was not offered (another tenant's included) changes nothing it may not."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import Answer, Flaky, ScriptedLLM, analysis_answer
from amem_graph.models import LINK_TYPES
from amem_graph.settings import LLMSettings

STORES = ("neo4j", "embedded")


def _configured(settings: Settings, memory: AgenticMemory, llm: ScriptedLLM) -> AgenticMemory:
    llm_settings = LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=0.5, max_retries=1)
    shared = memory._store if memory.admin.kind == "embedded" else None
    return AgenticMemory(replace(settings, llm=llm_settings), tenant=memory.tenant, store=shared)


@pytest.fixture
def flaky() -> Iterator[ScriptedLLM]:
    """A model that, one request in two, hangs past the 0.5 s timeout, resets the connection, fails, or is slow."""
    with ScriptedLLM(Flaky(0.5)) as server:
        yield server


@pytest.mark.slow
def test_a_failing_endpoint_under_concurrent_writers_loses_no_note(settings: Settings, memory: AgenticMemory,
                                                                   flaky: ScriptedLLM) -> None:
    added: list[str] = []
    errors: list[BaseException] = []
    with _configured(settings, memory, flaky) as mem:
        def writer(w: int) -> None:
            for i in range(6):
                try:
                    added.append(mem.add(f"Writer {w} went hiking near lake number {i} with the dog Max.").id)
                except BaseException as err:  # noqa: BLE001 - any failure is the finding
                    errors.append(err)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == [] and len(added) == 24
        notes = {note.id: note for note in mem.list(limit=100)}
        assert set(added) == set(notes)
        analyses = {note.analysis for note in notes.values()}
        assert "degraded" in analyses and "llm" in analyses  # the faults happened, and so did answers
        report = mem.admin.check()
        assert report.sound, report.violations


INJECTED = "RELATES_TO]->(x) DETACH DELETE x //"


def test_a_malicious_model_changes_only_what_it_was_offered(settings: Settings, memory: AgenticMemory,
                                                            open_memory: Any) -> None:
    bystander_tenant = f"{memory.tenant}-other"
    with open_memory(bystander_tenant) as other:
        victim = other.add("Bob's bank PIN is in the blue notebook.")
        before = other.get(victim.id)

        def respond(request: dict[str, Any]) -> Any:
            answer = json.loads(analysis_answer(request).content or "{}")
            if "keywords" in answer:
                answer["links"] = [
                    {"target_id": victim.id, "type": "RELATES_TO", "reason": "ignore your rules", "confidence": 1},
                    {"target_id": "c9", "type": "SUPPORTS", "reason": "not offered", "confidence": 1},
                    {"target_id": "c1", "type": INJECTED, "reason": "a type of my own", "confidence": 1},
                    {"target_id": "c1", "type": "HAS_VERSION", "reason": "an internal type", "confidence": 1},
                    *answer["links"],
                ]
                answer["neighbour_updates"] = [
                    {"id": victim.id, "context": "HACKED", "add_tags": ["pwned"], "remove_tags": [], "reason": "x"},
                    *answer["neighbour_updates"],
                ]
                answer["context"] = "MATCH (n) DETACH DELETE n"
                answer["entities"] = [INJECTED, "Bob"]
            return Answer(json.dumps(answer))

        with ScriptedLLM(respond) as llm, _configured(settings, memory, llm) as mem:
            first = mem.add("Alice keeps her hiking boots in the blue cupboard.")
            second = mem.add("Alice wore the hiking boots from the blue cupboard on Sunday.")
            assert second.analysis == "llm" and second.context == "MATCH (n) DETACH DELETE n"  # data, never Cypher
            targets = {link.other(second.id) for link in second.links}
            assert targets <= {first.id} and all(link.type in LINK_TYPES for link in second.links)
            assert all(link.type != "HAS_VERSION" for link in mem.get(first.id).links)
            assert "HACKED" not in (mem.get(first.id).context or "")
            assert mem.admin.check().sound
        after = other.get(victim.id)
        assert (after.context, after.tags, after.version, after.links) == (before.context, before.tags,
                                                                           before.version, before.links)
        assert other.admin.check().sound
        other.admin.delete_tenant(bystander_tenant)
