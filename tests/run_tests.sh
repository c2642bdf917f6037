#!/usr/bin/env bash
# Installs the dependencies, builds, and runs every test.
# usage: tests/run_tests.sh [BUILD_DIR [CMAKE_OPTION...]]
#   tests/run_tests.sh                               the normal build, in build/
#   tests/run_tests.sh build-asan -DASYS_SANITIZE=ON  the same tests under ASan+UBSan
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
tests/install_deps.sh
# consumers of the flame outputs (go tool pprof); a test that needs one and
# does not find it is skipped and says so
tests/install_deps.sh --consumers || echo "run_tests: golang-go not installed; the pprof check will be skipped" >&2
cmake -B "$build" -S . "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
