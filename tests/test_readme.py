"""The README's and the docs' examples run as written: every ```python block, in order (the README, then the
docs site's pages in its navigation's order), in one session (as a reader pastes them), with an LLM configured
(the scripted server over real HTTP) so `respond` works; every ```bash test block, offline, against the test
database; and the docs site builds with `mkdocs build --strict` (a broken link or anchor fails it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from amem_graph import AgenticMemory, Settings
from amem_graph.bench.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
TENANTS = ("alice", "users.alice", "readme-demo", "notebook-demo", "time-demo")


class _Config(yaml.SafeLoader):
    """mkdocs.yml as data: its `!!python/name:` tags (Markdown extensions' functions) read as their names."""


_Config.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)


def pages() -> list[Path]:
    """The README, then the docs site's pages in the order its navigation gives them."""
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Config)["nav"]  # noqa: S506 (a safe loader)
    return [README, *(ROOT / "docs" / page for entry in nav for page in entry.values())]


def blocks(info: str) -> list[tuple[str, str]]:
    """Each block of that kind, named by its page and number there ("docs/tiers.md block 1"), and its code."""
    found = []
    for page in pages():
        bodies = [body for kind, body in FENCE.findall(page.read_text()) if kind.strip() == info]
        found += [(f"{page.relative_to(ROOT)} block {n}", body) for n, body in enumerate(bodies, start=1)]
    return found


def test_every_docs_page_is_in_the_navigation() -> None:
    assert sorted(p.name for p in (ROOT / "docs").glob("*.md")) == sorted(p.name for p in pages()[1:])


def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    run = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "site" / "python" / "index.html").is_file()


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
    for name, code in examples:
        exec(compile(code, name, "exec"), namespace)  # noqa: S102


def test_shell_examples_run(readme_env: dict[str, str]) -> None:
    examples = blocks("bash test")
    assert examples, "neither README.md nor the docs have a ```bash test block"
    bin_dir = str(Path(sys.executable).parent)  # the venv's amem-graph
    offline = {"AMEM_LLM_BASE_URL": "", "AMEM_LLM_API_KEY": ""}  # as a reader without an LLM runs them
    env = {**os.environ, **readme_env, **offline, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    for name, script in examples:
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, capture_output=True, text=True,
                             cwd=ROOT, timeout=600)
        assert run.returncode == 0, f"{name} failed:\n{script}\n{run.stdout}\n{run.stderr}"
