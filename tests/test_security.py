"""What users trust the engine with: the local server listens on loopback only and wants credentials; logs at
the default level hold neither memories nor secrets; deleting a note or a tenant leaves nothing of it."""

from __future__ import annotations

import ipaddress
import json
import logging
import socket
import urllib.error
import urllib.request
from dataclasses import replace

import pytest

from amem_graph import AgenticMemory, InvalidInput, Settings
from amem_graph.bench.scripted_llm import Answer, Fault, Raw, ScriptedLLM
from amem_graph.server import ConnectionInfo
from amem_graph.settings import LLMSettings

from .sockets import listening

STORES = ("neo4j", "embedded")
SECRET = "Zyxwvut-7731"  # a word no other note holds


def test_the_local_server_listens_on_loopback_only_and_wants_credentials(neo4j_server: ConnectionInfo) -> None:
    if not neo4j_server.http_url:
        pytest.skip("the test server is not this machine's local server (AMEM_TEST_NEO4J_URI names another)")
    bolt = int(neo4j_server.uri.rsplit(":", 1)[1])
    http = int(neo4j_server.http_url.rsplit(":", 1)[1].split("/")[0])
    for port in (bolt, http):
        addresses = listening(port)
        assert addresses and all(a == ipaddress.ip_address("127.0.0.1") for a in addresses), (port, addresses)
    with socket.socket() as probe:  # nothing answers on the machine's other addresses
        probe.settimeout(1)
        other = socket.gethostbyname(socket.gethostname())
        if other != "127.0.0.1":
            assert probe.connect_ex((other, bolt)) != 0
    request = urllib.request.Request(f"http://127.0.0.1:{http}/db/neo4j/tx/commit", data=b'{"statements": []}',
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401


def test_logs_at_the_default_level_hold_no_memory_or_secret(settings: Settings, memory: AgenticMemory,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    with ScriptedLLM() as llm, caplog.at_level(logging.WARNING):
        llm.script(Fault(500), Fault(500), Answer("not json " + SECRET), Raw(b'{"choices": [' + SECRET.encode()))
        configured = replace(settings, llm=LLMSettings(background=False, base_url=llm.base_url, api_key="sk-" + SECRET, model="scripted",
                                                       backoff_s=0.0, timeout_s=0.5, max_retries=1))
        shared = memory._store if memory.admin.kind == "embedded" else None
        with AgenticMemory(configured, tenant=memory.tenant, store=shared) as mem:
            mem.add(f"My bank PIN is {SECRET}, Alice said.")  # two 500s: degraded
            mem.add(f"Alice repeated that {SECRET} is her PIN.")  # a malformed answer
            mem.add(f"Alice wrote {SECRET} on a card.")  # a cut-off body
            mem.search(f"What is {SECRET}?", k=3)
            with pytest.raises(InvalidInput):
                mem.add(f"{SECRET}\x00")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert caplog.records  # the faults were logged
    assert SECRET not in logged and "sk-" not in logged
    if settings.neo4j_password:
        assert settings.neo4j_password not in logged


def _traces(memory: AgenticMemory, tenant: str, words: str) -> list[str]:
    _, records = memory.admin.export(tenant)
    return [json.dumps(r)[:200] for r in records if words in json.dumps(r, ensure_ascii=False)]


@pytest.mark.parametrize("archived", [False, True], ids=["searchable", "archived"])
def test_a_deleted_note_leaves_nothing_of_what_it_said(memory: AgenticMemory, archived: bool) -> None:
    turns = ["Caroline: I went to the pottery class.", f"Melanie: My secret is {SECRET} the parrot.",
             "Caroline: A blue bowl.", "Melanie: Nice bowl."]
    ids = [memory.add(t, session="s1").id for t in turns]
    memory.update(ids[0], tags=["pottery"])  # a version that holds the neighbourhood too
    if archived:  # a retention policy's archive keeps a note's history: erasure takes it all the same
        assert memory.retention.archive([ids[1]]) == [ids[1]]
    assert _traces(memory, memory.tenant, SECRET)
    memory.delete(ids[1])
    assert _traces(memory, memory.tenant, SECRET) == []
    assert memory.get(ids[2]).neighbourhood == "\n".join(t for i, t in enumerate(turns) if i != 1)
    assert memory.admin.check().sound


def test_a_deleted_turn_leaves_nothing_of_what_it_said_before_an_update(memory: AgenticMemory) -> None:
    """The turns around a turn keep its line as it read when it joined them: deleting it takes every line it
    had."""
    first, said = "Caroline: I went to the pottery class.", f"Melanie: My secret is {SECRET}."
    ids = [memory.add(first, session="s1").id, memory.add(said, session="s1").id]
    memory.update(ids[1], content=f"Melanie: My secret is {SECRET}, the parrot.")
    ids += [memory.add(t, session="s1").id for t in ("Caroline: A blue bowl.", "Melanie: Nice bowl.")]
    assert said in memory.get(ids[0]).neighbourhood  # the line as it joined, before the update
    memory.delete(ids[1])
    assert _traces(memory, memory.tenant, SECRET) == []
    assert memory.get(ids[0]).neighbourhood == f"{first}\nCaroline: A blue bowl."
    assert memory.admin.check().sound


def test_deleting_a_tenant_leaves_an_empty_export(memory: AgenticMemory) -> None:
    memory.add(f"Alice's PIN is {SECRET}.", session="s1")
    memory.add_turn(f"Remember {SECRET}.", "I will.")
    memory.admin.delete_tenant()
    _, records = memory.admin.export()
    assert list(records) == [] and memory.tenant not in memory.admin.tenants()
