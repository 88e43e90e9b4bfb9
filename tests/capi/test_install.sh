#!/usr/bin/env bash
# Installs the build into a temporary prefix and uses it as an outside application would: the
# examples (examples/, a project of its own) built with find_package(collage) against it and run,
# the design's one among them (compile_and_run: a C++ graph, a custom TE operator and schedule, a
# backend with a pattern, placement, the artifact run by the runtime); pkg-config; the installed
# CLI.
#
#   tests/capi/test_install.sh BUILD_DIR SOURCE_DIR DATA_DIR
set -euo pipefail
build=$1 src=$2 data=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
expected=$(tr -d '[:space:]' <"$data/expected_class.txt")

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name 'libcollage_runtime.so' | head -n 1)")
for f in libcollage_runtime.so libcollage_compiler.so libcollage_rt_eigen.so libcollage_rt_dnnl.so \
  pkgconfig/collage-runtime.pc cmake/collage/collageConfig.cmake ../include/collage/compiler.h; do
  [[ -e $libdir/$f ]] || { echo "not installed: $libdir/$f" >&2; exit 1; }
done

# The CMake package: every example, from the installed headers and libraries only (the build's
# ccache is not used: nothing of collage's own build can leak in).
cmake -S "$src/examples" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/build" -j2 >/dev/null
ex=$work/build
"$ex/compile_and_run/compile_and_run" "$work/design.collage" | tee "$work/out.txt"
grep -q "artifact vs reference: max |difference|" "$work/out.txt"
"$ex/c/collage_classify" "$data/mlp.collage" "$data/input.npy" | tee "$work/out.txt"
grep -q "top class: $expected " "$work/out.txt"
"$ex/cpp/collage_run_model" "$data/mlp.onnx" "$data/input.npy" 2 | tee "$work/out.txt"
grep -q "argmax of output 0 'logits': $expected " "$work/out.txt"
# The plugin: compiled in through the C API, run by the runtime with the plugin's module only.
"$ex/c_plugin/compile_with_plugin" "$ex/c_plugin/libcollage_gemm_plugin.so" "$data/mlp.onnx" \
  "$work/cgemm.collage"
"$ex/c/collage_classify" --module-dir "$ex/plugin-modules" "$work/cgemm.collage" \
  "$data/input.npy" | tee "$work/out.txt"
grep -q "top class: $expected " "$work/out.txt"
"$ex/te/te_matmul" 64 >/dev/null
"$ex/te/te_custom_op" >/dev/null
"$ex/custom_backend/custom_backend" >/dev/null

# pkg-config (scripts/install-deps installs pkgconf).
export PKG_CONFIG_PATH=$libdir/pkgconfig
[[ $(pkg-config --modversion collage-runtime) == "$(pkg-config --modversion collage-compiler)" ]]
# shellcheck disable=SC2046  # pkg-config output is meant to be split
cc -std=c11 -o "$work/classify_pc" "$src/examples/c/classify.c" "$src/examples/c/npy.c" \
  $(pkg-config --cflags --libs collage-runtime) -Wl,-rpath,"$libdir"
"$work/classify_pc" "$data/mlp.collage" "$data/input.npy" | grep -q "top class: $expected "

# The installed command line runs an artifact through the installed runtime and modules.
"$prefix/bin/collage" run "$data/mlp.collage" | grep -q "artifact, arena"
echo "install test passed"
