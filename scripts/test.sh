#!/usr/bin/env bash
# The test command: set up, check the layers (an upward import or a cycle fails here), then run every test (slow
# ones included) against a real Neo4j.
# Uses the server named by AMEM_TEST_NEO4J_URI / AMEM_TEST_NEO4J_PASSWORD, else starts a private one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
.venv/bin/lint-imports --no-cache
HF_HUB_OFFLINE=1 exec .venv/bin/python -m pytest "$@"
