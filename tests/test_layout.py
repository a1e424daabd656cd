"""The package's layout holds (docs/development.md): few modules at the top, every part of the package in the
layers contract that `lint-imports` checks, and the old paths of moved modules still importing, with a warning."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

import amem_graph
from amem_graph.core.moved import ALSO, MOVED

pytestmark = pytest.mark.embedded

PACKAGE = Path(amem_graph.__file__).parent
MAX_TOP_MODULES = 8
# Every operation a store implements, so what a new capability costs twice: the protocol's methods (store/base.py)
# less those folded once for both stores (store/folded.py), plus the narrow operations beneath them (50: the
# analysis queue, claimed across tenants; a whole memory placed along its time without its texts; the ranking
# statistics as kept, for `check` to recount).
MAX_STORE_OPERATIONS = 50


def test_few_modules_sit_at_the_top_of_the_package() -> None:
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_TOP_MODULES, modules


def test_every_part_of_the_package_is_in_a_layer() -> None:
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    placed = {name.strip() for layer in layers for name in layer.split("|")}
    parts = {f"amem_graph.{p.stem}" for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
        f"amem_graph.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert parts == placed


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_the_moved_module_with_a_warning(old: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=MOVED[old].replace(".", r"\.")):
        alias = importlib.import_module(old)
    for new in (importlib.import_module(MOVED[old]), *[importlib.import_module(m) for m in [ALSO.get(old)] if m]):
        public = [name for name in vars(new) if not name.startswith("_") and not isinstance(getattr(new, name), type(sys))]
        assert public and all(getattr(alias, name) is getattr(new, name) for name in public), new.__name__


def test_the_new_paths_warn_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for new in MOVED.values():
            importlib.import_module(new)


def test_the_picture_of_the_layers_is_the_code_s() -> None:
    done = subprocess.run([sys.executable, "scripts/layers.py", "--check"], cwd=PACKAGE.parent, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def _methods(cls: ast.ClassDef, *, private: bool = False) -> list[str]:
    return [f.name for f in cls.body if isinstance(f, ast.FunctionDef) and (private or not f.name.startswith("_"))]


def test_the_store_protocol_stays_small() -> None:
    base = ast.parse((PACKAGE / "store" / "base.py").read_text())
    protocols = [c for c in base.body if isinstance(c, ast.ClassDef) and any(
        isinstance(b, ast.Name) and b.id == "Protocol" for b in c.bases)]
    folded = {c.name: c for c in ast.parse((PACKAGE / "store" / "folded.py").read_text()).body
              if isinstance(c, ast.ClassDef)}
    once = set(_methods(folded["Folded"]))  # dispatched for both stores, implemented by neither
    narrow = [f"Narrow.{name}" for name in _methods(folded["Narrow"], private=True)]
    operations = [f"{c.name}.{name}" for c in protocols for name in _methods(c) if name not in once] + narrow
    assert protocols and once and narrow and len(operations) <= MAX_STORE_OPERATIONS, operations
