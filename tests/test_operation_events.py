"""Every public memory operation logs one `memory_op` event (op, tenant, duration, outcome, what it did, LLM
tokens), never the content, and tells the observers registered with `log.observe`; on both stores."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

import pytest

from amem_graph import AgenticMemory, NoteNotFound, Settings
from amem_graph.bench.scripted_llm import ScriptedLLM
from amem_graph.core.log import observe
from amem_graph.settings import LLMSettings

STORES = ("neo4j", "embedded")
SECRET = "Alice's locker code is 4711 and she keeps it in the blue notebook."


def events(caplog: pytest.LogCaptureFixture) -> list[dict]:
    return [json.loads(r.getMessage()) for r in caplog.records
            if r.name == "amem_graph" and '"memory_op"' in r.getMessage()]


def test_each_operation_is_one_event_without_its_content(memory: AgenticMemory, caplog: pytest.LogCaptureFixture
                                                        ) -> None:
    seen: list[tuple[str, str | None]] = []
    stop = observe(lambda op, seconds, error: seen.append((op.op, type(error).__name__ if error else None)))
    try:
        with caplog.at_level(logging.INFO, logger="amem_graph"):
            first = memory.add(SECRET)
            memory.add("Alice opened her locker with the code from the blue notebook.")
            memory.context("Where does Alice keep her locker code?", k=3)  # a search inside: one event
            with pytest.raises(NoteNotFound):
                memory.get("no-such-note")
            memory.history(first.id)
    finally:
        stop()
    logged = events(caplog)
    assert [e["op"] for e in logged] == ["add", "add", "context", "get", "history"]
    assert seen == [("add", None), ("add", None), ("context", None), ("get", "NoteNotFound"), ("history", None)]
    assert all(e["tenant"] == memory.tenant and e["duration_ms"] >= 0 for e in logged)
    assert logged[1]["evolved"] >= 0 and logged[1]["links"] >= 1 and logged[1]["created"] is True
    assert logged[2]["hits"] >= 1 and logged[3]["outcome"] == "NoteNotFound"
    assert all(e["tokens"] == 0 for e in logged)  # the heuristic analyser spends none
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "4711" not in text and "locker" not in text


def test_an_operation_counts_the_tokens_its_llm_calls_spent(settings: Settings, memory: AgenticMemory,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedLLM() as llm:
        llm_settings = LLMSettings(background=False, base_url=llm.base_url, model="scripted", backoff_s=0.0)
        shared = memory._store if memory.admin.kind == "embedded" else None
        with AgenticMemory(replace(settings, llm=llm_settings), tenant=memory.tenant, store=shared) as mem:
            with caplog.at_level(logging.INFO, logger="amem_graph"):
                mem.add(SECRET)
            usage = mem.llm.usage()["analyse_note"]
    (added,) = events(caplog)
    assert added["llm_calls"] == 1 and added["analysis"] == "llm"
    assert added["tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
