"""Configuration from the environment: NEO4J_* for the database, AMEM_* for the engine."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InvalidInput

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """Per-user data folder: $AMEM_HOME, else $XDG_DATA_HOME/amem-graph, else ~/.local/share/amem-graph."""
    env = os.environ if env is None else env
    if home := env.get("AMEM_HOME"):
        return Path(home).expanduser()
    xdg = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "amem-graph"


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1, maximum: int = 2**31) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(f"{name}={raw!r} is not an integer") from None
    if not minimum <= value <= maximum:
        raise InvalidInput(f"{name}={value} must be from {minimum} to {maximum}")
    return value


@dataclass(frozen=True)
class Settings:
    """Everything the engine needs to connect and run.

    `neo4j_uri` None means "the local server that `amem-graph neo4j start` runs, if any".
    Any driver URI works: bolt://, neo4j:// (routing, clusters) and neo4j+s:// (Aura).
    """

    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str | None = None
    neo4j_database: str | None = None
    embedding_model: str = DEFAULT_MODEL
    embedding_batch_size: int = 64
    tenant: str = "default"
    max_content_chars: int = 20_000
    write_batch_size: int = 500
    home: Path = field(default_factory=default_home)
    local_bolt_port: int = 7687
    local_http_port: int = 7474

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            neo4j_uri=env.get("NEO4J_URI") or None,
            neo4j_user=env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or "neo4j",
            neo4j_password=env.get("NEO4J_PASSWORD") or None,
            neo4j_database=env.get("NEO4J_DATABASE") or None,
            embedding_model=env.get("AMEM_EMBEDDING_MODEL") or DEFAULT_MODEL,
            embedding_batch_size=_int(env, "AMEM_EMBEDDING_BATCH_SIZE", 64),
            tenant=env.get("AMEM_TENANT") or "default",
            max_content_chars=_int(env, "AMEM_MAX_CONTENT_CHARS", 20_000),
            write_batch_size=_int(env, "AMEM_WRITE_BATCH_SIZE", 500),
            home=default_home(env),
            local_bolt_port=_int(env, "AMEM_NEO4J_BOLT_PORT", 7687, maximum=65535),
            local_http_port=_int(env, "AMEM_NEO4J_HTTP_PORT", 7474, maximum=65535),
        )

    @property
    def local_server_dir(self) -> Path:
        return self.home / "neo4j"
