#!/usr/bin/env bash
# Runs the report fuzzer (libFuzzer: the archive reader, the importer and the
# record dump on each input) from the seed corpus of tests/data.
# usage: tests/fuzz/run_fuzz.sh [SECONDS | -runs=N] [BUILD_DIR]
#   tests/fuzz/run_fuzz.sh -runs=3000     what CI runs (a short, fixed number of inputs)
#   tests/fuzz/run_fuzz.sh 3600           an hour
# The corpus it grows is BUILD_DIR/corpus; what it finds goes to BUILD_DIR/findings
# (a crash, a sanitizer report, a leak or an input slower than 10 s), and the
# exit status is then non-zero.
set -euo pipefail
cd "$(dirname "$0")/../.."
budget=${1:-60}
build=${2:-build-fuzz}
case "$budget" in
  -runs=*) limit=("$budget") ;;
  *) limit=(-max_total_time="$budget") ;;
esac
CC=clang cmake -B "$build" -S . -DASYS_BUILD_FUZZ=ON -DASYS_BUILD_TESTS=OFF \
  -DASYS_BUILD_SIMPPU=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_report >/dev/null
mkdir -p "$build/corpus" "$build/findings"
cp -n tests/data/fuzz-seed/*.report tests/data/bad/*.report "$build/corpus/" 2>/dev/null || true
"$build/fuzz/fuzz_report" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
  -print_final_stats=1 -artifact_prefix="$build/findings/" "$build/corpus" 2>&1 |
  grep -E '^(#[0-9]+ *(DONE|INITED)|stat::|==[0-9]+==|SUMMARY|artifact|Done )' || true
status=${PIPESTATUS[0]}
exit "$status"
