"""The tests' stores: a real Neo4j server, and the embedded store in a temporary folder.

Neo4j is the one named by AMEM_TEST_NEO4J_URI (with AMEM_TEST_NEO4J_PASSWORD), or a private one this session
starts from the Maven jars and stops at the end. It starts only for a test that uses it: the `embedded` tests
(the contract suite's embedded cases, the tests that need no store, the unit tests) run with no Java and
no Neo4j: `python -m pytest -m embedded`.
Every test works in its own tenant, so tests never see each other's notes."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, settings

from amem_graph import AgenticMemory, Settings
from amem_graph import store as store_package
from amem_graph.bench.scripted_llm import ScriptedLLM
from amem_graph.embedding import catalog, download
from amem_graph.server import ConnectionInfo, LocalNeo4j, free_port
from amem_graph.settings import LLMSettings
from amem_graph.store.embedded.store import EmbeddedStore

from .chromium import page  # noqa: F401 (the fixture of the tests that drive Chromium)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # torch's tests load local folders only: the hub is not reachable

# The property tests' cases (hypothesis), set here so that every test module gets them, whichever is
# imported first: `ci`, the default, draws the same few cases on every run, so that a suite that passed once
# passes again; `long` draws many new ones (10,000 a test):
# `AMEM_HYPOTHESIS_PROFILE=long python -m pytest tests/test_hostile.py`.
_HEALTH = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=_HEALTH)
settings.register_profile("long", max_examples=10_000, deadline=None, suppress_health_check=_HEALTH)
settings.load_profile(os.environ.get("AMEM_HYPOTHESIS_PROFILE", "ci"))


def _base_settings() -> Settings:
    # The tests choose the database and the LLM themselves; the developer's own settings stay out.
    return Settings.from_env(
        {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "AMEM_LLM_", "OPENAI_"))}
    )


@pytest.fixture(scope="session")
def base_settings() -> Settings:
    """The settings every test starts from, naming no database."""
    return _base_settings()


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def _model_target(spec: catalog.ModelSpec, home: Path) -> Path:
    """Where download.folder keeps the model's two files under `home` (it fetches when they are not there)."""
    assert spec.download is not None
    return home / "models" / spec.name.rsplit("/", 1)[-1] / spec.download.files["model.onnx"][2][:16]


def _model_intact(spec: catalog.ModelSpec, folder: Path) -> bool:
    assert spec.download is not None
    return all((folder / name).is_file() and download.sha256(folder / name) == expected
               for name, (_, _, expected) in spec.download.files.items())


@pytest.fixture(scope="session")
def model_files(base_settings: Settings) -> Callable[[catalog.ModelSpec, Path], None]:
    """`model_files(spec, home)`: before a test embeds with a downloaded model of the table (catalog.py),
    makes sure it can have it. With `mvn` on PATH, or the model hub allowed (HF_HUB_OFFLINE unset), the test
    fetches it itself, as a user's first run does (CI: Maven). Without either (no Java, no Maven, offline:
    `-m embedded` as the README promises), the copy this machine already fetched ($AMEM_HOME/models) is put
    under `home`, checked against its pinned hashes; where there is none, the test is skipped, saying so.
    Never in CI: there a model that cannot be had fails the test."""
    cache = base_settings.home

    def ensure(spec: catalog.ModelSpec, home: Path) -> None:
        if spec.download is None:  # the packaged model: its package ships it
            return
        target = _model_target(spec, home)
        hub = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() not in ("1", "true", "yes", "on")
        if download._complete(target, spec.download) or shutil.which("mvn") or hub:
            return
        cached = _model_target(spec, cache)
        if cached != target and _model_intact(spec, cached):
            staging = target.parent / f".seeding-{uuid.uuid4().hex[:8]}"
            staging.mkdir(parents=True)
            for name in spec.download.files:
                try:
                    os.link(cached / name, staging / name)
                except OSError:
                    shutil.copyfile(cached / name, staging / name)
            os.rename(staging, target)
            return
        reason = (f"the embedding model {spec.name} has no intact copy in {cache / 'models'} and cannot be "
                  "fetched: `mvn` is not on PATH and HF_HUB_OFFLINE is set (install Maven, or fetch it once: "
                  f"AMEM_EMBEDDING_MODEL={spec.name} with the model hub or Maven reachable)")
        if _in_ci():
            pytest.fail(f"{reason}; CI must have Maven")
        pytest.skip(reason)

    return ensure


@pytest.fixture(scope="session")
def neo4j_server(base_settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectionInfo]:
    """The server the tests use: AMEM_TEST_NEO4J_URI's, or a private one for this session.

    http_url (Neo4j Browser) is empty when AMEM_TEST_NEO4J_URI names a server other than the local one
    of AMEM_HOME (`amem-graph neo4j start`, as .ci/run starts it): Bolt alone does not say the HTTP port."""
    if uri := os.environ.get("AMEM_TEST_NEO4J_URI"):
        local = LocalNeo4j.for_settings(base_settings).connection()
        http_url = local.http_url if local and _bolt_address(local.uri) == _bolt_address(uri) else ""
        yield ConnectionInfo(uri=uri, user=os.environ.get("AMEM_TEST_NEO4J_USER", "neo4j"),
                             password=os.environ["AMEM_TEST_NEO4J_PASSWORD"], http_url=http_url)
        return
    server = LocalNeo4j(tmp_path_factory.mktemp("neo4j"), home=base_settings.home)
    info = server.start(bolt_port=free_port(), http_port=free_port())
    try:
        yield info
    finally:
        server.stop()


def _bolt_address(uri: str) -> tuple[str, int | None]:
    parts = urlsplit(uri)
    host = parts.hostname or ""
    return ("127.0.0.1" if host == "localhost" else host), parts.port


@pytest.fixture(scope="session")
def neo4j_settings(base_settings: Settings, neo4j_server: ConnectionInfo) -> Settings:
    return replace(base_settings, neo4j_uri=neo4j_server.uri, neo4j_user=neo4j_server.user,
                   neo4j_password=neo4j_server.password)


class _Borrowed:
    """The test's embedded store as a memory that opened it itself sees it: closing that memory leaves it
    open for the others (the fixture closes it)."""

    def __init__(self, store: EmbeddedStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def close(self) -> None:
        pass


class EmbeddedShare:
    """One embedded store per test, in a temporary folder, opened when first needed."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._store: EmbeddedStore | None = None

    def store(self) -> EmbeddedStore:
        if self._store is None:
            self._store = EmbeddedStore(self.folder)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


@pytest.fixture
def embedded_share(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedShare]:
    """The embedded test's store. As every connection to Neo4j sees the one database, every memory opened
    in this process on the test's settings (`AgenticMemory(settings)`, an in-process CLI run with `cli_env`)
    shares this one store: `open_store` is patched for settings naming its folder (one process owns a
    folder, so two stores could not both open it). A CLI run in a subprocess opens the folder itself, so it
    works only while no memory of the test holds it open."""
    share = EmbeddedShare(tmp_path_factory.mktemp("embedded"))
    original = store_package.open_store

    def open_store(settings: Settings):
        if settings.store_kind == "embedded" and Path(settings.embedded_dir) == share.folder:
            return _Borrowed(share.store())
        return original(settings)

    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "amem_graph" and getattr(module, "open_store", None) is original:
            monkeypatch.setattr(module, "open_store", open_store)
    try:
        yield share
    finally:
        share.close()


@pytest.fixture
def embedded_settings(base_settings: Settings, embedded_share: EmbeddedShare) -> Settings:
    return replace(base_settings, store="embedded", data_dir=embedded_share.folder, neo4j_uri=None,
                   neo4j_password=None)


@pytest.fixture(scope="session")
def settings(request: pytest.FixtureRequest) -> Settings:
    """The test's settings: Neo4j's, or, for an `embedded` test (see pytest_generate_tests), the embedded
    store's in a folder of its own, so that such a test never starts Neo4j."""
    kind = getattr(request, "param", "neo4j")
    return request.getfixturevalue(f"{kind}_settings")


@pytest.fixture
def tenant() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The contract suite: in a module with `STORES = ("neo4j", "embedded")`, every test that uses `memory`
    runs on each store (a test marked `neo4j_only` says why it cannot); its embedded case is marked
    `embedded`. A test marked `embedded` that is not parametrised over the stores gets the embedded store's
    settings. `settings` is parametrised alongside `store_kind` (per test: `scope="function"` overrides its
    session scope), so that the embedded cases never start Neo4j."""
    names = metafunc.fixturenames
    if "store_kind" in names and not metafunc.definition.get_closest_marker("neo4j_only"):
        stores = getattr(metafunc.module, "STORES", ("neo4j",))
        args = ("store_kind", "settings") if "settings" in names else ("store_kind",)
        metafunc.parametrize(
            args,
            [pytest.param(*[kind] * len(args), id=kind, marks=[pytest.mark.embedded] if kind == "embedded" else [])
             for kind in stores],
            indirect=True, scope="function",
        )
    elif "settings" in names and metafunc.definition.get_closest_marker("embedded"):
        metafunc.parametrize("settings", [pytest.param("embedded", id="embedded")], indirect=True, scope="function")


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", "neo4j")


@pytest.fixture
def memory(settings: Settings, tenant: str, store_kind: str, request: pytest.FixtureRequest) -> Iterator[AgenticMemory]:
    store = request.getfixturevalue("embedded_share").store() if store_kind == "embedded" else None
    with AgenticMemory(settings, tenant=tenant, store=store) as mem:
        yield mem
        mem.admin.delete_tenant(tenant)


@pytest.fixture
def open_memory(memory: AgenticMemory, settings: Settings) -> Callable[[str], AgenticMemory]:
    """Another memory on the same store as `memory` (for another tenant, or another writer): a new
    connection to Neo4j, the same in-process embedded store."""

    def open_(tenant: str) -> AgenticMemory:
        shared = memory._store if memory.admin.kind == "embedded" else None
        return AgenticMemory(settings, tenant=tenant, store=shared)

    return open_


@pytest.fixture
def cli_env(settings: Settings) -> dict[str, str]:
    """Environment for CLI runs against the test's store: the test server (AMEM_HOME as the session's, for
    the jars), or, for an embedded test, the embedded store in its folder (AMEM_STORE=embedded,
    AMEM_DATA_DIR; see `embedded_share` for CLI runs in a subprocess)."""
    common = {
        "AMEM_HOME": str(settings.home),
        "HF_HUB_OFFLINE": "1",
        **{name: "" for name in ("AMEM_LLM_BASE_URL", "AMEM_LLM_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY")},
    }
    if settings.store_kind == "embedded":
        return {"AMEM_STORE": "embedded", "AMEM_DATA_DIR": str(settings.embedded_dir),
                **{name: "" for name in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")}, **common}
    assert settings.neo4j_uri and settings.neo4j_password
    return {
        "NEO4J_URI": settings.neo4j_uri,
        "NEO4J_USER": settings.neo4j_user,
        "NEO4J_PASSWORD": settings.neo4j_password,
        **common,
    }


@pytest.fixture
def cli_tenant(cli_env: dict[str, str]) -> Iterator[str]:
    """A tenant for CLI runs, deleted with everything in it afterwards."""
    tenant = f"cli-{uuid.uuid4().hex[:10]}"
    yield tenant
    with AgenticMemory(Settings.from_env(cli_env), tenant=tenant) as mem:
        mem.admin.delete_tenant(tenant)


def tenant_graph(memory: AgenticMemory, tenant: str | None = None) -> tuple[dict[str, dict], list[dict]]:
    """A tenant's nodes (by key: labels, props) and relationships (start, type, end, props), read through
    the store's export, so that a test inspects the graph the same way on each store."""
    records = list(memory._store.export_records(tenant or memory.tenant))
    nodes = {r["key"]: r for r in records if r["kind"] == "node"}
    return nodes, [r for r in records if r["kind"] == "relationship"]


@pytest.fixture
def count_nodes(memory: AgenticMemory) -> Callable[[str], int]:
    """How many nodes of any label a tenant has: the check that a rejected call wrote nothing."""

    def count(tenant: str) -> int:
        return sum(memory.stats(tenant=tenant).labels.values())

    return count


@pytest.fixture
def browse_memory(settings: Settings) -> Iterator[AgenticMemory]:
    """A memory with no default tenant whose tiers promote at once, so a few turns already make pages,
    segments and persona facts."""
    tiers = replace(settings.tiers, stm_capacity=1, promote_heat=1.5)
    with AgenticMemory(replace(settings, tiers=tiers)) as memory:
        yield memory


@pytest.fixture
def make_browse_tenant(browse_memory: AgenticMemory) -> Iterator[Callable[[], str]]:
    """Makes tenants with notes, links, versions, pages, segments and persona facts; deleted after the test."""
    made: list[str] = []

    def make() -> str:
        tenant = f"browse-{uuid.uuid4().hex[:8]}"
        made.append(tenant)
        browse_memory.add("Nate adopted a turtle named Shelly.", tenant=tenant, source="chat:1")
        browse_memory.add("Shelly the turtle loves lettuce.", tenant=tenant, source="chat:2")
        for text in ("I live in Boston.", "I have a turtle named Shelly.", "done"):
            browse_memory.add_turn(text, "Noted.", tenant=tenant, session_id="s1")
        return tenant

    yield make
    for tenant in made:
        browse_memory.admin.delete_tenant(tenant)


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    """A scripted OpenAI-compatible server on loopback."""
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def llm_memory(settings: Settings, memory: AgenticMemory, llm: ScriptedLLM) -> Iterator[AgenticMemory]:
    """`memory`'s tenant and store, analysed by the scripted LLM as each note is added (background: off)."""
    configured = replace(settings, llm=LLMSettings(
        base_url=llm.base_url, model="scripted", backoff_s=0.0, timeout_s=0.5, max_retries=1, background=False))
    shared = memory._store if memory.admin.kind == "embedded" else None
    with AgenticMemory(configured, tenant=memory.tenant, store=shared) as mem:
        yield mem


@pytest.fixture
def no_queue_elsewhere(memory: AgenticMemory) -> None:
    """A worker serves every tenant of its database: a note another test (or an interrupted run) left queued would
    be analysed by this test's worker, with this test's model. Such tenants go first."""
    for other in memory.admin.tenants():
        if other != memory.tenant and memory.pending(tenant=other):
            memory.admin.delete_tenant(other)
