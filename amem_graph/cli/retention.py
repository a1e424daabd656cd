"""`amem-graph retention policy|plan|run|archive|restore`: which notes a tenant keeps searchable."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..errors import InvalidInput
from ..maintenance.retention import BATCH, policy_of
from ..models import Archival, RetentionPolicy
from .common import console, plain, print_json, short_id, text_column, user_errors, value_column
from .notes import JsonOption, TenantOption, full_id, memory

MaxNotesOption = Annotated[int | None, typer.Option(help="Keep at most this many notes out of the archive; the coldest go")]
UnusedDaysOption = Annotated[float | None, typer.Option(help="Archive notes neither recalled nor added for this many days")]
MinHeatOption = Annotated[float | None, typer.Option(help="Archive notes colder than this heat")]
IdsArgument = Annotated[list[str], typer.Argument(help="Note ids, or their first characters (as tables show them).")]


def register(app: typer.Typer) -> None:
    retention_app = typer.Typer(
        help="Retention: archive notes by a policy (out of search, kept with their history, restorable).",
        no_args_is_help=True,
    )
    for command in (policy, plan, run, archive, restore):
        retention_app.command()(user_errors(command))
    app.add_typer(retention_app, name="retention")


def policy(
    tenant: TenantOption = None, max_notes: MaxNotesOption = None, unused_days: UnusedDaysOption = None,
    min_heat: MinHeatOption = None,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the tenant's policy")] = False,
    as_json: JsonOption = False,
) -> None:
    """Show the tenant's policy; with rules (or --clear), set it first. Setting a policy archives nothing: `run` does."""
    rules = policy_of(max_notes, unused_days, min_heat)
    if rules is not None and clear:
        raise InvalidInput("give rules or --clear, not both")
    with memory(tenant) as mem:
        if rules is not None or clear:
            mem.retention.set_policy(rules or RetentionPolicy())
        kept = mem.retention.policy()
    if as_json:
        print_json(kept.to_dict() if kept else None)
    elif kept is None:
        console.print("No retention policy: every note stays searchable.")
    else:
        shown = ", ".join(f"{name} {value}" for name, value in kept.to_dict().items() if value is not None)
        console.print(f"Retention policy: {shown}")


def plan(
    tenant: TenantOption = None, max_notes: MaxNotesOption = None, unused_days: UnusedDaysOption = None,
    min_heat: MinHeatOption = None, as_json: JsonOption = False,
) -> None:
    """The dry run: which notes the policy (the options', else the tenant's) would archive now, and why."""
    with memory(tenant) as mem:
        planned = mem.retention.plan(policy_of(max_notes, unused_days, min_heat))
    _show(planned, as_json, "Would archive")


def run(
    tenant: TenantOption = None, max_notes: MaxNotesOption = None, unused_days: UnusedDaysOption = None,
    min_heat: MinHeatOption = None,
    batch: Annotated[int, typer.Option(min=1, max=10_000, help="Notes archived per transaction")] = BATCH,
    as_json: JsonOption = False,
) -> None:
    """Archive what `plan` names, in batches; an interrupted run leaves each batch whole, and running it again
    archives the rest."""
    with memory(tenant) as mem:
        archived = mem.retention.run(policy_of(max_notes, unused_days, min_heat), batch=batch)
    _show(archived, as_json, "Archived")


def archive(note_ids: IdsArgument, tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """Archive these notes whatever the policy."""
    _set(note_ids, tenant, as_json, archive=True)


def restore(note_ids: IdsArgument, tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """Bring archived notes back into search, with their links and history."""
    _set(note_ids, tenant, as_json, archive=False)


def _set(note_ids: list[str], tenant: str | None, as_json: bool, *, archive: bool) -> None:
    with memory(tenant) as mem:
        ids = [full_id(mem, given) for given in note_ids]
        changed = mem.retention.archive(ids) if archive else mem.retention.restore(ids)
    done = "archived" if archive else "restored"
    if as_json:
        print_json({done: changed})
    else:
        console.print(f"{done.capitalize()} {len(changed)} note(s).")


def _show(archivals: list[Archival], as_json: bool, verb: str) -> None:
    """The notes archived (or to be), with why, as a table and a count after `verb`, or as JSON."""
    if as_json:
        print_json([a.to_dict() for a in archivals])
        return
    table = Table(value_column("id"), text_column("why"), value_column("heat"), value_column("last used"))
    for a in archivals:
        table.add_row(*plain(short_id(a.note_id), a.reason, f"{a.heat:.3f}",
                             f"{a.last_used:%Y-%m-%d %H:%M}" if a.last_used else ""))
    console.print(table)
    console.print(f"{verb} {len(archivals)} note(s).")
