#!/usr/bin/env bash
# Installs what building and running needs (only what is missing), builds the
# server alone (release) and runs it on the bundled config: a cache on port
# 11211. Extra arguments go to ithaca (e.g. -p 11311). The tests' peers and
# targets are scripts/test.sh's business, not a first start's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
dir=$(scripts/build.sh release server)
exec "$dir/sources/server/ithaca" --config config/ithaca.yaml "$@"
