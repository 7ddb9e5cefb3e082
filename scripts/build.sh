#!/usr/bin/env bash
# Builds ithaca. usage: scripts/build.sh [release|sanitize]   (default release)
#   release  -> build/          optimised, warnings on
#   sanitize -> build-sanitize/ AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
case "$kind" in
  release) dir=build; opts=(--buildtype=release) ;;
  sanitize) dir=build-sanitize; opts=(--buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false) ;;
  *) echo "usage: $0 [release|sanitize]" >&2; exit 2 ;;
esac
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "${opts[@]}" >/dev/null
fi
ninja -C "$dir" >&2
echo "$dir"
