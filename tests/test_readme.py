"""The README's examples run as written: every ```python block, in order, in one session (as a reader
pastes them), with an LLM configured (the scripted server over real HTTP) so `respond` works; and every
```bash test block, offline, against the test database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import ScriptedLLM

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
TENANTS = ("alice", "users.alice", "readme-demo", "notebook-demo")


def blocks(info: str) -> list[str]:
    return [body for kind, body in FENCE.findall(README.read_text()) if kind.strip() == info]


def forget(settings: Settings) -> None:
    with AgenticMemory(settings) as memory:
        for tenant in TENANTS:
            memory.admin.delete_tenant(tenant)


@pytest.fixture
def readme_env(settings: Settings, cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    forget(settings)
    with ScriptedLLM() as llm:
        env = {**cli_env, "AMEM_LLM_BASE_URL": llm.base_url, "AMEM_LLM_API_KEY": "scripted",
               "AMEM_LLM_MODEL": "scripted", "AMEM_TENANT": "readme-demo"}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        yield env
    forget(settings)


def test_python_examples_run(readme_env: dict[str, str]) -> None:
    examples = blocks("python")
    assert len(examples) >= 3  # notes, tiers, LangChain
    namespace: dict[str, object] = {"__name__": "readme"}
    for number, code in enumerate(examples, start=1):
        exec(compile(code, f"README.md python block {number}", "exec"), namespace)  # noqa: S102


def test_shell_examples_run(readme_env: dict[str, str]) -> None:
    examples = blocks("bash test")
    assert examples, "README.md has no ```bash test block"
    bin_dir = str(Path(sys.executable).parent)  # the venv's amem-graph
    offline = {"AMEM_LLM_BASE_URL": "", "AMEM_LLM_API_KEY": ""}  # as a reader without an LLM runs them
    env = {**os.environ, **readme_env, **offline, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for number, script in enumerate(examples, start=1):
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, capture_output=True, text=True,
                             cwd=README.parent, timeout=600)
        assert run.returncode == 0, f"bash test block {number} failed:\n{script}\n{run.stdout}\n{run.stderr}"
