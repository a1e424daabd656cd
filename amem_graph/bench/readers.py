"""`bench readers`: one process writes an embedded store while others read it. A child process adds `notes` notes
in bulk batches (each one transaction), printing each batch once it returned; this process reads the same folder
through the viewer (its summary, over HTTP, every `POLL_S`) and through searches, and `amem-graph search` runs in a
process of its own at each kill. The writer is SIGKILLed `kills` times at random moments and started again (it
resumes where its notes end). Measured: how long after its batch returned a note is seen by the viewer, whether any
read failed, whether a read ever saw part of a batch (the count of notes not a whole number of batches), and
whether every acknowledged note is there at the end."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from typing import Any

from ..api import AgenticMemory
from ..errors import AmemError
from ..settings import Settings
from ..viewer import Viewer
from .texts import sentences
from .timing import percentiles

TENANT = "bench-readers"
POLL_S = 0.05
KILL_AFTER_S = (0.2, 1.0)  # a kill lands this long after the writer's first batch of its run
PAUSE_S = 0.05  # between two of the writer's batches


def writer(folder: str, total: int, batch: int, pause_s: float = PAUSE_S) -> None:
    """The child: resumes after the notes the folder holds, adds the rest in batches (`pause_s` apart, as an agent
    writes between its turns), prints each batch's end."""
    settings = Settings.from_env({**os.environ, "AMEM_STORE": "embedded", "AMEM_DATA_DIR": folder})
    texts = sentences(total, seed=5)
    with AgenticMemory(settings, tenant=TENANT) as memory:
        held = memory.stats(tenant=TENANT).labels.get("Note", 0)
        print(json.dumps({"ready": held}), flush=True)
        for start in range(held, total, batch):
            memory.add_many([f"#{i} {texts[i]}" for i in range(start, min(total, start + batch))], batch_size=batch)
            print(json.dumps({"acked": min(total, start + batch), "at": time.time()}), flush=True)
            time.sleep(pause_s)


def run(*, notes: int = 1_000, kills: int = 20, batch: int = 5, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="amem-bench-readers-") as folder:
        env = {**os.environ, "AMEM_STORE": "embedded", "AMEM_DATA_DIR": folder, "AMEM_LLM_BASE_URL": "",
               "AMEM_LLM_API_KEY": ""}
        child, lines = _start(env, folder, notes, batch)
        _wait_for(lines, "ready")
        acked: dict[int, float] = {}  # notes acknowledged → when their batch returned
        seen: list[tuple[float, int]] = []  # (when, how many notes the viewer showed)
        failures: list[str] = []
        partial = 0
        searches: list[subprocess.Popen[str]] = []  # `amem-graph search` processes, run beside the writer
        settings = Settings.from_env({**env, "AMEM_READ_ONLY": "1"})
        with AgenticMemory(settings, tenant=TENANT) as memory, Viewer(memory) as viewer:
            read_only = memory.admin.read_only
            done_kills = 0
            kill_at = None
            while True:
                for line in _ready_lines(lines):
                    if "acked" in line:
                        acked[line["acked"]] = line["at"]
                        kill_at = kill_at or time.time() + rng.uniform(*KILL_AFTER_S)
                    elif "ready" in line and done_kills:  # a CLI search beside the writer that just started again
                        searches.append(_cli_search(env))
                if kill_at is not None and time.time() >= kill_at and done_kills < kills:
                    child.send_signal(signal.SIGKILL)
                    child.wait()
                    done_kills += 1
                    child, lines = _start(env, folder, notes, batch)
                    kill_at = None
                count = _viewer_notes(viewer, failures)
                if count is not None:
                    seen.append((time.time(), count))
                    partial += count % batch != 0 and count != notes
                try:
                    memory.search("the", k=3, count_use=False)
                except AmemError as err:
                    failures.append(f"search: {err}")
                # Done once the writer ended with every note written; a kill that would land after that is not made.
                if child.poll() is not None and max(acked, default=0) >= notes:
                    break
                time.sleep(POLL_S)
            final = _settled(viewer, failures, max(acked, default=0))
        cli_ok = sum(_searched(search) for search in searches)
        # A batch is visible from the viewer's first look that counted it (a look may land before the writer's
        # report of it arrives: then no delay).
        delays = [1000 * max(0.0, next(t for t, shown in seen if shown >= count) - at)
                  for count, at in acked.items() if any(shown >= count for _, shown in seen)]
    return {
        "benchmark": "readers", "notes": notes, "batch": batch, "kills": kills, "reader_was_read_only": read_only,
        "acknowledged": max(acked, default=0), "seen_at_end": final, "lost": max(acked, default=0) - (final or 0),
        "read_failures": len(failures), "failures": failures[:5], "partial_reads": partial,
        "visible_after_ms": percentiles(delays), "kills_made": done_kills,
        "cli_searches": {"runs": len(searches), "ok": cli_ok},
    }


def _start(env: dict[str, str], folder: str, notes: int, batch: int) -> tuple[subprocess.Popen[str], Any]:
    child = subprocess.Popen(
        [sys.executable, "-c", f"from amem_graph.bench.readers import writer; writer({folder!r}, {notes}, {batch})"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )
    os.set_blocking(child.stdout.fileno(), False)  # type: ignore[union-attr]
    return child, child.stdout


def _ready_lines(stream: Any) -> list[dict[str, Any]]:
    out = []
    while True:
        try:
            line = stream.readline()
        except (BlockingIOError, ValueError):
            break
        if not line:
            break
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # cut by the kill
            continue
    return out


def _wait_for(stream: Any, key: str, timeout_s: float = 300.0) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if any(key in line for line in _ready_lines(stream)):
            return
        time.sleep(0.05)
    raise AmemError(f"the writer did not report {key!r} in {timeout_s} s")


def _viewer_notes(viewer: Viewer, failures: list[str]) -> int | None:
    request = urllib.request.Request(f"http://127.0.0.1:{viewer.port}/api/summary",
                                     headers={"Cookie": f"{viewer.cookie}={viewer.token}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(json.loads(response.read())["counts"].get("Note", 0))
    except Exception as err:  # noqa: BLE001 - every failed read is counted and reported
        failures.append(f"viewer: {type(err).__name__}: {err}")
        return None


def _cli_search(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", "from amem_graph.cli import main; main()", "search", "violin", "-t",
                             TENANT, "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _searched(search: subprocess.Popen[str]) -> int:
    """1 when the search ended well with a JSON list of hits."""
    out, _ = search.communicate(timeout=300)
    try:
        return int(search.returncode == 0 and isinstance(json.loads(out or "null"), list))
    except json.JSONDecodeError:
        return 0


def _settled(viewer: Viewer, failures: list[str], expected: int, timeout_s: float = 30.0) -> int | None:
    deadline = time.time() + timeout_s
    count = None
    while time.time() < deadline:
        count = _viewer_notes(viewer, failures)
        if count is not None and count >= expected:
            return count
        time.sleep(POLL_S)
    return count
