"""Every Cypher statement the engine runs lives in a named file under `cypher/`; this loads them by name."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_PACKAGED = Path(__file__).parent / "cypher"  # wheel: force-included next to the code
_SOURCE = Path(__file__).parent.parent / "cypher"  # source checkout / editable install


@cache
def root() -> Path:
    for candidate in (_PACKAGED, _SOURCE):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"Cypher folder not found at {_PACKAGED} or {_SOURCE}: the installation is incomplete")


_FRAGMENT = re.compile(r"@([a-z_]+)")


def _read(path: Path) -> str:
    text = "\n".join(
        line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("//")
    ).strip()
    if not text:
        raise ValueError(f"{path} holds no statement")
    return text


@cache
def load(name: str, dialect: str | None = None) -> str:
    """The statement in `cypher/<name>.cypher`, e.g. load("note/get").

    `@name` stands for `cypher/fragments/name.cypher` (such as @note_map, the one projection of a
    note), so a shape shared by many statements is written once. `@` is not Cypher syntax.
    With a `dialect` ("25": a server that speaks Cypher 25, Neo4j 2026.01+), `cypher/<name>.<dialect>.cypher`
    is taken where one exists: the few statements that read better in it.
    """
    variant = root() / f"{name}.{dialect}.cypher"
    return _expand(_read(variant if dialect and variant.exists() else root() / f"{name}.cypher"))


@cache
def parameters(name: str) -> frozenset[str]:
    """The `$parameters` a statement reads (`$(expression)`, a dynamic type, is not one)."""
    return frozenset(_PARAMETER.findall(load(name)))


_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _expand(text: str) -> str:
    """`text` with every @fragment written out, fragments within fragments too."""
    return _FRAGMENT.sub(lambda m: _expand(_read(root() / "fragments" / f"{m.group(1)}.cypher")), text)


def schema_statements(dialect: str | None = None) -> list[tuple[str, str]]:
    """(name, statement) for each file in cypher/schema/, in file-name order (a dialect's variant in its place)."""
    files = sorted(p for p in (root() / "schema").glob("*.cypher") if "." not in p.stem)
    return [(f"schema/{p.stem}", load(f"schema/{p.stem}", dialect)) for p in files]


_SAVED_NAME = re.compile(r"^//\s*name:\s*(.+)$")


def saved_queries() -> list[tuple[str, str]]:
    """(name, statement) of each exploration query in `cypher/browser/queries.cypher`, for Neo4j Browser:
    a `// name: ...` line, then the statement, ending with a semicolon."""
    queries: list[tuple[str, str]] = []
    name, lines = None, []
    for line in (root() / "browser" / "queries.cypher").read_text(encoding="utf-8").splitlines():
        if match := _SAVED_NAME.match(line.strip()):
            name, lines = match.group(1).strip(), []
        elif name is not None and not line.lstrip().startswith("//") and line.strip():
            lines.append(line)
            if line.rstrip().endswith(";"):
                queries.append((name, "\n".join(lines).rstrip().rstrip(";")))
                name = None
    return queries


def browser_style() -> Path:
    """The GraSS style for Neo4j Browser (`:style`, then drop the file or paste its text)."""
    return root() / "browser" / "style.grass"
