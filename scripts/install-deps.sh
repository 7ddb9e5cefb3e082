#!/usr/bin/env bash
# Installs the Debian packages ithaca needs to build, test and benchmark, and
# only those that are missing (a machine that has them all returns at once).
set -euo pipefail

packages=(
  g++ meson ninja-build pkg-config
  libboost-context-dev liburing-dev libyaml-cpp-dev libspdlog-dev libfmt-dev doctest-dev
  memcached python3 python3-pytest
  nutcracker python3-pylibmc yrmcds iproute2
  clang libclang-rt-14-dev
  prometheus libsystemd-dev
  libssl-dev openssl python3-pymemcache
  user-mode-linux kmod
  # Client libraries for tests/functional/test_client_libraries.py (npm's
  # memcached and memjs are installed by the test itself).
  php-cli php-memcached ruby ruby-dalli libcache-memcached-fast-perl
  openjdk-17-jdk-headless libspymemcached-java
  golang-go golang-github-bradfitz-gomemcache-dev nodejs
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# npm: Debian's package, unless a nodejs from elsewhere (NodeSource's, which
# conflicts with it) already brings its own.
if ! command -v npm >/dev/null 2>&1; then
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
for svc in memcached yrmcds nutcracker prometheus; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl disable --now "$svc" || true
  elif command -v service >/dev/null 2>&1; then
    "${sudo_cmd[@]}" service "$svc" stop >/dev/null 2>&1 || true
  fi
done
