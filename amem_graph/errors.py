"""Errors a user can act on. Each carries the CLI exit code it maps to."""


class AmemError(Exception):
    """Base class: a problem the caller can fix; the message says how."""

    exit_code = 1


class InvalidInput(AmemError, ValueError):
    """The input was rejected before anything was written."""

    exit_code = 3


class NoteNotFound(AmemError, LookupError):
    """No note with that id in that tenant."""

    exit_code = 3


class TenantNotFound(AmemError, LookupError):
    """A command that reads a tenant was pointed at one that holds nothing (a typo, most often)."""

    exit_code = 3


class EntityNotFound(AmemError, LookupError):
    """No entity by that name in that tenant."""

    exit_code = 3


class SchemaMismatch(AmemError):
    """The database schema does not fit the configured embedder or this version of amem-graph."""

    exit_code = 4


class StoreError(AmemError):
    """The database refused or failed a statement; the message names the URI and the statement."""

    exit_code = 5


class StoreUnavailable(StoreError):
    """The database cannot be reached or refused the credentials; the message names the URI."""


class ServerError(AmemError):
    """The local Neo4j server could not be installed, started or stopped; the message names the cause."""

    exit_code = 6


class LLMError(AmemError):
    """The LLM endpoint failed or answered something unusable. `kind` says which:
    timeout, rate_limited, server, connection, refusal, truncated, malformed, rejected."""

    exit_code = 8

    def __init__(self, kind: str, message: str, *, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.prompt_tokens = prompt_tokens  # what a failed answer still cost
        self.completion_tokens = completion_tokens


class LLMNotConfigured(AmemError):
    """An operation needs an LLM and none is configured (AMEM_LLM_BASE_URL / AMEM_LLM_API_KEY)."""

    exit_code = 8


class EvolutionConflict(AmemError):
    """Notes changed between reading and writing (concurrent writers). Adds are analysed again and
    updates retried; this reaches a caller only if the notes kept changing: try again."""

    exit_code = 9

    def __init__(self, stale: list[str]) -> None:
        super().__init__(f"these notes kept changing under concurrent writers, try again: {', '.join(stale)}")
        self.stale = stale
