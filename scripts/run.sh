#!/usr/bin/env bash
# Installs what is missing, builds (release) and runs ithaca on the bundled
# config (cache on port 11211). Extra arguments go to ithaca (e.g. -p 11311).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
dir=$(scripts/build.sh release)
exec "$dir/sources/server/ithaca" --config config/ithaca.yaml "$@"
