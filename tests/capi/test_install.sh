#!/usr/bin/env bash
# Installs the build into a temporary prefix and uses it as an outside application would:
# find_package(collage) with collage::runtime / collage::compiler, pkg-config, the installed CLI.
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
  pkgconfig/collage-runtime.pc cmake/collage/collageConfig.cmake; do
  [[ -e $libdir/$f ]] || { echo "not installed: $libdir/$f" >&2; exit 1; }
done

# CMake package.
cmake -S "$src/tests/capi/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DEXAMPLES="$src/examples" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/classify" "$data/mlp.collage" "$data/input.npy" | tee "$work/out.txt"
grep -q "top class: $expected " "$work/out.txt"
"$work/build/run_model" "$data/mlp.onnx" "$data/input.npy" 2 | tee "$work/out.txt"
grep -q "argmax of output 0 'logits': $expected " "$work/out.txt"

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
