"""Every statement the engine runs is a named file, and every name the code uses exists."""

import re
from pathlib import Path

import pytest

from amem_graph.store import cypher

pytestmark = pytest.mark.embedded  # no store: the files and the code only

PACKAGE = Path(__file__).parent.parent / "amem_graph"


def test_every_cypher_file_loads() -> None:
    files = list(cypher.root().rglob("*.cypher"))
    assert len(files) >= 20
    for path in files:
        name = path.relative_to(cypher.root()).with_suffix("").as_posix()
        assert cypher.load(name).strip()


def _statement_names() -> set[str]:
    """Every string in the code shaped like a statement name ("folder/name") whose folder is one of cypher/'s."""
    folders = {p.name for p in cypher.root().iterdir() if p.is_dir()}
    names = set()
    for source in PACKAGE.rglob("*.py"):
        names |= {n for n in re.findall(r'"([a-z_]+/[a-z0-9_]+)"', source.read_text()) if n.split("/")[0] in folders}
    return names


def test_every_statement_name_in_the_code_has_a_file() -> None:
    names = _statement_names()
    assert len(names) >= 20, "no statement names found"
    missing = [n for n in sorted(names) if not (cypher.root() / f"{n}.cypher").exists()]
    assert not missing


def test_every_statement_file_is_used() -> None:
    """Fragments are included by statements, schema statements run in file order, Browser's are for people."""
    names = _statement_names()
    unused = [
        name for path in cypher.root().rglob("*.cypher")
        if (name := path.relative_to(cypher.root()).with_suffix("").as_posix()).split("/")[0]
        not in ("fragments", "schema", "browser") and name.split(".")[0] not in names  # a dialect's variant: its base
    ]
    assert not unused


def test_a_dialect_variant_stands_in_for_its_statement_only_where_it_exists() -> None:
    assert "SEARCH node IN" in cypher.load("note/vector_search", "25")
    assert "db.index.vector.queryNodes" in cypher.load("note/vector_search")
    assert cypher.load("note/get", "25") == cypher.load("note/get")  # no variant: the statement itself
    plain, modern = dict(cypher.schema_statements()), dict(cypher.schema_statements("25"))
    assert plain.keys() == modern.keys()  # a variant replaces its statement, never adds one
    assert "WITH [n.tenant]" in modern["schema/050_note_embedding"] and "WITH [n.tenant]" not in plain["schema/050_note_embedding"]


def test_no_cypher_is_built_from_strings_in_python() -> None:
    offenders = []
    for source in PACKAGE.rglob("*.py"):
        text = source.read_text()
        if (
            re.search(r"(execute_query|\.run)\(\s*f[\"']", text)
            or re.search(r"[\"'](MATCH|CREATE|MERGE|CALL|RETURN|UNWIND|SET|DELETE) ", text)
            or ".format(" in text
        ):
            offenders.append(source.name)
    assert not offenders


def test_schema_is_applied_in_file_order() -> None:
    names = [name for name, _ in cypher.schema_statements()]
    assert names == sorted(names) and names[0].startswith("schema/010")
