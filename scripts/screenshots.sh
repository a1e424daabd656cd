#!/usr/bin/env bash
# The viewer's screenshots in docs/images (viewer-*.png), taken by its browser test on the embedded store: the only
# run that writes into the repository (the test run writes its screenshots to a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
AMEM_VIEWER_SHOTS="$PWD/docs/images" HF_HUB_OFFLINE=1 exec .venv/bin/python -m pytest -q \
  "tests/test_viewer_ui.py::test_the_viewer_in_a_browser[embedded]" "$@"
