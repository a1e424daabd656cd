#!/usr/bin/env bash
# The viewer's screenshots in docs/images (viewer-*.png), taken by its browser tests on the embedded store (a small
# tenant, and LoCoMo's conv-30 from ../shared/data): the only run that writes into the repository (the test run
# writes its screenshots to a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
AMEM_VIEWER_SHOTS="$PWD/docs/images" HF_HUB_OFFLINE=1 exec .venv/bin/python -m pytest -q \
  "tests/test_viewer_ui.py::test_the_viewer_in_a_browser[embedded]" \
  "tests/test_viewer_conversation.py::test_a_conversation_in_the_viewer[embedded]" "$@"
