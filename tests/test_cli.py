"""The CLI end to end against the real server: JSON output, one-line errors, documented exit codes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import ScriptedLLM
from amem_graph.cli import app

from .conftest import free_port

runner = CliRunner()


def run(env: dict[str, str], *args: str, input: str | None = None):
    return runner.invoke(app, list(args), env=env, input=input, catch_exceptions=False)


def test_init_add_get_search_roundtrip(cli_env: dict[str, str], cli_tenant: str) -> None:
    initialised = run(cli_env, "init", "--warm-up", "1")
    assert initialised.exit_code == 0 and "Warmed up: " in initialised.stdout
    added = run(cli_env, "add", "Nate adopted a turtle named Shelly.", "-t", cli_tenant, "--tag", "pets",
                "--source", "chat:1", "--event-time", "2023-01-20T10:00:00+00:00", "--json")
    assert added.exit_code == 0, added.output
    note = json.loads(added.stdout)
    assert note["tags"] == ["pets"] and note["event_time"].startswith("2023-01-20T10:00:00")
    got = json.loads(run(cli_env, "get", note["id"], "-t", cli_tenant, "--json").stdout)
    assert got["content"] == "Nate adopted a turtle named Shelly." and "embedding" not in got
    hits = json.loads(run(cli_env, "search", "What pet does Nate have?", "-t", cli_tenant, "-k", "3", "--json").stdout)
    assert hits[0]["note"]["id"] == note["id"] and hits[0]["score"] > 0
    from_stdin = run(cli_env, "add", "-", "-t", cli_tenant, "--json", input="Read from standard input.\n")
    assert json.loads(from_stdin.stdout)["content"] == "Read from standard input.\n"
    listed = json.loads(run(cli_env, "list", "-t", cli_tenant, "--json").stdout)
    assert len(listed) == 2
    table = run(cli_env, "get", note["id"], "-t", cli_tenant)
    assert "Nate adopted a turtle" in table.stdout
    stats = json.loads(run(cli_env, "stats", "--tenant", cli_tenant, "--json").stdout)
    entities = stats["labels"].pop("Entity")  # who and what the two notes mention: Nate, a turtle, Shelly...
    assert stats["labels"] == {"Note": 2, "Evolution": 2, "TenantLock": 1} and stats["store"] == "neo4j"
    assert entities >= 3 and stats["relationships"]["MENTIONS"] >= 3
    assert run(cli_env, "delete", note["id"], "-t", cli_tenant).exit_code == 0


def test_session_turns_and_search_with_provenance_from_the_cli(cli_env: dict[str, str], cli_tenant: str) -> None:
    turns = ["Caroline: I went to the pottery class.", "Melanie: Did you make anything?",
             "Caroline: A little blue bowl."]
    ids = [json.loads(run(cli_env, "add", t, "-t", cli_tenant, "--session", "chat-1", "--json").stdout)["id"]
           for t in turns]
    first = json.loads(run(cli_env, "get", ids[0], "-t", cli_tenant, "--json").stdout)
    assert first["session"] == "chat-1" and first["seq"] == 1 and first["speaker"] == "Caroline"
    assert first["neighbourhood"] == "\n".join(turns)
    hits = json.loads(run(cli_env, "search", "pottery", "-t", cli_tenant, "--mode", "fulltext", "--hops", "1",
                          "--speaker", "Melanie", "--json").stdout)
    assert [h["note"]["id"] for h in hits] == [ids[1]]  # its neighbourhood says pottery; the filter keeps Melanie
    block = run(cli_env, "search", "blue bowl", "-t", cli_tenant, "--mode", "fulltext", "--context", "-k", "3")
    assert block.exit_code == 0 and block.stdout.startswith("Relevant memories (best first):")
    table = run(cli_env, "search", "blue bowl", "-t", cli_tenant, "-k", "3")
    assert "words: blue," in table.stdout  # the query's words the hit holds ("bowl" on the cell's next line)
    bad = run(cli_env, "search", "bowl", "-t", cli_tenant, "--hops", "9")
    assert bad.exit_code == 2  # refused by the command line itself


def test_user_errors_are_one_line_with_exit_codes(cli_env: dict[str, str], cli_tenant: str) -> None:
    run(cli_env, "add", "Nate adopted a turtle.", "-t", cli_tenant)
    missing = run(cli_env, "get", "no-such-note", "-t", cli_tenant)
    assert missing.exit_code == 3
    assert missing.stderr.strip().startswith("error: no note 'no-such-note'")
    assert "Traceback" not in missing.output and len(missing.stderr.strip().splitlines()) == 1
    empty = run(cli_env, "add", "   ", "-t", cli_tenant)
    assert empty.exit_code == 3 and "content is empty" in empty.stderr
    bad_tenant = run(cli_env, "list", "-t", "no spaces allowed")
    assert bad_tenant.exit_code == 3 and "tenant" in bad_tenant.stderr
    markup = run(cli_env, "list", "-t", "[/]")  # user text in an error is not rich markup
    assert markup.exit_code == 3 and "tenant '[/]'" in markup.stderr
    bad_bytes = runner.invoke(app, ["add", "-", "-t", cli_tenant], env=cli_env, input=b"caf\xe9 latin-1")
    assert bad_bytes.exit_code == 3 and "not valid UTF-8" in bad_bytes.stderr


def test_a_tenant_that_holds_nothing_is_named_with_the_tenants_that_exist(
    cli_env: dict[str, str], cli_tenant: str,
) -> None:
    run(cli_env, "add", "Nate adopted a turtle.", "-t", cli_tenant)
    typo = cli_tenant[:-1] + ("x" if cli_tenant[-1] != "x" else "y")
    for command in (["search", "turtle"], ["list"], ["get", "0000"], ["show", "0000"], ["history", "0000"]):
        refused = run(cli_env, *command, "-t", typo)
        assert refused.exit_code == 3, (command, refused.output)
        line = refused.stderr.strip()
        assert len(line.splitlines()) == 1 and line.startswith(f"error: tenant {typo!r} holds nothing")
        assert f"did you mean {cli_tenant!r}?" in line and cli_tenant in line.split("the tenants here: ")[1]
    assert run(cli_env, "search", "turtle", "-t", cli_tenant).exit_code == 0


def test_unreachable_database_exit_5_names_the_uri(cli_env: dict[str, str]) -> None:
    uri = f"bolt://127.0.0.1:{free_port()}"
    result = run({**cli_env, "NEO4J_URI": uri}, "search", "anything")
    assert result.exit_code == 5 and uri in result.stderr and "Traceback" not in result.output


def test_no_database_configured_says_how_to_get_one(cli_env: dict[str, str], tmp_path) -> None:
    env = {**cli_env, "NEO4J_URI": "", "AMEM_HOME": str(tmp_path), "AMEM_STORE": "neo4j"}
    result = run(env, "list")
    assert result.exit_code == 5 and "amem-graph neo4j start" in result.stderr


def test_without_neo4j_the_embedded_store_serves_from_its_folder(cli_env: dict[str, str], tmp_path) -> None:
    env = {**cli_env, "NEO4J_URI": "", "AMEM_HOME": str(tmp_path)}
    added = run(env, "add", "Quinn keeps bees on the roof.", "-t", "solo", "--json")
    assert added.exit_code == 0, added.output
    listed = run(env, "list", "-t", "solo", "--json")
    assert [n["content"] for n in json.loads(listed.stdout)] == ["Quinn keeps bees on the roof."]  # read back from disk
    stats = run(env, "stats", "--json")
    assert json.loads(stats.stdout)["store"] == "embedded" and str(tmp_path / "embedded") in json.loads(stats.stdout)["location"]
    doctor = {row["check"]: row for row in json.loads(run(env, "doctor", "--json").stdout)}
    assert doctor["store"]["detail"].startswith("embedded, in ") and doctor["java"]["detail"].startswith("not needed")
    assert doctor["database"]["ok"] and doctor["database"]["detail"].endswith("nodes, schema set")
    rules = {row["check"]: row for row in json.loads(run({**env, "AMEM_ENTITIES": "rules"}, "doctor", "--json").stdout)}
    assert rules["entities"]["detail"].startswith("rule-based")
    bad = run({**env, "AMEM_STORE": "sqlite"}, "list")
    assert bad.exit_code == 3 and "AMEM_STORE" in bad.stderr


def test_neo4j_env_without_a_server(cli_env: dict[str, str], tmp_path) -> None:
    result = run({**cli_env, "AMEM_HOME": str(tmp_path)}, "neo4j", "env")
    assert result.exit_code == 6 and "no local Neo4j is running" in result.stderr
    status = run({**cli_env, "AMEM_HOME": str(tmp_path)}, "neo4j", "status", "--json")
    assert json.loads(status.stdout)["running"] is False


def test_doctor_reports_every_check(cli_env: dict[str, str]) -> None:
    result = run(cli_env, "doctor", "--json")
    checks = {row["check"]: row for row in json.loads(result.stdout)}
    assert set(checks) == {"store", "java", "neo4j jars", "cypher files", "database", "embedding model", "entities", "llm"}
    assert checks["entities"]["ok"] and checks["entities"]["detail"].startswith(("spaCy", "rule-based"))
    assert checks["store"]["detail"].startswith("neo4j, at bolt://")
    assert checks["database"]["ok"] and "384 dimensions" in checks["database"]["detail"]
    assert checks["embedding model"]["ok"] and "384 dimensions" in checks["embedding model"]["detail"]
    assert "loads on onnx-int8;" in checks["embedding model"]["detail"]  # the default backend, with no excuse
    assert result.exit_code == (0 if all(row["ok"] for row in checks.values()) else 7)


def test_doctor_fails_with_exit_7_when_the_database_is_down(cli_env: dict[str, str]) -> None:
    result = run({**cli_env, "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}"}, "doctor", "--json")
    checks = {row["check"]: row for row in json.loads(result.stdout)}
    assert result.exit_code == 7 and not checks["database"]["ok"]


def test_show_history_revert_and_reanalyze(cli_env: dict[str, str], cli_tenant: str, settings: Settings) -> None:
    first = json.loads(run(cli_env, "add", "Alice adopted a beagle named Max.", "-t", cli_tenant, "--json").stdout)
    second = json.loads(run(cli_env, "add", "Max the beagle loves the beach.", "-t", cli_tenant, "--json").stdout)
    with AgenticMemory(settings, tenant=cli_tenant) as mem:
        mem.update(first["id"], context="Max is Alice's first dog.", reason="edited by hand")
    shown = json.loads(run(cli_env, "show", first["id"], "-t", cli_tenant, "--json").stdout)
    assert shown["note"]["context"] == "Max is Alice's first dog."
    assert [v["version"] for v in shown["versions"]][-1] == shown["note"]["version"] - 1
    assert any(link["source_id"] == second["id"] and "beagle" in link["reason"] for link in shown["note"]["links"])
    table = run(cli_env, "show", first["id"], "-t", cli_tenant).stdout
    assert "RELATES_TO" in table and "edited by hand" in table
    history = json.loads(run(cli_env, "history", first["id"], "-t", cli_tenant, "--json").stdout)
    assert history["evolutions"][0]["trigger_note_id"] == first["id"]
    reverted = run(cli_env, "revert", first["id"], "1", "-t", cli_tenant, "--json")
    assert reverted.exit_code == 0 and json.loads(reverted.stdout)["context"] == first["context"]
    no_llm = run(cli_env, "reanalyze", "-t", cli_tenant)  # cli_env configures no LLM
    assert no_llm.exit_code == 8 and "AMEM_LLM_BASE_URL" in no_llm.stderr
    stats = json.loads(run(cli_env, "stats", "-t", cli_tenant, "--json").stdout)
    assert stats["evolutions"]["heuristic"]["evolutions"] == 2


def test_doctor_checks_the_llm_endpoint(cli_env: dict[str, str]) -> None:
    with ScriptedLLM() as llm:
        env = {**cli_env, "AMEM_LLM_BASE_URL": llm.base_url, "AMEM_LLM_MODEL": "scripted"}
        checks = {row["check"]: row for row in json.loads(run(env, "doctor", "--json").stdout)}
        assert checks["llm"]["ok"] and "lists scripted" in checks["llm"]["detail"]
        wrong = {row["check"]: row for row in json.loads(run({**env, "AMEM_LLM_MODEL": "gpt-x"}, "doctor", "--json").stdout)}
        assert not wrong["llm"]["ok"] and "does not list model 'gpt-x'" in wrong["llm"]["detail"]
    gone = {**cli_env, "AMEM_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "AMEM_LLM_TIMEOUT": "2"}
    result = run(gone, "doctor", "--json")
    checks = {row["check"]: row for row in json.loads(result.stdout)}
    assert result.exit_code == 7 and not checks["llm"]["ok"] and "connection" in checks["llm"]["detail"]


def test_tables_show_user_text_as_written(cli_env: dict[str, str], cli_tenant: str, settings: Settings) -> None:
    added = json.loads(run(cli_env, "add", "A [/x] tag and [bold]markup[/bold].", "-t", cli_tenant, "--json").stdout)
    with AgenticMemory(settings, tenant=cli_tenant) as mem:
        mem.update(added["id"], context="see [/y]", reason="[red]why[/red]")
    for args in (("show", added["id"]), ("history", added["id"]), ("list",), ("search", "markup")):
        result = run(cli_env, *args, "-t", cli_tenant)
        assert result.exit_code == 0, result.output
    assert "[red]why[/red]" in run(cli_env, "show", added["id"], "-t", cli_tenant).stdout


def test_shell_completion_offers_commands_and_subcommands() -> None:
    exe = str(Path(sys.executable).parent / "amem-graph")
    base = {k: v for k, v in os.environ.items() if not k.startswith("_AMEM_GRAPH")}

    def complete(words: str, cword: int) -> list[str]:
        env = {**base, "_AMEM_GRAPH_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
        run = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return run.stdout.split()

    assert complete("amem-graph exp", 1) == ["export"]
    assert set(complete("amem-graph tiers ", 2)) == {"show", "context", "promote"}
    # Typer finds the shell among the command's parent processes: a bash parent, not the test runner's.
    script = subprocess.run(["bash", "-c", f"'{exe}' --show-completion; exit $?"], capture_output=True, text=True, timeout=120)
    assert script.returncode == 0 and "_AMEM_GRAPH_COMPLETE=complete_bash" in script.stdout, script.stderr


@pytest.mark.slow
def test_demo_runs_on_the_embedded_store_with_nothing_configured(cli_env: dict[str, str], tmp_path) -> None:
    env = {**cli_env, "NEO4J_URI": "", "AMEM_HOME": str(tmp_path)}
    first = run(env, "demo")
    assert first.exit_code == 0, first.output
    assert "33 notes in tenant 'demo'" in first.stdout and "RELATES_TO →" in first.stdout
    assert "found" in first.stdout and "words:" in first.stdout and "embedded store in" in first.stdout
    assert "Added 33 notes records" in first.stdout
    again = run(env, "demo")
    assert again.exit_code == 0 and "Added 0 notes records (33 held already)" in again.stdout


@pytest.mark.embedded
def test_loading_the_embedding_model_draws_no_progress_bar(cli_env: dict[str, str], tmp_path) -> None:
    # A fresh process, so that the model really loads (in this one it may be loaded already).
    exe = str(Path(sys.executable).parent / "amem-graph")
    env = {**os.environ, **cli_env, "NEO4J_URI": "", "AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(tmp_path)}
    added = subprocess.run([exe, "add", "Quinn keeps bees on the roof.", "-t", "quiet"], env=env, check=False,
                           capture_output=True, text=True, timeout=300)
    assert added.returncode == 0, added.stderr
    assert "Added note" in added.stdout and "Loading weights" not in added.stderr and added.stderr == ""


@pytest.mark.embedded
@pytest.mark.parametrize("args", [
    ("search", "anything", "--mode", "bogus"),
    ("ingest", "notes.jsonl", "--format", "csv"),
    ("persona", "--kind", "hobbies"),
    ("bench", "ingest", "--store", "sqlite"),
    ("bench", "locomo", "--data", "locomo.json", "--store", "sqlite"),
    ("bench", "llm-cost", "--data", "locomo.json", "--mode", "pages"),
    ("bench", "locomo", "--data", "locomo.json", "--mode", "pages"),
    ("bench", "locomo", "--data", "locomo.json", "--k", "5,ten"),
])
def test_a_value_outside_an_options_choices_is_a_bad_command_line(cli_env: dict[str, str], args: tuple[str, ...]) -> None:
    result = runner.invoke(app, list(args), env=cli_env)
    assert result.exit_code == 2, result.output  # as a missing argument or an out-of-range --hops is
    assert "Invalid value for" in result.stderr and "Traceback" not in result.output


def test_entity_list_and_show(cli_env: dict[str, str], cli_tenant: str) -> None:
    for text in ("Alice adopted a beagle named Max.", "Max the beagle loves the beach.", "Alice: Max sleeps a lot."):
        assert run(cli_env, "add", text, "-t", cli_tenant).exit_code == 0
    listed = {e["key"]: e for e in json.loads(run(cli_env, "entity", "list", "-t", cli_tenant, "--json").stdout)}
    assert listed["max"]["mentions"] == 3 and listed["alice"] == {**listed["alice"], "kind": "person", "mentions": 2}
    assert "beagle" not in listed  # a common word is no entity
    shown = json.loads(run(cli_env, "entity", "show", "max", "-t", cli_tenant, "--json").stdout)
    assert [n["content"] for n in shown["notes"]][0] == "Alice adopted a beagle named Max."
    assert {r["entity"]["key"]: r["notes"] for r in shown["related"]}["alice"] == 2
    table = run(cli_env, "entity", "show", "Max", "-t", cli_tenant)
    assert table.exit_code == 0 and "Max the beagle loves the beach." in table.stdout
    missing = run(cli_env, "entity", "show", "Zed", "-t", cli_tenant)
    assert missing.exit_code == 3 and "no entity 'Zed'" in missing.stderr


def test_entity_merge_unmerge_and_suggest(cli_env: dict[str, str], cli_tenant: str) -> None:
    for text in ("Max the beagle loves my dog Maxie.", "My friend Caroline Hill said she was tired.", "Caroline: hi Max."):
        assert run(cli_env, "add", text, "-t", cli_tenant).exit_code == 0
    suggested = json.loads(run(cli_env, "entity", "suggest", "-t", cli_tenant, "--json").stdout)
    assert [(s["alias"]["key"], s["into"]["key"]) for s in suggested] == [("caroline hill", "caroline")]
    made = json.loads(run(cli_env, "entity", "merge", "Maxie", "Max", "--reason", "a test", "-t", cli_tenant, "--json").stdout)
    assert (made["alias"], made["into"], made["reason"], made["by"]) == ("maxie", "max", "a test", "user")
    assert "merged into it: maxie" in run(cli_env, "entity", "show", "Maxie", "-t", cli_tenant).stdout
    again = run(cli_env, "entity", "merge", "maxie", "Caroline", "-t", cli_tenant)
    assert again.exit_code == 3 and "unmerge it first" in again.stderr
    assert "of its own again" in run(cli_env, "entity", "unmerge", "maxie", "-t", cli_tenant).stdout
    applied = json.loads(run(cli_env, "entity", "suggest", "--apply", "-t", cli_tenant, "--json").stdout)
    assert [(m["alias"], m["by"]) for m in applied] == [("caroline hill", "rules")]
