"""What Neo4j Browser gets to explore a memory with: saved queries and a style, shipped in `cypher/browser/`."""

from __future__ import annotations

import re
from pathlib import Path

from ..core.shipped import cypher_folder

_SAVED_NAME = re.compile(r"^//\s*name:\s*(.+)$")


def saved_queries() -> list[tuple[str, str]]:
    """(name, statement) of each exploration query in `cypher/browser/queries.cypher`, for Neo4j Browser:
    a `// name: ...` line, then the statement, ending with a semicolon."""
    queries: list[tuple[str, str]] = []
    name, lines = None, []
    for line in (cypher_folder() / "browser" / "queries.cypher").read_text(encoding="utf-8").splitlines():
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
    return cypher_folder() / "browser" / "style.grass"
