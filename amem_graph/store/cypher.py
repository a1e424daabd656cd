"""Every Cypher statement the engine runs lives in a named file under `cypher/`; this loads them by name."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ..core.shipped import cypher_folder as root

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
