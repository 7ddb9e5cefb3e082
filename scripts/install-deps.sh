#!/usr/bin/env bash
# Installs the Debian packages ithaca needs, and only those that are missing
# (a machine that has them all returns at once).
#   scripts/install-deps.sh run    what building and running the server needs
#                                  (scripts/run.sh: a first start in minutes)
#   scripts/install-deps.sh [test] that, and every peer the tests and
#                                  benchmarks run against (scripts/test.sh)
set -euo pipefail

scope=${1:-test}
case "$scope" in
  run|test) ;;
  *) echo "usage: $0 [run|test]" >&2; exit 2 ;;
esac

# Building and running: the compiler, meson, and the libraries the server
# links (doctest-dev too: meson's setup checks for it whatever is built).
packages=(
  g++ meson ninja-build pkg-config
  libboost-context-dev liburing-dev libyaml-cpp-dev libspdlog-dev libfmt-dev doctest-dev
  libssl-dev
)
if [ "$scope" = test ]; then
  packages+=(
    memcached python3 python3-pytest python3-pytest-xdist
    nutcracker python3-pylibmc yrmcds iproute2
    clang libclang-rt-14-dev
    prometheus
    openssl python3-pymemcache
    # tests/functional/test_auth.py: memcached -S's sasldb (saslpasswd2) and
    # libmemcached's SASL client tools (memccp, memccat).
    sasl2-bin libmemcached-tools
    user-mode-linux kmod
    # Client libraries for tests/functional/test_client_libraries.py (npm's
    # memcached and memjs are installed by the test itself).
    php-cli php-memcached ruby ruby-dalli libcache-memcached-fast-perl
    openjdk-17-jdk-headless libspymemcached-java
    golang-go golang-github-bradfitz-gomemcache-dev nodejs
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# npm: Debian's package, unless a nodejs from elsewhere (NodeSource's, which
# conflicts with it) already brings its own.
if [ "$scope" = test ] && ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
# The memcached, yrmcds, nutcracker and prometheus packages may start system
# services (the first two on port 11211, which ithaca's default config wants);
# the tests start their own.
[ "$scope" = test ] || exit 0
for svc in memcached yrmcds nutcracker prometheus; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl disable --now "$svc" || true
  elif command -v service >/dev/null 2>&1; then
    "${sudo_cmd[@]}" service "$svc" stop >/dev/null 2>&1 || true
  fi
done
