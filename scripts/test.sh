#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the unit tests (each
# machinarium test on both kernel backends, and every fuzz target replaying
# its seeds and reproducers) and the functional tests over the wire against a
# real memcached, first on the release build and then on an AddressSanitizer
# + UndefinedBehaviorSanitizer build; then a bounded coverage-guided fuzz run
# of every target (clang, libFuzzer + ASan + UBSan; scripts/fuzz), where a
# crash or a broken parser contract fails the run.
#   scripts/test.sh                  release, sanitize and fuzz
#   scripts/test.sh release          only the release build
#   scripts/test.sh fuzz             only the fuzz run
# The sanitize and fuzz builds are unity builds (scripts/build.sh and
# scripts/fuzz give the CPU time each saves, about 40%); the release build is
# not, so the binary people run and benchmark, and a developer's incremental
# rebuild, are compiled file by file as before.
# ITHACA_FUZZ_SECONDS (default 20) is each fuzz target's time;
# ITHACA_TEST_WORKERS (default 3; 0: none) the functional tests' workers.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 1

kinds=("${@:-release sanitize fuzz}")
read -r -a kinds <<<"${kinds[*]}"
passed=0
failed=0
# A small quarantine keeps a sanitized server's memory near a real one's.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:quarantine_size_mb=16}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

for kind in "${kinds[@]}"; do
  if [ "$kind" = fuzz ]; then
    echo "=== fuzz: every target for ${ITHACA_FUZZ_SECONDS:-20} s"
    if scripts/fuzz --seconds "${ITHACA_FUZZ_SECONDS:-20}"; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
    continue
  fi
  echo "=== build: $kind"
  if ! dir=$(scripts/build.sh "$kind"); then
    echo "build $kind failed"; failed=$((failed + 1)); continue
  fi
  echo "=== unit tests: $kind"
  if meson test -C "$dir" --print-errorlogs --num-processes 2; then
    n=$(meson test -C "$dir" --list 2>/dev/null | wc -l); passed=$((passed + n))
  else
    failed=$((failed + 1))
  fi
  if ls tests/functional/test_*.py >/dev/null 2>&1; then
    echo "=== functional tests: $kind"
    sanitized=""
    [ "$kind" = sanitize ] && sanitized=1
    # Most functional tests wait on sockets and timers, not on a core: three
    # pytest-xdist workers on two cores (modules kept whole on one worker,
    # for their module-wide fixtures). ITHACA_TEST_WORKERS=0 runs them in turn.
    # Tests marked `alone` (the stress run) follow, by themselves.
    workers=(-n "${ITHACA_TEST_WORKERS:-3}" --dist loadscope)
    [ "${ITHACA_TEST_WORKERS:-3}" = 0 ] && workers=()
    export ITHACA_BIN="$PWD/$dir/sources/server/ithaca" ITHACA_SANITIZED=$sanitized
    if /usr/bin/python3 -m pytest -q "${workers[@]}" -m "not alone" tests/functional &&
        /usr/bin/python3 -m pytest -q -m alone tests/functional; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1))
    fi
  fi
done
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
