"""Configuration from the environment: NEO4J_* for the database, AMEM_* for the engine."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from .core.tuning import Tuning
from .errors import InvalidInput

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
STORES = ("auto", "neo4j", "embedded")
ENTITY_EXTRACTORS = ("auto", "spacy", "rules", "off")  # auto: the rules; spacy: spaCy's model (the [entities] extra)
# onnx: ONNX Runtime with torch's vectors; onnx-int8: its weights quantised to int8; auto: the first of onnx-int8,
# onnx, torch that runs here.
EMBEDDING_BACKENDS = ("auto", "onnx", "onnx-int8", "torch")
DEFAULT_LLM_MODEL = "gpt-4o-mini"
# How a server is asked for JSON, in its dialect: OpenAI's json_schema (also vLLM, SGLang, Ollama), a json_object
# that carries the schema (llama.cpp's servers), a bare json_object, or nothing (the answer is parsed as it comes).
# Where queued analyses run: a thread of this process from the moment it opens the memory (resuming what earlier
# processes left), a thread started by this process's own queued writes (one-shot commands), or elsewhere only.
WORKERS = ("thread", "writes", "off")
RESPONSE_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")
OPENAI_BASE_URL = "https://api.openai.com/v1"  # with a key and no base URL
N = TypeVar("N", int, float)


def default_home(env: Mapping[str, str] | None = None) -> Path:
    """Per-user data folder: $AMEM_HOME, else $XDG_DATA_HOME/amem-graph, else ~/.local/share/amem-graph."""
    env = os.environ if env is None else env
    if home := env.get("AMEM_HOME"):
        return Path(home).expanduser()
    xdg = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg).expanduser() / "amem-graph"


def _number(env: Mapping[str, str], name: str, default: N, minimum: N, maximum: N) -> N:
    """A number from the environment, of the type of `default`, in [minimum, maximum]."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = type(default)(raw)
    except ValueError:
        kind = "an integer" if isinstance(default, int) else "a number"
        raise InvalidInput(f"{name}={raw!r} is not {kind}") from None
    if not minimum <= value <= maximum:
        raise InvalidInput(f"{name}={value} must be from {minimum} to {maximum}")
    return value


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1, maximum: int = 2**31) -> int:
    return _number(env, name, default, minimum, maximum)


@dataclass(frozen=True)
class LLMSettings:
    """An OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama, OpenRouter...).

    Configured when AMEM_LLM_BASE_URL or AMEM_LLM_API_KEY is set; without one the heuristic analyser runs."""

    base_url: str | None = None
    api_key: str | None = None
    model: str = DEFAULT_LLM_MODEL
    timeout_s: float = 30.0
    max_retries: int = 3
    concurrency: int = 4
    backoff_s: float = 0.5  # first retry waits up to this long, doubling each time
    response_format: str = "json_schema"  # how structured output is asked for: one of RESPONSE_FORMATS
    examples: bool = False  # a worked example before each analysis (small local models need one)
    # A write returns before the model's analysis (queued, applied by a worker) unless this is off; see docs/write-path.md.
    background: bool = True
    worker: str = "thread"  # WORKERS; off: another process analyses (`amem-graph worker`)
    lease_s: float = 300.0  # how long a worker's claim on a queued note holds before another may take it

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key)

    @property
    def structured(self) -> bool:
        return self.response_format != "none"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> LLMSettings:
        return cls(
            # Only AMEM_LLM_* are read: OPENAI_API_KEY alone must not send every note to a provider the user
            # never chose for this, nor go to whatever server AMEM_LLM_BASE_URL names.
            base_url=env.get("AMEM_LLM_BASE_URL") or None,
            api_key=env.get("AMEM_LLM_API_KEY") or None,
            model=env.get("AMEM_LLM_MODEL") or DEFAULT_LLM_MODEL,
            timeout_s=_number(env, "AMEM_LLM_TIMEOUT", 30.0, 0.1, 600.0),
            max_retries=_int(env, "AMEM_LLM_MAX_RETRIES", 3, minimum=0, maximum=10),
            concurrency=_int(env, "AMEM_LLM_CONCURRENCY", 4, maximum=256),
            backoff_s=_number(env, "AMEM_LLM_BACKOFF", 0.5, 0.0, 60.0),
            response_format=_response_format(env),
            examples=_switch(env, "AMEM_LLM_EXAMPLES", False),
            background=_switch(env, "AMEM_LLM_BACKGROUND", True),
            worker=_choice(env, "AMEM_LLM_WORKER", WORKERS),
            lease_s=_number(env, "AMEM_LLM_LEASE", 300.0, 5.0, 86_400.0),
        )


def _switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    """An on/off setting: 1/true/yes/on or 0/false/no/off."""
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return default
    if raw not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        raise InvalidInput(f"{name}={raw!r} must be on or off (1/0, true/false, yes/no)")
    return raw in ("1", "true", "yes", "on")


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (the first when unset)."""
    value = (env.get(name) or choices[0]).strip().lower()
    if value not in choices:
        raise InvalidInput(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _response_format(env: Mapping[str, str]) -> str:
    """AMEM_LLM_RESPONSE_FORMAT, else the older AMEM_LLM_STRUCTURED switch (off means none)."""
    value = (env.get("AMEM_LLM_RESPONSE_FORMAT") or "").strip().lower()
    if not value:
        return "json_schema" if _switch(env, "AMEM_LLM_STRUCTURED", True) else "none"
    if value not in RESPONSE_FORMATS:
        raise InvalidInput(f"AMEM_LLM_RESPONSE_FORMAT must be one of {', '.join(RESPONSE_FORMATS)}, got {value!r}")
    return value


def _release(value: str | None) -> str | None:
    """AMEM_NEO4J_VERSION: a Neo4j release such as 5.26.30 or 2026.08.1."""
    if value is not None and not re.fullmatch(r"\d+\.\d+(\.\d+)?", value):
        raise InvalidInput(f"AMEM_NEO4J_VERSION must be a Neo4j release such as 2026.08.1, got {value!r}")
    return value


@dataclass(frozen=True)
class TierSettings:
    """The MemoryOS hierarchy (Kang et al., 2025); defaults are the paper's.

    Heat = alpha·visits + beta·interaction_len + gamma·exp(−Δt/mu), Δt in seconds since the segment was
    last touched; a segment whose heat reaches `promote_heat` is promoted to long-term memory."""

    stm_capacity: int = 7  # pages per tenant and session
    merge_threshold: float = 0.6  # F_score = cosine + keyword Jaccard, to join an existing segment
    segment_capacity: int = 200  # active segments per tenant; past it the coldest is archived
    heat_alpha: float = 1.0
    heat_beta: float = 1.0
    heat_gamma: float = 1.0
    heat_mu: float = 1e7
    promote_heat: float = 5.0
    fact_capacity: int = 100  # active persona facts per kind and tenant
    continuity: float = 0.35  # cosine to the previous page from which a turn continues its chain
    assistant: str = "assistant"  # whose knowledge assistant_knowledge facts are

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> TierSettings:
        return cls(
            stm_capacity=_int(env, "AMEM_STM_CAPACITY", 7, maximum=1_000),
            merge_threshold=_number(env, "AMEM_MERGE_THRESHOLD", 0.6, 0.0, 2.0),
            segment_capacity=_int(env, "AMEM_SEGMENT_CAPACITY", 200, maximum=100_000),
            heat_alpha=_number(env, "AMEM_HEAT_ALPHA", 1.0, 0.0, 1e6),
            heat_beta=_number(env, "AMEM_HEAT_BETA", 1.0, 0.0, 1e6),
            heat_gamma=_number(env, "AMEM_HEAT_GAMMA", 1.0, 0.0, 1e6),
            heat_mu=_number(env, "AMEM_HEAT_MU", 1e7, 1.0, 1e12),
            promote_heat=_number(env, "AMEM_PROMOTE_HEAT", 5.0, 0.0, 1e9),
            fact_capacity=_int(env, "AMEM_FACT_CAPACITY", 100, maximum=100_000),
            continuity=_number(env, "AMEM_CONTINUITY", 0.35, -1.0, 1.0),
            assistant=env.get("AMEM_ASSISTANT") or "assistant",
        )

    def heat_params(self) -> dict[str, float]:
        """The parameters of cypher/fragments/segment_heat.cypher."""
        return {"alpha": self.heat_alpha, "beta": self.heat_beta, "gamma": self.heat_gamma, "mu": self.heat_mu}


@dataclass(frozen=True)
class Settings:
    """Everything the engine needs to connect and run.

    `neo4j_uri` None means "the local server that `amem-graph neo4j start` runs, if any".
    Any driver URI works: bolt://, neo4j:// (routing, clusters) and neo4j+s:// (Aura).
    """

    store: str = "auto"  # auto: Neo4j when NEO4J_URI is set, else the embedded store; or neo4j, embedded
    data_dir: Path | None = None  # the embedded store's folder; None: $AMEM_HOME/embedded
    read_only: bool = False  # the embedded store opened to read only: never its writer, even when none writes it
    neo4j_uri: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str | None = None
    neo4j_database: str | None = None
    neo4j_timeout_s: float = 5.0  # how long a call waits for an unreachable Neo4j before StoreUnavailable
    neo4j_version: str | None = None  # the local server's release (`amem-graph neo4j ...`); None: the pinned LTS
    embedding_model: str = DEFAULT_MODEL
    embedding_batch_size: int = 64
    embedding_backend: str = "auto"  # auto: onnx-int8, else onnx, else torch (EMBEDDING_BACKENDS)
    tenant: str = "default"
    max_content_chars: int = 100_000  # a pasted document or a long answer with code; passages make all of it findable
    write_batch_size: int = 500
    home: Path = field(default_factory=default_home)
    local_bolt_port: int = 7687
    local_http_port: int = 7474
    llm: LLMSettings = field(default_factory=LLMSettings)
    candidates: int = 5  # neighbours offered to the analyser per new note
    link_budget: int = 20  # valid links per note; past it the weakest is invalidated
    evolution_attempts: int = 3  # re-analyses when a neighbour changed under a concurrent add
    tiers: TierSettings = field(default_factory=TierSettings)
    entities: str = "auto"  # which extractor finds the entities a note mentions (ENTITY_EXTRACTORS)
    tuning: Tuning = field(default_factory=Tuning)  # how search ranks (set in code: dataclasses.replace)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        store = (env.get("AMEM_STORE") or "auto").strip().lower()
        if store not in STORES:
            raise InvalidInput(f"AMEM_STORE must be one of {', '.join(STORES)}, got {store!r}")
        entities = (env.get("AMEM_ENTITIES") or "auto").strip().lower()
        if entities not in ENTITY_EXTRACTORS:
            raise InvalidInput(f"AMEM_ENTITIES must be one of {', '.join(ENTITY_EXTRACTORS)}, got {entities!r}")
        backend = (env.get("AMEM_EMBEDDING_BACKEND") or "auto").strip().lower()
        if backend not in EMBEDDING_BACKENDS:
            raise InvalidInput(f"AMEM_EMBEDDING_BACKEND must be one of {', '.join(EMBEDDING_BACKENDS)}, got {backend!r}")
        return cls(
            store=store,
            data_dir=Path(env["AMEM_DATA_DIR"]).expanduser() if env.get("AMEM_DATA_DIR") else None,
            read_only=_switch(env, "AMEM_READ_ONLY", False),
            neo4j_uri=env.get("NEO4J_URI") or None,
            neo4j_user=env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or "neo4j",
            neo4j_password=env.get("NEO4J_PASSWORD") or None,
            neo4j_database=env.get("NEO4J_DATABASE") or None,
            neo4j_timeout_s=_number(env, "AMEM_NEO4J_TIMEOUT", 5.0, 0.5, 300.0),
            neo4j_version=_release(env.get("AMEM_NEO4J_VERSION") or None),
            embedding_model=env.get("AMEM_EMBEDDING_MODEL") or DEFAULT_MODEL,
            embedding_batch_size=_int(env, "AMEM_EMBEDDING_BATCH_SIZE", 64),
            embedding_backend=backend,
            tenant=env.get("AMEM_TENANT") or "default",
            max_content_chars=_int(env, "AMEM_MAX_CONTENT_CHARS", 100_000),
            write_batch_size=_int(env, "AMEM_WRITE_BATCH_SIZE", 500),
            home=default_home(env),
            local_bolt_port=_int(env, "AMEM_NEO4J_BOLT_PORT", 7687, maximum=65535),
            local_http_port=_int(env, "AMEM_NEO4J_HTTP_PORT", 7474, maximum=65535),
            llm=LLMSettings.from_env(env),
            candidates=_int(env, "AMEM_CANDIDATES", 5, minimum=0, maximum=50),
            link_budget=_int(env, "AMEM_LINK_BUDGET", 20, maximum=10_000),
            evolution_attempts=_int(env, "AMEM_EVOLUTION_ATTEMPTS", 3, maximum=20),
            tiers=TierSettings.from_env(env),
            entities=entities,
        )

    @property
    def local_server_dir(self) -> Path:
        return self.home / "neo4j"

    @property
    def local_llm_dir(self) -> Path:
        return self.home / "llm"

    @property
    def embedded_dir(self) -> Path:
        return self.data_dir or self.home / "embedded"

    @property
    def store_kind(self) -> str:
        """The store these settings open: neo4j or embedded."""
        if self.store == "auto":
            return "neo4j" if self.neo4j_uri else "embedded"
        return self.store
