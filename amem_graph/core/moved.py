"""Modules that moved when the package took its layers (docs/development.md) still import by their old paths
for one release, with a DeprecationWarning that names the new one."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Sequence

MOVED = {
    "amem_graph.admin": "amem_graph.maintenance.admin",
    "amem_graph.attachments": "amem_graph.write.attachments",
    "amem_graph.bench.locomo": "amem_graph.ingest.locomo",
    "amem_graph.consolidate": "amem_graph.maintenance.consolidate",
    "amem_graph.cypher": "amem_graph.store.cypher",
    "amem_graph.entities.keys": "amem_graph.core.entity_keys",
    "amem_graph.evolution": "amem_graph.write.evolution",
    "amem_graph.invariants": "amem_graph.maintenance.invariants",
    "amem_graph.log": "amem_graph.core.log",
    "amem_graph.network": "amem_graph.read.network",
    "amem_graph.retention": "amem_graph.maintenance.retention",
    "amem_graph.retrieval": "amem_graph.read.retrieval",
    "amem_graph.schema": "amem_graph.maintenance.schema",
    "amem_graph.secret": "amem_graph.core.secret",
    "amem_graph.text": "amem_graph.core.text",
    "amem_graph.timeline": "amem_graph.core.timeline",
    "amem_graph.transfer": "amem_graph.ingest.transfer",
    "amem_graph.tuning": "amem_graph.core.tuning",
    "amem_graph.validation": "amem_graph.core.validation",
    "amem_graph.warmup": "amem_graph.maintenance.warmup",
}

# Names that left a moved module for another: looked up there when the new module lacks them.
ALSO = {"amem_graph.cypher": "amem_graph.viewer.browser"}


class _OldPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path as a module that hands out the new module's names (the new module itself keeps its
    own name and spec)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(fullname, self) if fullname in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} is now {new}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        targets = [importlib.import_module(name) for name in (new, ALSO.get(module.__name__)) if name]
        module.__doc__ = targets[0].__doc__

        def attribute(name: str) -> object:
            for target in targets:
                if hasattr(target, name):
                    return getattr(target, name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        module.__getattr__ = attribute  # type: ignore[method-assign]
        module.__dir__ = lambda: sorted({n for target in targets for n in dir(target)})  # type: ignore[method-assign]


def install() -> None:
    """Once per process: the old paths resolve after every real module (a real one always wins)."""
    if not any(isinstance(finder, _OldPath) for finder in sys.meta_path):
        sys.meta_path.append(_OldPath())
