"""The benchmarks run end to end and report every key (timings themselves are never asserted)."""

import json
from pathlib import Path

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


LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_bench_llm_cost_reports_calls_tokens_and_latency(cli_env: dict[str, str], tmp_path) -> None:
    out = tmp_path / "llm-cost.json"
    result = CliRunner().invoke(
        app, ["bench", "llm-cost", "--data", str(LOCOMO), "--limit", "30", "--json", str(out)], env=cli_env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["notes"] == 30 and data["conversation"] == "conv-26"
    assert data["calls_per_note"] == 1.0 and data["failures"] == 0  # one call per note through real HTTP
    assert data["tokens_per_note"] == pytest.approx(
        data["prompt_tokens_per_note"] + data["completion_tokens_per_note"], abs=0.2
    )
    assert data["add_ms"]["p95"] >= data["add_ms"]["p50"] > 0 and data["add_ms"]["n"] == 30
    assert data["links"].get("TRIGGERED_BY") == 30  # one Evolution per added note


def test_bench_llm_cost_refuses_a_missing_data_file(cli_env: dict[str, str], tmp_path) -> None:
    result = CliRunner().invoke(app, ["bench", "llm-cost", "--data", str(tmp_path / "nope.json")], env=cli_env)
    assert result.exit_code == 3 and "cannot read LoCoMo data" in result.stderr
