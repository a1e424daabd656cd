"""`amem-graph check`: the invariants of the graph (`invariants.RULES`) over one tenant or every tenant."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from ..maintenance import invariants
from .common import console, plain, print_json, text_column, value_column
from .notes import JsonOption, memory

VIOLATIONS_EXIT = 10


def check(
    tenant: Annotated[str | None, typer.Option("--tenant", "-t", help="Only this tenant (default: every tenant)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Check that the graph is sound: relationships within their tenant, gapless versions, evolutions that hold
    the versions they wrote, unbroken session chains, a vector for every note, unique identities. Run it
    while nothing writes. Exits 10 when a rule is broken."""
    with memory(tenant) as mem:
        tenants = [mem.tenant] if tenant is not None else mem.admin.tenants()
        reports = [mem.admin.check(name) for name in tenants]
    broken = [r for r in reports if not r.sound]
    if as_json:
        print_json({"sound": not broken, "rules": invariants.RULES,
                    "tenants": [{**asdict(r), "sound": r.sound} for r in reports]})
    else:
        table = Table(text_column("tenant"), *map(value_column, ("nodes", "relationships", "notes")),
                      text_column("broken rules"))
        for r in reports:
            table.add_row(*plain(r.tenant, r.nodes, r.relationships, r.notes,
                                 ", ".join(f"{rule} ({n})" for rule, n in r.counts.items()) or "none"))
        console.print(table)
        for r in broken:
            for v in r.violations:
                console.print(*plain(f"{r.tenant}: {v.rule}: {v.detail}"))
        console.print(f"{len(reports)} tenants checked; {len(broken)} with broken rules")
    if broken:
        raise typer.Exit(VIOLATIONS_EXIT)
