#!/usr/bin/env bash
# Builds a libFuzzer target with clang, ASan and UBSan, replays the inputs of its past findings,
# then fuzzes for a bounded time. Exits non-zero when an input crashes or trips a sanitizer (the
# reproducer is left in OUT_DIR as crash-*).
#
#   [FUZZ_TARGET=artifact|wave_check|onnx] fuzz/run_fuzzer.sh [SECONDS] [BUILD_DIR] [OUT_DIR]
#
# Targets:
#   artifact (default): fuzz/artifact_fuzzer.cpp, the artifact loader and the runtime's C API,
#     built from the runtime's sources; past findings in fuzz/regressions/. Its corpus is seeded
#     from BUILD_DIR, a built (Release, not sanitized) tree whose test binaries write the seeds
#     into its test-data/ when they are missing: test_runtime "[.capi-fixture]" the C API tests'
#     artifacts (capi/), and test_waves "[.fuzz-seeds]" small artifacts with a wave schedule
#     (fuzz-seeds/), so that mutations reach the schedule's decoder and checks, and
#     test_runtime "[.control-flow-seeds]" If, Loop and Scan kernels whose nested plans
#     (control-flow-seeds/) reach the dynamic module's body decoder and checks. BUILD_DIR's lib/
#     holds the runtime modules (libcollage_rt_*.so) that loaded artifacts need.
#   wave_check: fuzz/wave_check_fuzzer.cpp, the wave schedule check against an oracle; needs no
#     build tree (past findings in fuzz/regressions-wave-check/).
#   onnx: fuzz/onnx_fuzzer.cpp, the ONNX importer, the graph passes and the reference executor on
#     ONNX model bytes, with a structure-aware mutator. It links the compiler's libraries, so it
#     is built by CMake with clang (COLLAGE_FUZZ=ON, COLLAGE_SANITIZE=ON) in OUT_DIR/cmake-onnx.
#     Its corpus is seeded with BUILD_DIR's operator cases (test-data/op_cases/*.onnx, made by
#     scripts/test) and the test models of the model cache with their large initializers replaced
#     (BUILD_DIR/bin/onnx_fuzz_replay --make-seeds, again only for models newer than their seed);
#     past findings in fuzz/regressions-onnx/.
# SECONDS (default 60; 0: only the regressions) bounds the run. BUILD_DIR defaults to build,
# OUT_DIR to BUILD_DIR/fuzz: it keeps the fuzzers, their corpora (corpus/, corpus-wave_check/) and
# any crash files. A fuzzer is built again only when a source or header it is made of is newer.
# FUZZER_FLAGS adds libFuzzer options to the timed run (e.g. FUZZER_FLAGS=-print_coverage=1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
build=$(realpath "${2:-build}")
out=$(mkdir -p "${3:-$build/fuzz}" && realpath "${3:-$build/fuzz}")
cxx=${CXX_FUZZ:-clang++}
target=${FUZZ_TARGET:-artifact}
max_len=65536
tuning=()
sanitizers=fuzzer,address,undefined
flags=(-std=c++20 -g -O1 "-fsanitize=$sanitizers" -fno-sanitize-recover=undefined -Iinclude
  -Iruntime/core)
case $target in
  artifact)
    sources=(fuzz/artifact_fuzzer.cpp runtime/core/*.cpp capi/runtime_api.cpp capi/status.cpp)
    flags+=(-DCOLLAGE_BUILDING_LIBRARY '-DCOLLAGE_VERSION="fuzz"' -Icapi "-I$out/generated")
    corpus=corpus regressions=fuzz/regressions ;;
  wave_check)
    sources=(fuzz/wave_check_fuzzer.cpp runtime/core/wave_check.cpp)
    corpus=corpus-wave_check regressions=fuzz/regressions-wave-check ;;
  onnx)  # shrunk real models are tens of kilobytes
    corpus=corpus-onnx regressions=fuzz/regressions-onnx max_len=262144
    # The entropic schedule's bookkeeping (InputCorpus::UpdateFeatureFrequency, a linear search
    # per feature of the thousands each model touches) took half of the CPU time per execution.
    tuning=(-entropic=0) ;;
  *) echo "run_fuzzer: FUZZ_TARGET must be artifact, wave_check or onnx, not '$target'" >&2
     exit 2 ;;
esac
fuzzer=$out/${target}_fuzzer
obj=$out/obj-$target
mkdir -p "$out/$corpus" "$obj"

if [[ $target == onnx ]]; then
  # Ninja rebuilds only what changed; -j2 as everywhere on the shared machines.
  cmake -S . -B "$out/cmake-onnx" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" -DCMAKE_CXX_COMPILER="$cxx" -DCOLLAGE_FUZZ=ON \
    -DCOLLAGE_SANITIZE=ON -DCOLLAGE_BUILD_TESTS=OFF -DCOLLAGE_BUILD_BENCH=OFF >/dev/null
  ninja -C "$out/cmake-onnx" -j2 onnx_fuzzer
  ln -sf "$out/cmake-onnx/bin/onnx_fuzzer" "$fuzzer"
  if [[ -x $build/bin/onnx_fuzz_replay ]]; then
    "$build/bin/onnx_fuzz_replay" --make-seeds "$out/$corpus" \
      "${COLLAGE_MODEL_CACHE:-$HOME/.cache/collage/models}"
  else
    echo "run_fuzzer: $build/bin/onnx_fuzz_replay is not built; the corpus has no model seeds" >&2
  fi
  for f in "$build"/test-data/op_cases/*.onnx; do
    [[ -e $f ]] && cp "$f" "$out/$corpus/"
  done
elif [[ ! -x $fuzzer ]] || [[ -n $(find "fuzz/${target}_fuzzer.cpp" runtime/core capi include \
  -newer "$fuzzer" -print -quit) ]]; then
  rm -f "$obj"/*.o
  if [[ $target == artifact ]]; then
    flatc --cpp --scoped-enums -o "$out/generated" runtime/core/artifact.fbs
  fi
  for f in "${sources[@]}"; do  # two at a time
    "$cxx" "${flags[@]}" -c "$f" -o "$obj/${f//\//_}.o" &
    if (($(jobs -rp | wc -l) >= 2)); then wait -n; fi
  done
  while (($(jobs -rp | wc -l) > 0)); do wait -n; done
  "$cxx" "-fsanitize=$sanitizers" "$obj"/*.o -ldl -lpthread -o "$fuzzer"
fi

if [[ $target == artifact ]]; then
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
  seeds "$build/bin/test_runtime" "[.control-flow-seeds]" "$build/test-data/control-flow-seeds"
  for f in "$build"/test-data/capi/*.collage "$build"/test-data/fuzz-seeds/*.collage \
           "$build"/test-data/control-flow-seeds/*.collage; do
    [[ -e $f ]] && cp "$f" "$out/$corpus/"
  done
fi
past=()
for f in "$regressions"/*; do
  [[ -f $f ]] && past+=("$PWD/$f") && cp "$f" "$out/$corpus/"
done
# intercept_tls_get_addr=0: LeakSanitizer otherwise scans the dynamic TLS of the runtime
# modules (dlopen'ed and closed for every artifact) and, misreading glibc's DTLS layout, crashes
# in its tracer ("Tracer caught signal 11" in ScanRangeForPointers; google/sanitizers#1322).
export COLLAGE_FUZZ_MODULE_DIR="$build/lib" ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0
cd "$out"  # crash-* files land here
if ((${#past[@]})); then "$fuzzer" "${past[@]}"; fi
if ((seconds > 0)); then
  read -ra extra <<<"${FUZZER_FLAGS:-}"
  "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 "${tuning[@]}" "${extra[@]}" "$corpus"
fi
