"""The engine's warm-up: the hot path over a scratch tenant that is gone afterwards, without the configured LLM."""

from collections.abc import Callable

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import ScriptedLLM
from amem_graph.llm import LLMAnalyser, LLMClient
from amem_graph.maintenance import warmup
from amem_graph.settings import LLMSettings

STORES = ("neo4j", "embedded")


def test_warm_up_runs_every_call_once_and_leaves_no_trace(
    memory: AgenticMemory, settings: Settings, count_nodes: Callable[[str], int], monkeypatch: pytest.MonkeyPatch,
) -> None:
    scratch = f"{warmup.SCRATCH_PREFIX}{memory.tenant}"
    monkeypatch.setattr(warmup, "scratch_tenant", lambda: scratch)
    seen: list[str] = []
    real_round = warmup._round

    def counted(scratch_memory: AgenticMemory, n: int) -> None:
        seen.append(scratch_memory.tenant)
        real_round(scratch_memory, n)

    monkeypatch.setattr(warmup, "_round", counted)
    memory.add("Alice: my beagle Max is three today.")
    before = count_nodes(memory.tenant)
    with ScriptedLLM() as llm:
        client = LLMClient(LLMSettings(base_url=llm.base_url, model="scripted", backoff_s=0.0))
        with client, AgenticMemory(settings, tenant=memory.tenant, store=memory._store,
                                   analyser=LLMAnalyser(client)) as analysed:
            done = analysed.warm_up(0)  # one round, however short the time asked for
            assert client.usage() == {}  # the scratch notes were analysed offline: no call reached the model
    assert done.rounds == 1 and done.seconds > 0 and seen == [scratch]
    assert count_nodes(scratch) == 0 and scratch not in memory.admin.tenants()
    assert count_nodes(memory.tenant) == before  # the memory's own tenant is untouched


def test_warm_up_deletes_its_tenant_when_a_round_fails(
    memory: AgenticMemory, count_nodes: Callable[[str], int], monkeypatch: pytest.MonkeyPatch,
) -> None:
    scratch = f"{warmup.SCRATCH_PREFIX}{memory.tenant}"
    monkeypatch.setattr(warmup, "scratch_tenant", lambda: scratch)

    def fails_after_writing(memory: AgenticMemory, n: int) -> None:
        memory.add("Bob: the lake was frozen.")
        raise RuntimeError("a round failed")

    monkeypatch.setattr(warmup, "_round", fails_after_writing)
    with pytest.raises(RuntimeError, match="a round failed"):
        memory.warm_up(5)
    assert count_nodes(scratch) == 0
