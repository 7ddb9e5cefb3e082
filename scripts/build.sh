#!/usr/bin/env bash
# Builds ithaca and prints the build directory.
#   scripts/build.sh [release|sanitize] [all|server]   (default: release all)
#   release  -> build/          optimised, warnings on
#   sanitize -> build-sanitize/ AddressSanitizer + UndefinedBehaviorSanitizer
#   all      every target: the server, tests, tools and benchmarks
#   server   the server binary alone (sources/server/ithaca), what
#            scripts/run.sh needs: a few minutes where `all` takes many
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
what=${2:-all}
case "$kind" in
  release) dir=build; opts=(--buildtype=release) ;;
  # -O1 and line tables only (-g1): what AddressSanitizer recommends, enough
  # for its reports' file:line, and less than half the compile time of -O2 -g
  # (backend_conn.cc: 49 s -> 19 s of CPU), which CI pays on two cores.
  # A unity build (meson's --unity: up to 16 of a target's sources compiled
  # as one translation unit) parses the headers they share (std, fmt,
  # spdlog, yaml-cpp) and instantiates their templates once per chunk
  # instead of once per file. Measured without ccache (2 cores, loaded): every
  # library and the tests but metrics, cache, server and log took 1,438 s
  # of CPU, where file by file the same plus metrics_test took 2,511 s
  # (about 40% less). Every file-local name must therefore be unique within
  # its target (CONTRIBUTING.md, "Unity builds").
  sanitize) dir=build-sanitize; opts=(-Doptimization=1 -Ddebug=false -Db_ndebug=false -Dcpp_args=-g1 -Dc_args=-g1
                                      -Db_sanitize=address,undefined -Db_lundef=false --unity=on -Dunity_size=16) ;;
  *) echo "usage: $0 [release|sanitize] [all|server]" >&2; exit 2 ;;
esac
case "$what" in
  all) targets=() ;;
  server) targets=(sources/server/ithaca) ;;
  *) echo "usage: $0 [release|sanitize] [all|server]" >&2; exit 2 ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${opts[@]}" >/dev/null
fi
ninja -C "$dir" "${targets[@]}" >&2
echo "$dir"
