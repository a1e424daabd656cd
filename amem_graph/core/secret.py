"""Generated secrets kept in files only their owner can read (0600): the local Neo4j password, the MCP token."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def secret_file(path: Path) -> str:
    """The secret in `path`; when there is none, a new one (hex: no character a shell, a config file or an
    admin tool would read as syntax), written with mode 0600 from the start."""
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(20)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: theirs is the one
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    return value
