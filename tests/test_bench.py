"""The benchmarks run end to end and report every key (timings themselves are never asserted)."""

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import Answer, ScriptedLLM, analysis_answer
from amem_graph.cli import app
from amem_graph.llm.prompts import QA_SYSTEM


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
    assert data["search_floor_ms"]["n"] == 20 and data["search_floor_ms"]["p50"] > 0
    assert data["notes_held"] == 300 and data["mentions_held"] >= 300  # every note names at least its speaker
    assert data["n"] == 300 and data["knn_ms"]["n"] == 20
    assert data["knn_ms"]["p95"] >= data["knn_ms"]["p50"] > 0
    # both rates are rounded to two places in the JSON, so the ratio is checked to the precision they carry
    assert data["overhead"] == pytest.approx(data["embed_only_per_s"] / data["notes_per_s"] - 1, rel=1e-2)
    assert data["entity_extractor"] in ("spacy", "rules") and data["extract_only_per_s"] > 0
    assert set(data["stage_share_alone"]) == {"embed", "extract"}
    assert all(share > 0 for share in data["stage_share_alone"].values())


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


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_bench_llm_cost_tiers_counts_every_tier_call(cli_env: dict[str, str]) -> None:
    env = {**cli_env, "AMEM_PROMOTE_HEAT": "3"}  # promotions within 30 turns
    result = CliRunner().invoke(
        app, ["bench", "llm-cost", "--data", str(LOCOMO), "--limit", "30", "--mode", "tiers"], env=env,
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["turns"] == 30 and data["mode"] == "tiers" and data["add_turn_ms"]["n"] == 30
    operations = data["per_operation"]
    assert operations["tier_turn"]["calls_per_turn"] == 1.0  # continuity and chain summary: one call a turn
    assert operations["tier_segment"]["calls_per_turn"] == 1.0  # every page has left the STM (flushed)
    assert operations["tier_persona"]["calls_per_turn"] > 0 and operations["analyse_note"]["calls_per_turn"] > 0
    assert data["calls_per_turn"] == pytest.approx(sum(o["calls_per_turn"] for o in operations.values()), abs=1e-3)
    assert all(o["failures"] == 0 for o in operations.values()) and data["labels"]["Page"] == 30


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_bench_llm_cost_cold_runs_on_a_fresh_server_then_again_warm(cli_env: dict[str, str], tmp_path) -> None:
    out = tmp_path / "cold.json"
    result = CliRunner().invoke(
        app, ["bench", "llm-cost", "--data", str(LOCOMO), "--limit", "12", "--cold", "--warm-up", "1",
              "--json", str(out)], env=cli_env, catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["warm_up"]["rounds"] >= 1
    for run in (data["cold"], data["warm"]):
        assert run["notes"] == 12 and run["warmup_notes"] == 0 and run["add_ms"]["n"] == 12
        assert run["search_ms"]["n"] == 12 and run["calls_per_note"] == 1.0
    assert data["cold_over_warm"]["add_p95"] == pytest.approx(
        data["cold"]["add_ms"]["p95"] / data["warm"]["add_ms"]["p95"], rel=1e-2)


def test_bench_cold_refuses_what_it_cannot_measure(cli_env: dict[str, str]) -> None:
    ingest = CliRunner().invoke(app, ["bench", "ingest", "--cold", "--store", "embedded"], env=cli_env)
    assert ingest.exit_code == 2 and "--cold runs on a Neo4j server of its own" in ingest.output
    tiers = CliRunner().invoke(app, ["bench", "llm-cost", "--data", str(LOCOMO), "--cold", "--mode", "tiers"],
                               env=cli_env)
    assert tiers.exit_code == 2 and "--cold measures the notes mode" in tiers.output


def test_bench_llm_cost_refuses_a_missing_data_file(cli_env: dict[str, str], tmp_path) -> None:
    result = CliRunner().invoke(app, ["bench", "llm-cost", "--data", str(tmp_path / "nope.json")], env=cli_env)
    assert result.exit_code == 3 and "cannot read LoCoMo data" in result.stderr


def _answers_not_mentioned(request: dict) -> Answer:
    """The scripted model: notes are analysed as usual; every question is answered "Not mentioned"."""
    if request["messages"][0]["content"] == QA_SYSTEM:
        return Answer(json.dumps({"answer": "Not mentioned"}))
    return analysis_answer(request)


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_bench_locomo_reports_recall_baselines_ablations_and_qa(cli_env: dict[str, str], tmp_path) -> None:
    out = tmp_path / "locomo.json"
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    with ScriptedLLM(_answers_not_mentioned) as llm:
        env = {**cli_env, "AMEM_LLM_BASE_URL": llm.base_url, "AMEM_LLM_MODEL": "scripted"}
        args = ["bench", "locomo", "--data", str(LOCOMO), "--conversations", "conv-26", "--turns", "80",
                "--questions", "20", "--k", "5,10", "--prefix", prefix]
        try:
            result = CliRunner().invoke(app, [*args, "--qa", "--json", str(out)], env=env, catch_exceptions=False)
            assert result.exit_code == 0, result.output
            again = CliRunner().invoke(app, [*args, "--no-ablations"], env=env, catch_exceptions=False)
        finally:
            with AgenticMemory(Settings.from_env(cli_env)) as mem:
                mem.admin.delete_tenant(f"{prefix}conv-26")
    data = json.loads(out.read_text())
    assert data["ingest"]["conversations"]["conv-26"] == {"notes": 80, "seconds": pytest.approx(
        data["ingest"]["seconds"]), "reused": False}
    assert data["ingest"]["analyser"] == "llm"
    asked = data["data"]["questions"]
    assert asked == 20 and data["data"]["dropped"]["evidence naming no turn"] > 0  # questions about later turns
    assert sum(c["questions"] for c in data["by_category"].values()) == asked
    for table in (data, *data["baselines"].values(), *data["ablations"].values()):
        assert set(table["overall"]) == {"recall@5", "hit@5", "recall@10", "hit@10", "questions"}
        assert 0 <= table["overall"]["hit@10"] <= table["overall"]["recall@10"] <= 100
        assert table["overall"]["recall@5"] <= table["overall"]["recall@10"]
    assert set(data["baselines"]) == {"dense", "bm25", "hybrid"}
    assert data["latency_ms"]["n"] == asked and data["baselines"]["hybrid"]["latency_ms"]["n"] == asked
    assert data["overall"]["recall@10"] > 0 and data["baselines"]["bm25"]["overall"]["recall@10"] > 0
    assert "no expansion (hops 0)" in data["ablations"]
    # QA through real HTTP: "Not mentioned" is right exactly for the adversarial questions.
    qa = data["qa"]["by_category"]
    assert qa["overall"]["f1"] == 0.0 and qa.get("5", {"f1": 100.0})["f1"] == 100.0
    assert data["qa"]["usage"]["calls"] == asked
    # A second run reuses the ingested tenants.
    assert again.exit_code == 0, again.output
    reused = json.loads(again.stdout)
    assert reused["ingest"]["conversations"]["conv-26"]["reused"] is True and "ablations" not in reused
    assert reused["overall"]["recall@10"] == data["overall"]["recall@10"]


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_bench_locomo_tiers_mode_ingests_pages_and_ranks_turns(cli_env: dict[str, str], tmp_path) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}-"
    args = ["bench", "locomo", "--data", str(LOCOMO), "--conversations", "conv-26", "--turns", "60", "--questions",
            "10", "--k", "5,10", "--prefix", prefix, "--mode", "tiers", "--no-ablations"]
    env = {**cli_env, "AMEM_PROMOTE_HEAT": "3"}  # segments of a few turns are promoted within 60 turns
    try:
        first = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
        again = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    finally:
        with AgenticMemory(Settings.from_env(cli_env)) as mem:
            mem.admin.delete_tenant(f"{prefix}tiers-conv-26")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert "overall" not in data and data["data"]["mode"] == "tiers"  # the notes path did not run
    tiers = data["tiers"]
    report = tiers["ingest"]["conversations"]["conv-26"]
    assert report["pages"] == 60 and report["add_turn_ms"]["n"] == 60 and report["segments"] > 0
    assert report["promoted_segments"] > 0 and report["notes"] > 0
    assert tiers["latency_ms"]["n"] == data["data"]["questions"] == 10
    overall = tiers["overall"]
    assert 0 < overall["recall@10"] <= 100 and overall["recall@5"] <= overall["recall@10"]
    assert set(data["baselines"]) == {"dense", "bm25", "hybrid"}
    assert again.exit_code == 0, again.output
    reused = json.loads(again.stdout)["tiers"]
    assert reused["ingest"]["conversations"]["conv-26"]["reused"] is True
    assert reused["overall"]["recall@10"] == overall["recall@10"]


def test_bench_locomo_refuses_qa_without_an_llm(cli_env: dict[str, str], tmp_path) -> None:
    result = CliRunner().invoke(app, ["bench", "locomo", "--data", str(LOCOMO), "--qa", "--turns", "1"], env=cli_env)
    assert result.exit_code == 8 and "--qa answers with the configured LLM" in result.stderr


@pytest.mark.slow
def test_bench_langchain_times_every_path_and_cleans_up(cli_env: dict[str, str], settings: Settings, tmp_path) -> None:
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "langchain", "--n", "4", "--queries", "2", "--json", str(out)],
                                env=cli_env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    paths = ("add", "vectorstore_add", "store_put", "history_add", "search", "retriever", "vectorstore_search",
             "store_search")
    assert set(data["ms"]) == set(paths) and all(data["ms"][p]["n"] == (4 if i < 4 else 2) for i, p in enumerate(paths))
    assert len(data["ratio_p50"]) == 6 and data["tenants"] is None
    with AgenticMemory(settings) as memory:  # every benchmark tenant deleted
        assert not [t for t in memory.attachments.keyed_tenants() if t.startswith("bench-lc-")]


@pytest.mark.slow
def test_bench_ingest_on_both_stores_side_by_side(cli_env: dict[str, str], tmp_path) -> None:
    env = {**cli_env, "AMEM_DATA_DIR": str(tmp_path / "embedded")}
    result = CliRunner().invoke(app, ["bench", "ingest", "--n", "200", "--chunk", "100", "--queries", "10",
                                      "--store", "both"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    stores = json.loads(result.stdout)["stores"]
    assert {name: data["store"] for name, data in stores.items()} == {"neo4j": "neo4j", "embedded": "embedded"}
    assert all(data["n"] == 200 and data["knn_ms"]["n"] == 10 for data in stores.values())
    refused = CliRunner().invoke(app, ["bench", "ingest", "--store", "sqlite"], env=env)
    assert refused.exit_code == 2  # a bad command line


@pytest.mark.slow
def test_bench_mcp_times_each_transport_beside_in_process(cli_env: dict[str, str], settings: Settings, tmp_path) -> None:
    out = tmp_path / "mcp.json"
    with AgenticMemory(settings) as memory:
        before = set(memory.admin.tenants())
    result = CliRunner().invoke(app, ["bench", "mcp", "--n", "3", "--queries", "3", "--rounds", "1", "--json", str(out)],
                                env=cli_env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert set(data["latency_ms"]) == {"in_process", "stdio", "http"}
    for path in ("in_process", "stdio", "http"):
        assert data["latency_ms"][path]["add"]["n"] == 3 and data["latency_ms"][path]["search"]["n"] == 3
    assert all(data["ratio_to_in_process"][p][op]["p50"] > 0 for p in ("stdio", "http") for op in ("add", "search"))
    with AgenticMemory(settings) as memory:  # its tenants are gone
        assert not {t for t in memory.admin.tenants() if t.startswith("bench-mcp-")} - before


def test_bench_time_supersedes_by_the_datas_labels_and_reads_as_of(cli_env: dict[str, str], tmp_path) -> None:
    """A BEAM-style chat in LoCoMo's layout: the later message of an update question supersedes the earlier one."""
    turns = ["My API answers in about 900ms.", "Caching is next on my list.", "The API answers in 250ms now, cached.",
             "I also renamed the repository."]
    chat = {"sample_id": "1", "conversation": {
        "session_1_date_time": "12:00 pm on 1 May, 2024",
        "session_1": [{"speaker": "user", "dia_id": f"D1:{i}", "text": text} for i, text in enumerate(turns, start=1)],
    }, "qa": [{"question": "How fast does my API answer?", "answer": "250ms", "evidence": ["D1:3", "D1:1"],
               "category": 3, "beam_type": "knowledge_update"},
              {"question": "What did I rename?", "answer": "the repository", "evidence": ["D1:4"], "category": 3,
               "beam_type": "knowledge_update"}]}
    data = tmp_path / "beam.json"
    data.write_text(json.dumps([chat]))
    result = CliRunner().invoke(app, ["bench", "time", "--data", str(data), "--people", "3", "--moves", "3"],
                                env=cli_env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    update = out["beam"]["knowledge_update"]
    assert update["questions"] == 1 and out["beam"]["dropped"] == {"update questions naming one message": 1}
    assert update["current_above_stale"] == 100.0 and update["stale_found"] == 0.0  # superseded: out by default
    assert update["earlier_found_without_supersession"] == 100.0
    assert update["as_of_earlier_found"] == 100.0 and update["as_of_later_absent"] == 100.0
    generated = out["generated"]
    assert generated["people"] == 3 and generated["current_first"] == 100.0 and generated["stale_found"] == 0.0
    assert generated["as_of_held_first"] == generated["as_of_later_absent"] == generated["valid_at_held_first"] == 100.0
    assert out["beam"]["search_ms"]["plain"]["n"] == 1 and out["beam"]["search_ms"]["as_of"]["n"] == 1
    timed = generated["search_ms"]
    assert (timed["plain"]["n"], timed["as_of"]["n"], timed["valid_at"]["n"]) == (3, 9, 9)
    assert timed["as_of"]["p95_vs_plain"] > 0
