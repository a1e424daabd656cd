"""The ingest benchmark runs end to end and reports every key (figures themselves are never asserted)."""

import json

import pytest
from typer.testing import CliRunner

from amem_graph.cli import app


@pytest.mark.slow
def test_bench_ingest_prints_and_writes_json(cli_env: dict[str, str], tmp_path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(
        app, ["bench", "ingest", "--n", "300", "--chunk", "150", "--queries", "20", "--json", str(out)], env=cli_env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert json.loads(result.stdout) == data
    for key in ("notes_per_s", "embed_only_per_s", "overhead", "embed_share", "knn_ms", "hybrid_search_ms"):
        assert key in data
    assert data["n"] == 300 and data["knn_ms"]["n"] == 20
    assert data["knn_ms"]["p95"] >= data["knn_ms"]["p50"] > 0
    assert data["overhead"] == pytest.approx(data["embed_only_per_s"] / data["notes_per_s"] - 1, abs=1e-3)
