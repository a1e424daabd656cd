#!/usr/bin/env bash
# Everything a fresh machine needs: a virtualenv with amem-graph and its test tools, and the Neo4j jars.
# On these machines torch comes from ../shared/wheels (a CPU build) so pip does not pull the CUDA one.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
for wheel in ../shared/wheels/torch-*.whl; do
  [ -e "$wheel" ] && .venv/bin/python -m pip install -q "$wheel"
done
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/amem-graph neo4j install
