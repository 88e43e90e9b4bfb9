#!/usr/bin/env bash
# Builds the artifact-loader fuzzer (fuzz/artifact_fuzzer.cpp) with clang, libFuzzer, ASan and
# UBSan from the runtime's sources, replays the inputs of past findings (fuzz/regressions), then
# fuzzes for a bounded time on a corpus seeded with real artifacts. Exits non-zero when an input
# crashes or trips a sanitizer (the reproducer is left in OUT_DIR as crash-*).
#
#   fuzz/run_fuzzer.sh [SECONDS] [BUILD_DIR] [OUT_DIR]
#
# SECONDS (default 60; 0: only the regressions) bounds the run. BUILD_DIR (default build) is a
# built (Release, not sanitized) tree. Its test binaries write the seeds into its test-data/
# when they are missing: test_runtime "[.capi-fixture]" the C API tests' artifacts (capi/), and
# test_waves "[.fuzz-seeds]" small artifacts with a wave schedule (fuzz-seeds/), so that
# mutations reach the schedule's decoder and checks. Its lib/ holds the runtime modules
# (libcollage_rt_*.so) that loaded artifacts need. OUT_DIR (default BUILD_DIR/fuzz) keeps the
# fuzzer, the corpus and any crash files. FUZZER_FLAGS adds libFuzzer options to the timed run
# (e.g. FUZZER_FLAGS=-print_coverage=1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
build=$(realpath "${2:-build}")
out=$(mkdir -p "${3:-$build/fuzz}" && realpath "${3:-$build/fuzz}")
cxx=${CXX_FUZZ:-clang++}

mkdir -p "$out/generated" "$out/corpus" "$out/obj"
sources=(fuzz/artifact_fuzzer.cpp runtime/core/*.cpp capi/runtime_api.cpp capi/status.cpp)
# Built again only when a source or header it is made of is newer than the fuzzer.
if [[ ! -x $out/artifact_fuzzer ]] || [[ -n $(find fuzz/artifact_fuzzer.cpp runtime/core capi include -newer \
  "$out/artifact_fuzzer" -print -quit) ]]; then
  rm -f "$out"/obj/*.o
  flatc --cpp --scoped-enums -o "$out/generated" runtime/core/artifact.fbs
  # The runtime's C API compiled into the fuzzer, instrumented like the harness (two at a time).
  sanitizers=fuzzer,address,undefined
  flags=(-std=c++20 -g -O1 "-fsanitize=$sanitizers" -fno-sanitize-recover=undefined
    -DCOLLAGE_BUILDING_LIBRARY '-DCOLLAGE_VERSION="fuzz"' -Iinclude -Iruntime/core -Icapi
    "-I$out/generated")
  for f in "${sources[@]}"; do
    "$cxx" "${flags[@]}" -c "$f" -o "$out/obj/${f//\//_}.o" &
    if (($(jobs -rp | wc -l) >= 2)); then wait -n; fi
  done
  while (($(jobs -rp | wc -l) > 0)); do wait -n; done
  "$cxx" "-fsanitize=$sanitizers" "$out"/obj/*.o -ldl -lpthread -o "$out/artifact_fuzzer"
fi

# The seeds, made again when the test binary that writes them is newer than they are.
seeds() {  # seeds BINARY TAG DIR
  if [[ ! -x $1 ]]; then
    echo "run_fuzzer: $1 is not built; the corpus has no $3 seeds" >&2
  elif [[ ! -e $3/.stamp || $1 -nt $3/.stamp ]]; then
    "$1" "$2" >/dev/null && touch "$3/.stamp"
  fi
}
seeds "$build/bin/test_runtime" "[.capi-fixture]" "$build/test-data/capi"
seeds "$build/bin/test_waves" "[.fuzz-seeds]" "$build/test-data/fuzz-seeds"
for f in "$build"/test-data/capi/*.collage "$build"/test-data/fuzz-seeds/*.collage \
  fuzz/regressions/*; do
  [[ -e $f ]] && cp "$f" "$out/corpus/"
done
# intercept_tls_get_addr=0: LeakSanitizer otherwise scans the dynamic TLS of the runtime
# modules (dlopen'ed and closed for every artifact) and, misreading glibc's DTLS layout, crashes
# in its tracer ("Tracer caught signal 11" in ScanRangeForPointers; google/sanitizers#1322).
export COLLAGE_FUZZ_MODULE_DIR="$build/lib" ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0
cd "$out"  # crash-* files land here
./artifact_fuzzer "$OLDPWD"/fuzz/regressions/*
if ((seconds > 0)); then
  read -ra extra <<<"${FUZZER_FLAGS:-}"
  ./artifact_fuzzer -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 "${extra[@]}" corpus
fi
