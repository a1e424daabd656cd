"""The memory as MCP tools and resources, on the SDK's `MCPServer`: one tenant-scoped `AgenticMemory` behind
them. Every result carries what a client needs to trust it: ids, scores, and for a hit, the path and link
reasons it was found by. Engine errors come back as tool errors with the engine's message."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from ...api import MAX_K, AgenticMemory
from ...errors import AmemError
from ...maintenance.retention import policy_of
from ...models import MAX_HOPS, FactKind, NoteInput
from ...read.retrieval import Mode, format_context

NAME = "amem-graph"
INSTRUCTIONS = (
    "Long-term memory of linked, evolving notes. Save what is worth remembering with add_memory (many at once "
    "with import_memories), find it "
    "with search_memory or memory_context; dialogue turns go to add_turn and come back with dialogue_context."
)
READ = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
ADD = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False)
DESTROY = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)

NoteId = Annotated[str, Field(description="A note's id, as add_memory or search_memory returned it")]
Query = Annotated[str, Field(description="What to look for, in natural language")]
K = Annotated[int, Field(ge=1, le=MAX_K, description="How many results")]
Hops = Annotated[int, Field(ge=0, le=MAX_HOPS, description="Links or session steps followed from the index hits")]
Time = Annotated[str | None, Field(description="An ISO-8601 date-time, e.g. 2023-05-08T13:56:00Z")]
Labels = Annotated[list[str] | None, Field(description="Any of these")]
MaxNotes = Annotated[int | None, Field(ge=1, description="Keep at most this many notes out of the archive")]
UnusedDays = Annotated[float | None, Field(gt=0, description="Archive notes neither recalled nor added for this many days")]
MinHeat = Annotated[float | None, Field(ge=0, description="Archive notes colder than this heat")]
AsOf = Annotated[str | None, Field(description="Read the memory as it stood at this ISO-8601 time (recorded time)")]
Session = Annotated[str, Field(description="The dialogue session the turn belongs to")]
Tenant = Annotated[str | None, Field(description="Whose memory (the server's tenant when omitted)")]


class MemoryItem(BaseModel):
    """One memory of a bulk import."""

    content: str = Field(description="The memory, as a self-contained statement")
    source: str | None = Field(None, description="Where it comes from; the same content from the same source is "
                                                 "stored once")
    tags: list[str] | None = None
    session: str | None = Field(None, description="A conversation it belongs to")
    speaker: str | None = Field(None, description="Who said it")
    event_time: str | None = Field(None, description="An ISO-8601 date-time, e.g. 2023-05-08T13:56:00Z")


class MemoryServer(MCPServer):
    """An MCPServer whose tools refuse a `tenant` argument that the operator did not allow, rather than
    ignoring it: a model that asks for another tenant's memory is told it cannot have it."""

    def __init__(self, *, allow_tenant_argument: bool) -> None:
        super().__init__(NAME, instructions=INSTRUCTIONS, version=_version())
        self.allow_tenant_argument = allow_tenant_argument

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if "tenant" in arguments and not self.allow_tenant_argument:
            raise ToolError("this server serves one tenant, set by its operator: tools take no tenant argument")
        return await super().call_tool(name, arguments, context)


def memory_server(memory: AgenticMemory, *, allow_tenant_argument: bool = False) -> MemoryServer:
    """The tools and resources over `memory`. Its tenant is the only one they reach, unless
    `allow_tenant_argument` gives each tool a `tenant` parameter (for a trusted, multi-user client)."""
    server = MemoryServer(allow_tenant_argument=allow_tenant_argument)

    def tool(annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            server.add_tool(_engine_errors(fn if allow_tenant_argument else _without_tenant(fn)),
                            name=fn.__name__, annotations=annotations)
            return fn
        return register

    @tool(ADD)
    def add_memory(
        content: Annotated[str, Field(description="The memory, as a self-contained statement")],
        source: Annotated[str | None, Field(description="Where it comes from; the same content from the same "
                                                        "source is stored once")] = None,
        tags: Labels = None,
        session: Annotated[str | None, Field(description="A conversation it belongs to")] = None,
        speaker: Annotated[str | None, Field(description="Who said it")] = None,
        event_time: Time = None,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Remember something. The note is analysed (keywords, context, tags), linked to related notes with
        reasons, and may update those notes (evolution). Returns the note with its links."""
        note = memory.add(content, source=source, tags=tags or (), session=session, speaker=speaker,
                          event_time=event_time, tenant=tenant)
        return {"note": note.to_dict()}

    @tool(ADD)
    def import_memories(
        items: Annotated[list[MemoryItem], Field(description="The memories, oldest first")],
        skip_invalid: Annotated[bool, Field(description="Leave out an item that cannot be stored and import the "
                                                        "rest; otherwise one stops the import before any is stored")]
        = False,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Remember many things at once, as a bulk import: stored and embedded now, analysed and linked later
        (`amem-graph reanalyze`). Returns the ids stored, in order, and each item left out with why."""
        skipped: list[dict[str, Any]] = []
        ids = memory.add_many(
            [NoteInput(content=i.content, source=i.source, tags=tuple(i.tags or ()), session=i.session,
                       speaker=i.speaker, event_time=i.event_time) for i in items],
            tenant=tenant,
            on_invalid=(lambda position, err: skipped.append({"position": position, "error": str(err)}))
            if skip_invalid else None,
        )
        return {"ids": ids, "skipped": skipped}

    @tool(READ)
    def search_memory(
        query: Query,
        k: K = 10,
        hops: Hops = 2,
        mode: Annotated[Mode, Field(description="hybrid: vectors and BM25 fused; vector; fulltext")] = "hybrid",
        after: Time = None,
        before: Time = None,
        tags: Labels = None,
        speakers: Labels = None,
        sessions: Labels = None,
        include_superseded: Annotated[bool, Field(description="Also facts a newer note contradicted")] = False,
        as_of: AsOf = None,
        valid_at: Annotated[str | None, Field(
            description="Only facts that held at this ISO-8601 time, superseded since or not (valid time)")] = None,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Find the notes that best answer a query. Each hit has its score, its index scores, and for a note
        reached through the graph, the path of links (type and reason) from the hit that led to it."""
        hits = memory.search(query, k=k, hops=hops, mode=mode, after=after, before=before, tags=tags or (),
                             speakers=speakers or (), sessions=sessions or (),
                             include_superseded=include_superseded, as_of=as_of, valid_at=valid_at, tenant=tenant)
        return {"hits": [hit.to_dict() for hit in hits]}

    @tool(READ)
    def memory_context(query: Query, k: K = 5, hops: Hops = 2, as_of: AsOf = None,
                       tenant: Tenant = None) -> dict[str, Any]:
        """The notes search_memory finds, as one block to put in a prompt (each with its time, context and
        the link that led to it), and their ids."""
        hits = memory.search(query, k=k, hops=hops, as_of=as_of, tenant=tenant)
        return {"context": format_context(hits), "note_ids": [hit.note.id for hit in hits]}

    @tool(READ)
    def get_memory(id: NoteId, as_of: AsOf = None, tenant: Tenant = None) -> dict[str, Any]:
        """One note with its links (both directions, with reasons) and its earlier versions."""
        history = memory.history(id, as_of=as_of, tenant=tenant).to_dict()
        return {"note": history["note"], "versions": history["versions"]}

    @tool(READ)
    def memory_history(id: NoteId, as_of: AsOf = None, tenant: Tenant = None) -> dict[str, Any]:
        """A note's versions (oldest first), the evolutions that changed it or that it caused, and the newer
        notes that superseded it."""
        return memory.history(id, as_of=as_of, tenant=tenant).to_dict()

    @tool(DESTROY)
    def revert_memory(id: NoteId, version: Annotated[int, Field(ge=1, description="The version to restore")],
                      tenant: Tenant = None) -> dict[str, Any]:
        """Restore a note as it was at a version; what it is now is kept as a version too."""
        return {"note": memory.revert(id, version, tenant=tenant).to_dict()}

    @tool(DESTROY)
    def delete_memory(id: NoteId, tenant: Tenant = None) -> dict[str, Any]:
        """Delete a note with its links and versions; nothing of it stays."""
        memory.delete(id, tenant=tenant)
        return {"deleted": id}

    @tool(WRITE)
    def add_turn(
        user_text: Annotated[str, Field(description="What the user said")],
        assistant_text: Annotated[str, Field(description="What the assistant answered")] = "",
        session_id: Session = "default",
        at: Time = None,
        tenant: Tenant = None,
    ) -> dict[str, Any]:
        """Store a dialogue turn in short-term memory; older turns move on to mid-term segments, and hot
        segments become notes and persona facts."""
        return {"page": memory.add_turn(user_text, assistant_text, session_id=session_id, at=at,
                                        tenant=tenant).to_dict()}

    @tool(READ)
    def dialogue_context(query: Query, session_id: Annotated[str | None, Field(
            description="The session whose recent turns come first")] = None,
                         as_of: AsOf = None, tenant: Tenant = None) -> dict[str, Any]:
        """Everything the tiers hold for a query: the session's recent turns, the best mid-term segments,
        persona facts and notes; `prompt` is all of it as one block. With `as_of`, the tiers as they stood then."""
        found = memory.context_for(query, session_id=session_id, as_of=as_of, tenant=tenant)
        return {"prompt": found.prompt(), **found.to_dict()}

    @tool(READ)
    def persona(kinds: Annotated[list[FactKind] | None, Field(description="Which kinds of fact (all when omitted)")]
                = None,
                tenant: Tenant = None) -> dict[str, Any]:
        """What the memory knows about the user and the assistant: active persona facts, by kind."""
        return {"facts": [fact.to_dict() for fact in memory.tiers.persona(kinds=kinds, tenant=tenant)]}

    @tool(READ)
    def entity(name: Annotated[str, Field(description="A person, place or thing, by name or alias")],
               as_of: AsOf = None, tenant: Tenant = None) -> dict[str, Any]:
        """An entity, the notes that mention it (in time order) and the entities mentioned beside it most; with
        as_of, as the memory held them then (the merges made by then and not undone by then)."""
        return memory.entities.profile(name, as_of=as_of, tenant=tenant).to_dict()

    @tool(READ)
    def retention_plan(max_notes: MaxNotes = None, unused_days: UnusedDays = None, min_heat: MinHeat = None,
                       tenant: Tenant = None) -> dict[str, Any]:
        """The dry run of a retention policy (these rules, else the tenant's own): which notes it would archive
        now, and why. Archives nothing."""
        policy = policy_of(max_notes, unused_days, min_heat)
        return {"archive": [a.to_dict() for a in memory.retention.plan(policy, tenant=tenant)]}

    @tool(WRITE)
    def retention_run(max_notes: MaxNotes = None, unused_days: UnusedDays = None, min_heat: MinHeat = None,
                      tenant: Tenant = None) -> dict[str, Any]:
        """Archive what retention_plan names: those notes leave search and context, keep their links and
        history, and come back with restore_memory."""
        policy = policy_of(max_notes, unused_days, min_heat)
        return {"archived": [a.to_dict() for a in memory.retention.run(policy, tenant=tenant)]}

    @tool(WRITE)
    def restore_memory(ids: Annotated[list[str], Field(description="Ids of archived notes")],
                       tenant: Tenant = None) -> dict[str, Any]:
        """Bring archived notes back into search, with their links and history."""
        return {"restored": memory.retention.restore(ids, tenant=tenant)}

    @server.resource("amem://note/{id}", name="note", mime_type="application/json",
                     description="A note of the server's tenant, with its links")
    def note_resource(id: str) -> str:
        return _resource(lambda: memory.get(id).to_dict())

    @server.resource("amem://stats", name="stats", mime_type="application/json",
                     description="Counts of the server's tenant: notes, links, pages, segments, facts")
    def stats_resource() -> str:
        return _resource(lambda: dataclasses.asdict(memory.stats(tenant=memory.tenant)))

    @server.resource("amem://persona", name="persona", mime_type="application/json",
                     description="The server's tenant's persona facts")
    def persona_resource() -> str:
        return _resource(lambda: [fact.to_dict() for fact in memory.tiers.persona()])

    return server


def _engine_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An engine error is a tool error with its message (what the model can act on), never a traceback."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AmemError as err:
            raise ToolError(f"{type(err).__name__}: {err}") from None

    return call


def _without_tenant(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` as the model sees it when the tenant is the operator's: no `tenant` parameter at all."""
    signature = inspect.signature(fn, eval_str=True)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for name, p in signature.parameters.items() if name != "tenant"])
    return call


def _resource(read: Callable[[], Any]) -> str:
    try:
        return json.dumps(read(), default=str, ensure_ascii=False)
    except AmemError as err:
        raise ResourceError(f"{type(err).__name__}: {err}") from None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("amem-graph")
    except PackageNotFoundError:
        return "0"
