"""Every command's table or text form (not --json) on both stores, at 80 columns as in a pipe or a small
terminal: no traceback, nothing cut with an ellipsis, content that keeps its words together, and short ids
that the commands taking a note id accept."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from amem_graph.bench.scripted_llm import ScriptedLLM
from amem_graph.cli import app

STORES = ("neo4j", "embedded")
runner = CliRunner()

NOTES = ("Alice adopted a beagle named Max, a very lively dog who likes the long sandy beach.",
         "Max the beagle chewed Alice's running shoes yesterday evening at home.",
         "Bob: how is Max doing these days after his visit to the vet?")
TURNS = (("I am a vegetarian and I love hiking in the Alps.", "The Alps have wonderful trails."),
         ("My sister Anna lives in Zurich.", "Zurich is lovely in spring."),
         ("I work as a nurse in Geneva.", ""))


@pytest.fixture
def cli_env(cli_env: dict[str, str], store_kind: str, tmp_path: Path) -> dict[str, str]:
    """The test's CLI environment at 80 columns (the embedded store in a folder of its own)."""
    narrow = {**cli_env, "COLUMNS": "80"}
    if store_kind == "embedded":
        return {**narrow, "NEO4J_URI": "", "AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(tmp_path / "embedded")}
    return {**narrow, "AMEM_STORE": "neo4j"}


def run(env: dict[str, str], *args: str, input: str | None = None) -> str:
    """The command's standard output; it must succeed, and cut nothing short. Lines of text wrap at the
    terminal's width between words: `words` reads them as one."""
    result: Result = runner.invoke(app, list(args), env=env, input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "…" not in result.stdout, result.stdout
    assert_fits(result.stdout)
    return result.stdout


def assert_fits(output: str) -> None:
    """Every table line within 80 columns, and ending in the table's right edge (a wider one is cropped).
    Text outside tables wraps at the terminal, or not at all where it is meant to be pasted (a prompt)."""
    for line in output.splitlines():
        if line[:1] in "┏┃┡│└":
            assert len(line) <= 80 and line[-1:] in "┓┃┩│┘", line


def words(output: str) -> str:
    return " ".join(output.split())


def rows(output: str, key: str) -> list[dict[str, str]]:
    """The rows of the table that has a column `key` (a one-line value): {header: text}, with the lines
    of a wrapped cell joined by spaces; a row starts on each line where `key` has text."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if key in _cells(line, "┃"))
    headers = _cells(lines[start], "┃")
    found: list[dict[str, list[str]]] = []
    for line in lines[start + 2:]:  # past the line under the headers
        if not line.startswith("│"):
            break
        cells = _cells(line, "│")
        if cells[headers.index(key)]:
            found.append({header: [] for header in headers})
        for header, cell in zip(headers, cells, strict=True):
            if cell:
                found[-1][header].append(cell)
    return [{header: " ".join(parts) for header, parts in row.items()} for row in found]


def width(output: str, key: str, header: str) -> int:
    """How many characters wide the column `header` is, in the table that has a column `key`."""
    line = next(line for line in output.splitlines() if key in _cells(line, "┃"))
    raw = line.split("┃")[1:-1]
    return len(raw[_cells(line, "┃").index(header)]) - 2  # less the padding


def _cells(line: str, bar: str) -> list[str]:
    return [cell.strip() for cell in line.split(bar)[1:-1]]


def assert_readable(output: str, key: str, header: str, texts: list[str]) -> None:
    """The column holds these texts, whole and in order, at a width that keeps several words on a line."""
    assert [row[header] for row in rows(output, key)] == texts
    assert width(output, key, header) >= 20


def added_id(output: str) -> str:
    found = re.search(r"Added note (\S+)", output)
    assert found, output
    return found.group(1)


def test_note_commands(cli_env: dict[str, str], cli_tenant: str) -> None:
    assert "Schema ready" in run(cli_env, "init", "--warm-up", "0")
    first = added_id(run(cli_env, "add", NOTES[0], "-t", cli_tenant))
    second = added_id(run(cli_env, "add", NOTES[1], "-t", cli_tenant, "--session", "s1"))
    third = added_id(run(cli_env, "add", NOTES[2], "-t", cli_tenant, "--session", "s1"))
    assert NOTES[0] in words(run(cli_env, "get", first[:8], "-t", cli_tenant))  # the short id tables show

    listed = run(cli_env, "list", "-t", cli_tenant)
    assert_readable(listed, "id", "content", list(reversed(NOTES)))
    assert [row["id"] for row in rows(listed, "id")] == [third[:8], second[:8], first[:8]]

    found = run(cli_env, "search", "What is Alice's dog called?", "-t", cli_tenant)
    hits = rows(found, "score")
    assert {row["content"] for row in hits} == set(NOTES) and width(found, "score", "content") >= 20
    assert {row["id"] for row in hits} == {first[:8], second[:8], third[:8]}
    # Each hit says how it was found: the query's words it holds, or the path from a seed.
    assert any(row["found"] == "words: Alice, dog" for row in hits), hits
    assert run(cli_env, "search", "beagle", "-t", cli_tenant, "--context").startswith("Relevant memories (best first):")

    shown = words(run(cli_env, "show", first[:8], "-t", cli_tenant))
    assert NOTES[0] in shown and "RELATES_TO" in shown and "earlier versions" in shown
    history = run(cli_env, "history", first[:8], "-t", cli_tenant)
    versions = rows(history, "version")
    said = "".join(NOTES[1].split()[:6])  # the reason names the note that evolved it by its words
    assert versions[0]["version"] == "1" and said in versions[0]["reason"].replace(" ", "")  # folded, whole
    evolutions = rows(history, "evolution")
    assert [row["trigger"] for row in evolutions] == [first[:8], second[:8]]
    assert evolutions[1]["revised"] == f"{first[:8]} v1" and evolutions[0]["analysis"] == "heuristic (heuristic-v1)"
    assert "restored to version 1" in run(cli_env, "revert", first[:8], "1", "-t", cli_tenant)

    for args in (("stats",), ("stats", "-t", cli_tenant)):
        stats = run(cli_env, *args)
        assert "schema version" in words(stats) and {row["label / relationship"] for row in rows(stats, "count")} >= {"Note"}
        assert "note_embedding" in {row["index"] for row in rows(stats, "state")}
    assert f"Deleted note {third}" in run(cli_env, "delete", third[:8], "-t", cli_tenant)


def test_stats_table(cli_env: dict[str, str], cli_tenant: str) -> None:
    run(cli_env, "add", NOTES[0], "-t", cli_tenant)
    stats = run(cli_env, "stats", "-t", cli_tenant)  # the embedded store's index has no population to show
    assert {row["label / relationship"]: row["count"] for row in rows(stats, "count")}["Note"] == "1"
    assert "note_embedding" in {row["index"] for row in rows(stats, "state")}


def test_an_id_prefix_names_one_note_or_is_an_error(cli_env: dict[str, str], cli_tenant: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps({"content": text}) + "\n" for text in NOTES[:2]))
    run(cli_env, "ingest", str(notes), "-t", cli_tenant, "--bulk")
    exported = tmp_path / "export.jsonl"
    run(cli_env, "export", "-t", cli_tenant, "--out", str(exported))
    # Two notes whose ids start alike, through an export with the ids rewritten.
    text = exported.read_text()
    start = uuid.uuid4().hex[:4]  # ids are unique across tenants: no two runs share these
    tail = uuid.uuid4().hex[:12]
    for number, row in enumerate(rows(run(cli_env, "list", "-t", cli_tenant), "id"), start=1):
        full = re.search(rf"{row['id']}[0-9a-f-]{{28}}", text).group(0)
        text = text.replace(full, f"{start}{number}000-0000-4000-8000-{tail}")
    exported.write_text(text)
    run(cli_env, "delete", "-t", cli_tenant, "--yes")
    run(cli_env, "import", str(exported))
    both = runner.invoke(app, ["get", start, "-t", cli_tenant], env=cli_env)
    assert both.exit_code == 3 and f"2 notes have ids starting with '{start}'" in both.stderr
    assert "give more characters" in both.stderr and len(both.stderr.strip().splitlines()) == 1
    assert f"{start}2000-0000-4000-8000-{tail}" in words(run(cli_env, "show", f"{start}2", "-t", cli_tenant))
    missing = runner.invoke(app, ["show", "ffff", "-t", cli_tenant], env=cli_env)
    assert missing.exit_code == 3 and "no note 'ffff'" in missing.stderr
    short = runner.invoke(app, ["get", start[:3], "-t", cli_tenant], env=cli_env)  # too short to look up as a prefix
    assert short.exit_code == 3 and f"no note '{start[:3]}'" in short.stderr


def test_tier_commands(cli_env: dict[str, str], cli_tenant: str) -> None:
    for user, assistant in TURNS:
        assert "Stored turn" in run({**cli_env, "AMEM_STM_CAPACITY": "2"}, "turn", "add", user, assistant,
                                    "-t", cli_tenant, "--session", "s1")
    tiers = run(cli_env, "tiers", "show", "-t", cli_tenant)
    assert_readable(tiers, "seq", "text", [u + (f" Assistant: {a}" if a else "") for u, a in TURNS[1:]])
    segments = rows(tiers, "heat")
    assert len(segments) == 1 and segments[0]["pages"] == "1" and len(segments[0]["id"]) == 8
    assert "Moved 2 pages" in run(cli_env, "turn", "flush", "-t", cli_tenant)
    promoted = run({**cli_env, "AMEM_PROMOTE_HEAT": "0"}, "tiers", "promote", "-t", cli_tenant)
    assert "Segment " in promoted and "  note " in promoted
    persona = run(cli_env, "persona", "-t", cli_tenant)
    assert "Persona (long-term)" in persona and all(row["text"] for row in rows(persona, "kind"))
    block = run(cli_env, "tiers", "context", "Where does Anna live?", "-t", cli_tenant)
    assert "## Recent dialogue (short-term memory)" in block and "My sister Anna lives in Zurich." in words(block)


def test_admin_commands(cli_env: dict[str, str], cli_tenant: str, store_kind: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps({"content": text, "source": f"file:{i}"}) + "\n" for i, text in enumerate(NOTES)))
    assert "Added 3 notes records (0 held already)" in run(cli_env, "ingest", str(notes), "-t", cli_tenant)
    out = tmp_path / "export.jsonl"
    assert f"to {out}" in words(run(cli_env, "export", "-t", cli_tenant, "--out", str(out)))
    assert "Deleted tenant" in run(cli_env, "delete", "-t", cli_tenant, "--yes")
    assert f"Imported tenant {cli_tenant}" in run(cli_env, "import", str(out))
    note_id = rows(run(cli_env, "list", "-t", cli_tenant), "id")[0]["id"]
    with ScriptedLLM() as llm:
        llm_env = {**cli_env, "AMEM_LLM_BASE_URL": llm.base_url, "AMEM_LLM_API_KEY": "scripted", "AMEM_LLM_MODEL": "scripted"}
        assert "Reanalysed 1 note(s)" in run(llm_env, "reanalyze", note_id, "-t", cli_tenant)
    assert "Neo4j Browser:" in run(cli_env, "browser", "-t", cli_tenant)
    doctor = runner.invoke(app, ["doctor"], env=cli_env, catch_exceptions=False)
    checks = rows(doctor.stdout, "check")
    assert {row["check"] for row in checks} >= {"store", "database", "embedding model"}
    assert doctor.exit_code == (0 if {row[""] for row in checks} == {"ok"} else 7) and "…" not in doctor.stdout
    assert_fits(doctor.stdout)
    assert next(row for row in checks if row["check"] == "store")["detail"].startswith(store_kind)
    assert "running" in run(cli_env, "neo4j", "status")
    if store_kind == "embedded":  # on Neo4j it re-embeds the whole shared database: test_cli_browser's slow test
        assert "Re-embedded" in run(cli_env, "consolidate", "--yes")


def test_demo(cli_env: dict[str, str], cli_tenant: str) -> None:
    shown = run(cli_env, "demo", "-t", cli_tenant)
    assert f"notes in tenant '{cli_tenant}'" in shown and "words:" in shown
    assert all(row["said"] for row in rows(shown, "note")) and width(shown, "note", "said") >= 20
