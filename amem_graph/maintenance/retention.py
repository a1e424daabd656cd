"""Retention a user sets: which notes a tenant keeps searchable (`memory.retention`).

A policy (`RetentionPolicy`) archives the notes neither recalled nor added for `unused_days`, those colder than
`min_heat`, and past `max_notes` notes not archived the coldest. An archived note leaves search, context and listings
(as a superseded one does) but keeps its links, versions and history; `restore` brings it back, `delete` erases
it. A note's heat is MemoryOS's (tiers/heat.py) over its recalls, its valid links and its last recall (else its
creation). `plan` is the dry run; `run` archives what the plan names, in batches of one transaction each, so an
interrupted run leaves each batch whole or untouched, and running again archives the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from ..core import validation
from ..core.log import operation, report
from ..errors import InvalidInput
from ..models import Archival, RetentionPolicy
from ..store.base import MemoryStore, NoteUsage
from ..tiers.heat import heat_of

BATCH = 500  # notes archived per transaction
MAX_DAYS = 36_500  # the longest `unused_days`: a hundred years
MAX_NOTES = validation.MAX_COUNT  # the largest `max_notes`


class Retention:
    """One memory's retention: the policy each tenant keeps, its dry run, its run, and restoring notes."""

    def __init__(self, store: MemoryStore, tenant: str, heat_params: Mapping[str, float],
                 clock: Callable[[], datetime] = validation.now) -> None:
        self._store = store
        self.tenant = tenant
        self._heat = heat_params
        self.clock = clock

    def _tenant(self, tenant: str | None) -> str:
        return self.tenant if tenant is None else validation.tenant(tenant)

    @operation("retention_policy")
    def policy(self, *, tenant: str | None = None) -> RetentionPolicy | None:
        """The tenant's policy, if one is set."""
        return self._store.read(self._tenant(tenant), lambda tx: tx.retention())

    @operation("set_retention_policy")
    def set_policy(self, policy: RetentionPolicy, *, tenant: str | None = None) -> RetentionPolicy | None:
        """Keep `policy` for the tenant (`run` applies it); a policy with no rule clears it. Archives nothing."""
        policy = checked(policy)
        self._store.write(self._tenant(tenant), lambda tx: tx.retention(policy), lock=False)
        return None if policy == RetentionPolicy() else policy

    @operation("retention_plan")
    def plan(self, policy: RetentionPolicy | None = None, *, tenant: str | None = None,
             now: datetime | None = None) -> list[Archival]:
        """The dry run: the notes `policy` (else the tenant's) would archive at `now` and why, archiving nothing."""
        tenant = self._tenant(tenant)
        rule = self._rule(tenant, policy)
        usage = self._store.read(tenant, lambda tx: tx.usage())
        planned = select(usage, rule, self._heat, validation.event_time(now, "now") or self.clock())
        report(notes=len(usage), archived=len(planned))
        return planned

    @operation("retention_run")
    def run(self, policy: RetentionPolicy | None = None, *, tenant: str | None = None, now: datetime | None = None,
            batch: int = BATCH, on_batch: Callable[[int], None] | None = None) -> list[Archival]:
        """Archive what `plan` names, `batch` notes per transaction (`on_batch(n)` after each commits); returns
        the notes archived. A note archived meanwhile is left as it is."""
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InvalidInput(f"batch must be a positive integer, got {batch!r}")
        tenant = self._tenant(tenant)
        planned = self.plan(policy, tenant=tenant, now=now)
        archived: list[Archival] = []
        for start in range(0, len(planned), batch):
            part = planned[start: start + batch]
            changed = set(self._store.write(tenant, lambda tx, ids=[a.note_id for a in part]: tx.archive(ids)))
            archived += [a for a in part if a.note_id in changed]
            if on_batch:
                on_batch(len(changed))
        report(archived=len(archived))
        return archived

    @operation("archive")
    def archive(self, note_ids: Sequence[str], *, tenant: str | None = None) -> list[str]:
        """Archive these notes whatever the policy; returns those archived (one archived already is left as it is)."""
        return self._set(note_ids, tenant, archive=True)

    @operation("restore")
    def restore(self, note_ids: Sequence[str], *, tenant: str | None = None) -> list[str]:
        """Bring archived notes back into search, with the links and history they kept; returns those restored
        (a note not archived is left as it is)."""
        return self._set(note_ids, tenant, archive=False)

    def _set(self, note_ids: Sequence[str], tenant: str | None, *, archive: bool) -> list[str]:
        if isinstance(note_ids, str | bytes):
            raise InvalidInput("give a list of note ids")
        ids = list(dict.fromkeys(validation.note_id(i) for i in note_ids))  # an id twice is one change
        return self._store.write(self._tenant(tenant), lambda tx: tx.archive(ids, archive=archive)) if ids else []

    def _rule(self, tenant: str, policy: RetentionPolicy | None) -> RetentionPolicy:
        if policy is not None:
            if checked(policy) == RetentionPolicy():
                raise InvalidInput("the retention policy given has no rule")
            return policy
        kept = self.policy(tenant=tenant)
        if kept is None:
            raise InvalidInput(f"tenant {tenant!r} has no retention policy: set one, or pass one")
        return kept


def policy_of(max_notes: int | None = None, unused_days: float | None = None,
              min_heat: float | None = None) -> RetentionPolicy | None:
    """The policy these rules make, or None when they make none (a caller's options: the tenant's own applies)."""
    policy = RetentionPolicy(max_notes=max_notes, unused_days=unused_days, min_heat=min_heat)
    return None if policy == RetentionPolicy() else policy


def checked(policy: RetentionPolicy) -> RetentionPolicy:
    """The policy, each rule checked: at least one note kept (at most MAX_NOTES), a positive number of days (a
    hundred years at most), a heat of 0 or more."""
    if not isinstance(policy, RetentionPolicy):
        raise InvalidInput(f"a retention policy is a RetentionPolicy, got {type(policy).__name__}")
    if policy.max_notes is not None and not (_number(policy.max_notes, whole=True) and 1 <= policy.max_notes <= MAX_NOTES):
        raise InvalidInput(f"max_notes must be a whole number from 1 to {MAX_NOTES}, got {policy.max_notes!r}")
    if policy.unused_days is not None and not (_number(policy.unused_days) and 0 < policy.unused_days <= MAX_DAYS):
        raise InvalidInput(f"unused_days must be a number above 0 and at most {MAX_DAYS}, got {policy.unused_days!r}")
    if policy.min_heat is not None and not (_number(policy.min_heat) and policy.min_heat >= 0):
        raise InvalidInput(f"min_heat must be a number from 0, got {policy.min_heat!r}")
    # Days and heat are stored as floats: an int past 2**63 - 1 would not go through Neo4j's driver.
    return replace(policy, **{name: float(value) for name in ("unused_days", "min_heat")
                              if (value := getattr(policy, name)) is not None})


def _number(value: object, *, whole: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if whole:
        return isinstance(value, int)
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int past what a float holds
        return False


def select(usage: Sequence[NoteUsage], policy: RetentionPolicy, params: Mapping[str, float],
           now: datetime) -> list[Archival]:
    """What `policy` archives of these notes (not archived) at `now`: the unused, then the cold, then past `max_notes`
    the coldest of the rest (of equal heat, the one used longest ago, then by id)."""
    weighed = [(u, heat_of(u.recalls, u.links, last := u.last_accessed or u.created_at, params, now), last)
               for u in usage]
    archived: list[Archival] = []
    kept = []
    for u, heat, last in weighed:
        if policy.unused_days is not None and last is not None and now - last >= timedelta(days=policy.unused_days):
            archived.append(Archival(u.id, "unused", heat, last))
        elif policy.min_heat is not None and heat < policy.min_heat:
            archived.append(Archival(u.id, "cold", heat, last))
        else:
            kept.append((u, heat, last))
    if policy.max_notes is not None and len(kept) > policy.max_notes:
        kept.sort(key=lambda row: (row[1], row[2].timestamp() if row[2] else 0.0, row[0].id))
        archived += [Archival(u.id, "max_notes", heat, last) for u, heat, last in kept[: len(kept) - policy.max_notes]]
    return archived
