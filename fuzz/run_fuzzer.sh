#!/usr/bin/env bash
# Builds the artifact-loader fuzzer (fuzz/artifact_fuzzer.cpp) with clang, libFuzzer, ASan and
# UBSan from the runtime's sources, replays the inputs of past findings (fuzz/regressions), then
# fuzzes for a bounded time on a corpus seeded with real artifacts. Exits non-zero when an input
# crashes or trips a sanitizer (the reproducer is left in OUT_DIR as crash-*).
#
#   fuzz/run_fuzzer.sh [SECONDS] [BUILD_DIR] [OUT_DIR]
#
# SECONDS (default 60; 0: only the regressions) bounds the run. BUILD_DIR (default build) is a
# built tree: its test-data/capi artifacts seed the corpus (ctest -R capi/fixture writes them) and
# its lib/ holds the runtime modules (libcollage_rt_*.so) that loaded artifacts need. OUT_DIR
# (default BUILD_DIR/fuzz) keeps the fuzzer, the corpus and any crash files.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
build=$(realpath "${2:-build}")
out=$(mkdir -p "${3:-$build/fuzz}" && realpath "${3:-$build/fuzz}")
cxx=${CXX_FUZZ:-clang++}

mkdir -p "$out/generated" "$out/corpus" "$out/obj"
flatc --cpp --scoped-enums -o "$out/generated" runtime/core/artifact.fbs
# The runtime's C API compiled into the fuzzer, instrumented like the harness (two at a time).
sanitizers=fuzzer,address,undefined
flags=(-std=c++20 -g -O1 "-fsanitize=$sanitizers" -fno-sanitize-recover=undefined
  -DCOLLAGE_BUILDING_LIBRARY '-DCOLLAGE_VERSION="fuzz"' -Iinclude -Iruntime/core -Icapi
  "-I$out/generated")
for f in fuzz/artifact_fuzzer.cpp runtime/core/*.cpp capi/runtime_api.cpp capi/status.cpp; do
  "$cxx" "${flags[@]}" -c "$f" -o "$out/obj/${f//\//_}.o" &
  if (($(jobs -rp | wc -l) >= 2)); then wait -n; fi
done
while (($(jobs -rp | wc -l) > 0)); do wait -n; done
"$cxx" "-fsanitize=$sanitizers" "$out"/obj/*.o -ldl -lpthread -o "$out/artifact_fuzzer"

for f in "$build"/test-data/capi/*.collage fuzz/regressions/*; do
  [[ -e $f ]] && cp "$f" "$out/corpus/"
done
export COLLAGE_FUZZ_MODULE_DIR="$build/lib" ASAN_OPTIONS=detect_leaks=1
cd "$out"  # crash-* files land here
./artifact_fuzzer "$OLDPWD"/fuzz/regressions/*
if ((seconds > 0)); then
  ./artifact_fuzzer -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 corpus
fi
