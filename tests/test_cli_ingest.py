"""`amem-graph ingest` against the real server: notes, turns and LoCoMo; a second run resumes; a bad line
writes nothing."""

import json
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory, Settings
from amem_graph.cli import app

runner = CliRunner()
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


@pytest.fixture
def tenant_env(cli_env: dict[str, str]):
    tenant = f"ingest-{uuid.uuid4().hex[:8]}"
    with AgenticMemory(Settings.from_env(cli_env), tenant=tenant) as memory:
        yield tenant, memory
        memory.admin.delete_tenant(tenant)


def ingest(env: dict[str, str], tenant: str, *args: str):
    return runner.invoke(app, ["ingest", *args, "-t", tenant, "--json"], env=env, catch_exceptions=False)


def jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_notes_are_ingested_once_and_a_rerun_skips_them(cli_env, tenant_env, tmp_path) -> None:
    tenant, memory = tenant_env
    file = jsonl(tmp_path / "notes.jsonl", [
        {"content": "Nate adopted a turtle named Shelly.", "source": "chat:1", "tags": ["pets"]},
        {"content": "Shelly loves lettuce.", "source": "chat:2", "event_time": "2023-05-01T10:00:00+00:00"},
        {"content": "Nate: we went to the lake.", "session": "s1"},
    ])
    first = ingest(cli_env, tenant, str(file))
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout) | {"seconds": 0, "per_s": 0} == {
        "format": "notes", "tiers": False, "records": 3, "added": 3, "skipped": 0, "invalid": [], "seconds": 0,
        "per_s": 0}
    again = json.loads(ingest(cli_env, tenant, str(file)).stdout)
    assert again["added"] == 0 and again["skipped"] == 3
    notes = memory.list(limit=10)
    assert len(notes) == 3 and {n.analysis for n in notes} == {"heuristic"}
    assert next(n for n in notes if n.source == "chat:1").tags[0] == "pets"


def test_turns_resume_per_session_and_a_bad_line_writes_nothing(cli_env, tenant_env, tmp_path) -> None:
    tenant, memory = tenant_env
    turns = [{"user": "I adopted a beagle.", "assistant": "Nice!", "session_id": "a"},
             {"user": "He is called Max.", "session_id": "a"},
             {"assistant": "Welcome back.", "session_id": "b", "at": "2024-01-02T09:00:00+00:00"},
             {"user": "Max chewed my shoes.", "session_id": "a"}]
    partial = ingest(cli_env, tenant, str(jsonl(tmp_path / "part.jsonl", turns[:2])))  # an interrupted run
    assert partial.exit_code == 0, partial.output
    resumed = json.loads(ingest(cli_env, tenant, str(jsonl(tmp_path / "all.jsonl", turns))).stdout)
    assert resumed["format"] == "turns" and resumed["added"] == 2 and resumed["skipped"] == 2
    pages = memory.tiers.pages()
    assert [(p.session_id, p.seq) for p in pages] == [("a", 1), ("a", 2), ("a", 3), ("b", 1)]
    bad = jsonl(tmp_path / "bad.jsonl", [*turns, {"user": "ok", "session_id": "c"}, {"user": "", "assistant": ""}])
    refused = ingest(cli_env, tenant, str(bad))
    assert refused.exit_code == 3 and "line 6" in refused.stderr
    assert len(memory.tiers.pages()) == 4  # checked before anything was written


@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_a_locomo_conversation_in_bulk(cli_env, tenant_env) -> None:
    tenant, memory = tenant_env
    result = ingest(cli_env, tenant, str(LOCOMO), "--conversation", "conv-26", "--bulk", "--limit", "20")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["added"] == 20
    notes = memory.list(limit=50)
    assert len(notes) == 20 and {n.analysis for n in notes} == {"none"} and all(n.source for n in notes)
    assert json.loads(ingest(cli_env, tenant, str(LOCOMO), "--bulk", "--limit", "20").stdout)["skipped"] == 20


def test_a_conversation_of_notes_goes_through_the_tiers_two_to_a_turn(cli_env, tenant_env, tmp_path) -> None:
    tenant, memory = tenant_env
    said = [{"content": f"{who}: {text}", "session": session, "event_time": f"2023-05-0{day}T10:00:00+00:00"}
            for who, text, session, day in (
                ("Gina", "I am going to Rome next week.", "s1", 1), ("Jon", "That sounds amazing!", "s1", 1),
                ("Gina", "I will see the Colosseum.", "s1", 1), ("Jon", "I started a dance studio.", "s2", 8),
                ("Gina", "How is the studio going?", "s2", 8))]
    path = jsonl(tmp_path / "chat.jsonl", said)
    done = ingest(cli_env, tenant, str(path), "--tiers")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["tiers"] is True and report["added"] == 3  # s1: two turns (the last alone), s2: one
    pages = memory.tiers.pages()
    assert [(p.session_id, p.user_text, p.assistant_text) for p in pages] == [
        ("s1", said[0]["content"], said[1]["content"]), ("s1", said[2]["content"], ""),
        ("s2", said[3]["content"], said[4]["content"])]
    assert pages[2].at.isoformat().startswith("2023-05-08")
    assert memory.list() == []  # nothing written as plain notes: the tiers promote what grows hot
    again = json.loads(ingest(cli_env, tenant, str(path), "--tiers").stdout)
    assert again["added"] == 0 and again["skipped"] == 3
    refused = runner.invoke(app, ["ingest", str(path), "-t", tenant, "--tiers", "--bulk"], env=cli_env)
    assert refused.exit_code == 3 and "--tiers" in refused.stderr


@pytest.mark.parametrize(("data", "said"), [
    ([], "holds no conversation"),
    ([{"sample_id": "x"}], "not LoCoMo data"),
    ([{"conversation": {"session_1": [{"speaker": "A", "text": "hi"}]}}], "session_1 turn 1 has no dia_id"),
    ([{"conversation": {"session_1": [{"speaker": "A", "text": 7, "dia_id": "D1:1"}]}}], "has no text"),
    ([{"conversation": {"session_1_date_time": "tomorrow", "session_1": []}}], "'tomorrow' is not a LoCoMo date-time"),
    ([{"conversation": {"session_1": "not turns"}}], "session_1 is not a list of turns"),
], ids=["empty", "no-conversation", "no-dia-id", "text-not-text", "odd-date", "turns-not-a-list"])
def test_a_malformed_locomo_file_is_one_line_and_exit_3(cli_env, tenant_env, tmp_path, data, said) -> None:
    tenant, memory = tenant_env
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["ingest", str(path), "-t", tenant], env=cli_env)
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and said in lines[0], result.stderr
    assert memory.list() == []  # nothing written
