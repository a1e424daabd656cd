"""Several threads and processes adding to one tenant lose no note, link or neighbour update."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from amem_graph import AgenticMemory, Settings

from .test_evolution import graph_is_sound

THREADS, PER_THREAD, PROCESSES, PER_PROCESS = 4, 8, 2, 6
TOPICS = ("garden club tomatoes", "garden club basil", "book club novels", "garden club compost")

WRITER = """
import sys
from amem_graph import AgenticMemory

STORES = ("neo4j", "embedded")
with AgenticMemory() as memory:
    for i in range(int(sys.argv[2])):
        memory.add(f"Process {sys.argv[1]} note {i}: the garden club planted tomatoes near the old oak tree.")
"""


def text(writer: int, i: int) -> str:
    return f"Writer {writer} note {i}: the {TOPICS[(writer + i) % len(TOPICS)]} met near the old oak tree."


@pytest.mark.slow
def test_concurrent_adds_on_one_tenant_lose_nothing(settings: Settings, tenant: str, cli_env: dict[str, str]) -> None:
    env = {**os.environ, **cli_env, "AMEM_TENANT": tenant}
    with AgenticMemory(settings, tenant=tenant) as memory:
        try:
            processes = [
                subprocess.Popen([sys.executable, "-c", WRITER, str(p), str(PER_PROCESS)], env=env)
                for p in range(PROCESSES)
            ]
            with ThreadPoolExecutor(THREADS) as pool:
                added = list(pool.map(lambda n: memory.add(text(n // PER_THREAD, n % PER_THREAD)).id,
                                      range(THREADS * PER_THREAD)))
            assert [p.wait(timeout=300) for p in processes] == [0] * PROCESSES
            total = THREADS * PER_THREAD + PROCESSES * PER_PROCESS
            labels = memory.stats(tenant=tenant).labels
            assert labels["Note"] == total and labels["Evolution"] == total and len(set(added)) == len(added)
            graph_is_sound(memory)  # every version chain is whole: no neighbour update was lost
            notes = memory.list(limit=total)
            assert sum(n.version - 1 for n in notes) == labels.get("NoteVersion", 0)
            for note in notes:  # every link an evolution decided on is in the graph
                [own] = [e for e in memory.history(note.id).evolutions if e.trigger_note_id == note.id]
                links = memory.get(note.id).links  # list() leaves links out
                linked = {(link.target_id, link.type) for link in links if link.source_id == note.id}
                assert {(d["target_id"], d["type"]) for d in own.decision["links"]} <= linked
                # every neighbour update it planned was written as a version, unless skipped as stale
                planned = set(own.decision["revisions"]) - set(own.decision["skipped_stale"])
                assert planned == {note_id for note_id, _ in own.revised}

        finally:
            memory.admin.delete_tenant(tenant)
