"""`bench scale`, small: precomputed vectors at two sizes, k-NN recall against the exact answer, on the embedded
store (exact, so recall is 1) and on a private Neo4j server (HNSW, with the notes over two tenants)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from amem_graph import Settings
from amem_graph.bench import scale
from amem_graph.embedding import Embedder


def _rows(result: dict) -> list[dict]:
    rows = result["sizes"]
    assert [r["notes"] for r in rows] == [300, 600]
    for row in rows:
        assert row["knn_ms"]["n"] == 20 and row["search_ms"]["n"] == 20 and row["ingest_notes_per_s"] > 0
        assert row["resident_mib"] > 0 and row["disk_mib"] > 0
    return rows


@pytest.mark.slow
@pytest.mark.embedded
def test_scale_on_the_embedded_store_is_exact(base_settings: Settings, tmp_path: Path) -> None:
    rows = _rows(scale.run(base_settings, "embedded", sizes=[600, 300], tenants=1, queries=20, k=10, workdir=tmp_path))
    assert all(r["recall_at_k"] == 1.0 for r in rows) and all(r["server_settle_s"] == 0 for r in rows)


@pytest.mark.slow
def test_scale_on_neo4j_reports_recall_against_the_exact_answer(base_settings: Settings, tmp_path: Path) -> None:
    rows = _rows(scale.run(base_settings, "neo4j", sizes=[300, 600], tenants=2, queries=20, k=10, workdir=tmp_path,
                           heap="512m", pagecache="256m"))
    assert all(0.8 <= r["recall_at_k"] <= 1.0 for r in rows) and all(r["index_online_s"] >= 0 for r in rows)
    assert all(0 < r["server_settle_s"] < 300 for r in rows)  # measured once the server stopped merging


def test_the_wait_for_a_server_ends_when_its_process_goes_idle(tmp_path: Path) -> None:
    """Not while the process works (it spins until told to stop), and not at the limit once it is idle."""
    import subprocess
    import sys
    import threading

    stop = tmp_path / "stop"
    spin = f"import pathlib\nstop = pathlib.Path({str(stop)!r})\nwhile not stop.exists(): pass"
    busy = subprocess.Popen([sys.executable, "-c", spin])
    timer = threading.Timer(2.0, stop.touch)
    timer.start()
    try:
        scale._await_quiet(busy.pid, window=0.5, limit=60)
        assert stop.exists()  # it waited past the moment the process stopped working
    finally:
        timer.cancel()
        stop.touch()
        busy.wait()
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        assert scale._await_quiet(idle.pid, window=0.5, limit=60) < 60 and idle.poll() is None
    finally:
        idle.kill()


@pytest.mark.embedded
def test_precomputed_vectors_stand_in_for_the_model(base_settings: Settings) -> None:
    notes = scale.vectors(np.eye(4, dtype=np.float32), 3, seed=1)
    asked = scale.vectors(np.eye(4, dtype=np.float32), 2, seed=2)
    assert notes.shape == (3, 4) and np.allclose(np.linalg.norm(notes, axis=1), 1, atol=1e-5)
    stand_in = scale.Precomputed(Embedder.of(base_settings), notes, asked)
    got = stand_in.embed(["Scale note 2: anything", "Scale query 1: what", "Scale note 0:"])
    assert np.array_equal(got, np.stack([notes[2], asked[1], notes[0]]))
