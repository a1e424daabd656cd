"""The embedded store read by other processes while one writes it: the readers follow its commits, whole
transactions only, through kills of the writer and its compactions, and their own writes are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, Settings, StoreUnavailable
from amem_graph.bench import readers
from amem_graph.store.embedded.persist import Folder


def settings(folder: Path) -> Settings:
    return Settings.from_env({**os.environ, "AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(folder),
                              "AMEM_LLM_BASE_URL": "", "AMEM_LLM_API_KEY": ""})


def test_a_second_process_reads_what_the_first_writes_and_cannot_write(tmp_path: Path) -> None:
    with AgenticMemory(settings(tmp_path), tenant="t") as writer:
        writer.add("Alice adopted a beagle named Max.")
        code = (
            "import json, sys, os\n"
            "from amem_graph import AgenticMemory, Settings, StoreUnavailable\n"
            "with AgenticMemory(Settings.from_env(), tenant='t') as reader:\n"
            "    seen = [n.content for n in reader.list()]\n"
            "    try:\n        reader.add('a write from a reader')\n        refused = ''\n"
            "    except StoreUnavailable as err:\n        refused = str(err)\n"
            "    print(json.dumps({'read_only': reader.admin.read_only, 'seen': seen, 'refused': refused}))\n"
        )
        env = {**os.environ, "AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        found = json.loads(run.stdout.strip().splitlines()[-1])
        assert found["read_only"] is True and found["seen"] == ["Alice adopted a beagle named Max."]
        assert "only reads it" in found["refused"] and str(os.getpid()) in found["refused"]
        assert [n.content for n in writer.list()] == ["Alice adopted a beagle named Max."]  # the refusal wrote nothing
        assert not writer.admin.read_only


def test_a_reader_follows_commits_and_a_compaction_in_this_process(tmp_path: Path) -> None:
    """The follower itself, in one process: a second Folder is a reader (the lock is per open file)."""
    from amem_graph.store.embedded.store import EmbeddedStore

    writer = EmbeddedStore(tmp_path, readers=False)
    reader = EmbeddedStore(tmp_path)
    try:
        assert reader.read_only and not writer.read_only
        writer._write(lambda: writer.graph.create_node(["Probe"], {"n": 1}))
        assert reader._read(lambda: len(list(reader.graph.labelled("Probe")))) == 1
        writer._folder.save(writer.graph)  # a compaction: a new snapshot, an empty journal
        writer._write(lambda: writer.graph.create_node(["Probe"], {"n": 2}))
        assert reader._read(lambda: sorted(n.props["n"] for n in reader.graph.labelled("Probe"))) == [1, 2]
        with pytest.raises(StoreUnavailable, match="only reads it"):
            reader._write(lambda: None)
        # A half-written last line (the writer's commit in flight) is left for the next look, never half applied.
        with (tmp_path / "journal.jsonl").open("a", encoding="utf-8") as journal:
            journal.write('{"tx": 99, "sha256": "')
        assert reader._read(lambda: len(list(reader.graph.labelled("Probe")))) == 2
    finally:
        reader.close()
        writer.close()
    again = Folder(tmp_path)
    again.open()  # the torn line is no transaction: the writer's close compacted without it, the next open is sound
    again.close()
    assert '"tx": 99' not in (tmp_path / "journal.jsonl").read_text(encoding="utf-8")


@pytest.mark.slow
def test_readers_never_fail_nor_see_part_of_a_write_while_the_writer_is_killed() -> None:
    result = readers.run(notes=200, kills=4, batch=5, seed=3)
    assert result["reader_was_read_only"] is True
    assert result["lost"] == 0 and result["seen_at_end"] == result["acknowledged"] == 200
    assert result["read_failures"] == 0, result["failures"]
    assert result["partial_reads"] == 0 and result["kills_made"] >= 1
    assert result["cli_searches"]["ok"] == result["cli_searches"]["runs"] >= 1


def test_a_read_only_opening_never_takes_the_writers_place(tmp_path: Path) -> None:
    """A viewer or a search from a terminal opened first: the agent that starts after it still writes."""
    from amem_graph.store.embedded.store import EmbeddedStore

    viewer = EmbeddedStore(tmp_path, read_only=True)
    agent = EmbeddedStore(tmp_path, readers=False)  # would raise StoreUnavailable if the viewer held the folder
    try:
        assert viewer.read_only and not agent.read_only
        agent._write(lambda: agent.graph.create_node(["Probe"], {"n": 1}))
        assert viewer._read(lambda: len(list(viewer.graph.labelled("Probe")))) == 1
        with pytest.raises(StoreUnavailable, match="opened to read"):
            viewer._write(lambda: None)
    finally:
        viewer.close()
        agent.close()
    assert Settings.from_env({"AMEM_READ_ONLY": "1"}).read_only
