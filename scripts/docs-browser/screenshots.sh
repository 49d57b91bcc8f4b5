#!/usr/bin/env bash
# Retakes the pictures of the documentation (docs/assets/*.png) in headless Chromium: the home
# page, a metric's page, the compare guide and the demo's comparison report. Needs the package
# installed in .venv and the documentation tools in .venv-docs (bash scripts/test.sh makes both).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
NO_MKDOCS_2_WARNING=1 .venv-docs/bin/mkdocs build --strict --quiet --site-dir "$work/site"
(cd "$work" && "$repo/.venv/bin/polars-rag" >/dev/null)
node --experimental-websocket scripts/docs-browser/check_site.mjs "$work/site" "$(command -v chromium)" \
    --screenshots docs/assets --report "$work/demo-output/run_b_vs_run_a.html"
