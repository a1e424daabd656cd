"""The MemoryOS tier commands end to end against the real server: turns, flush, show, persona, context, promote."""

import json

import pytest
from typer.testing import CliRunner

from amem_graph import AgenticMemory
from amem_graph.cli import app

runner = CliRunner()

TURNS = [("I am a vegetarian and I love hiking in the Alps.", "The Alps have wonderful trails."),
         ("My sister Anna lives in Zurich.", "Zurich is lovely in spring."),
         ("I work as a nurse in Geneva.", "")]


def run(env: dict[str, str], *args: str):
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def cli_tenant(memory: AgenticMemory, tenant: str) -> str:
    """The `tenant` fixture; `memory` deletes it at the end."""
    return tenant


def add_turns(env: dict[str, str], tenant: str, turns=TURNS) -> list[dict]:
    pages = []
    for user, assistant in turns:
        result = run(env, "turn", "add", user, assistant, "-t", tenant, "--session", "s1", "--json")
        assert result.exit_code == 0, result.output
        pages.append(json.loads(result.stdout))
    return pages


def show(env: dict[str, str], tenant: str, *args: str) -> dict:
    result = run(env, "tiers", "show", "-t", tenant, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_turns_stay_in_stm_until_flushed(cli_env: dict[str, str], cli_tenant: str) -> None:
    pages = add_turns(cli_env, cli_tenant, TURNS[:2])
    assert [p["seq"] for p in pages] == [1, 2] and pages[0]["tier"] == "stm"
    tiers = show(cli_env, cli_tenant, "--session", "s1")
    assert [p["seq"] for p in tiers["stm"]] == [1, 2] and tiers["segments"] == [] and tiers["persona"] == []
    table = run(cli_env, "tiers", "show", "-t", cli_tenant)
    assert "Short-term memory (session s1)" in table.stdout and "My sister Anna" in table.stdout
    flushed = run(cli_env, "turn", "flush", "-t", cli_tenant, "--session", "s1")
    assert flushed.exit_code == 0 and "Moved 2 pages" in flushed.stdout
    tiers = show(cli_env, cli_tenant)
    assert tiers["stm"] == [] and sum(s["pages"] for s in tiers["segments"]) == 2


def test_pages_past_the_stm_capacity_form_a_segment(cli_env: dict[str, str], cli_tenant: str) -> None:
    env = {**cli_env, "AMEM_STM_CAPACITY": "2"}
    add_turns(env, cli_tenant)
    tiers = show(env, cli_tenant)
    assert [p["seq"] for p in tiers["stm"]] == [2, 3]
    assert len(tiers["segments"]) == 1 and tiers["segments"][0]["pages"] == 1


def test_promote_persona_and_context(cli_env: dict[str, str], cli_tenant: str) -> None:
    add_turns(cli_env, cli_tenant)
    assert run(cli_env, "turn", "flush", "-t", cli_tenant).exit_code == 0
    cold = run(cli_env, "tiers", "promote", "-t", cli_tenant)  # fresh segments are below the default heat 5
    assert cold.exit_code == 0 and "No segment has reached the promotion heat" in cold.stdout
    hot = run({**cli_env, "AMEM_PROMOTE_HEAT": "0"}, "tiers", "promote", "-t", cli_tenant)
    assert hot.exit_code == 0 and hot.stdout.count("Segment ") >= 1 and "  note " in hot.stdout
    facts = json.loads(run(cli_env, "persona", "-t", cli_tenant, "--json").stdout)
    assert isinstance(facts, list) and all(f["kind"] in ("profile", "user_knowledge", "assistant_knowledge") for f in facts)
    block = run(cli_env, "tiers", "context", "Where does Anna live?", "-t", cli_tenant)
    assert block.exit_code == 0
    for header in ("## Recent dialogue (short-term memory)", "## Related topics (mid-term memory)",
                   "## What is known about the user (persona)", "## Long-term memories (notes)"):
        assert header in block.stdout
    assert "My sister Anna lives in Zurich." in block.stdout
    found = json.loads(run(cli_env, "tiers", "context", "Anna", "-t", cli_tenant, "--json").stdout)
    assert found["query"] == "Anna" and found["segments"]
    then = json.loads(run(cli_env, "tiers", "context", "Anna", "-t", cli_tenant, "--json", "--as-of", "2000-01-01").stdout)
    assert then["query"] == "Anna" and then["stm"] == then["segments"] == then["facts"] == then["notes"] == []


def test_bad_input_is_one_line_with_exit_3(cli_env: dict[str, str], cli_tenant: str) -> None:
    cases = [(("turn", "add", "  ", ""), "a turn needs text on at least one side"),
             (("turn", "add", "hi", "--at", "yesterday"), "is not an ISO-8601 date-time")]
    for args, message in cases:
        result = run(cli_env, *args, "-t", cli_tenant)
        assert result.exit_code == 3, result.output
        assert result.stderr.strip().startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
        assert message in result.stderr and "Traceback" not in result.output
    assert show(cli_env, cli_tenant)["stm"] == []  # nothing was written
    unknown = runner.invoke(app, ["persona", "--kind", "hobbies", "-t", cli_tenant], env=cli_env)
    assert unknown.exit_code == 2 and "'hobbies' is not one of 'profile'" in unknown.stderr  # a bad command line

