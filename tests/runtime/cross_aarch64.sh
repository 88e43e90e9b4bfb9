#!/usr/bin/env bash
# Cross-builds the runtime alone (cmake -S runtime: libcollage_runtime, the Eigen module, the C
# example) for aarch64 and runs an artifact compiled on this machine under qemu-user: the
# printed class must be the one the reference executor computed.
#
#   tests/runtime/cross_aarch64.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR (default build) holds test-data/capi from the C API fixture (ctest -R capi/fixture);
# OUT_DIR (default BUILD_DIR/aarch64) is the cross build. Needs g++-aarch64-linux-gnu and
# qemu-user (scripts/install-deps installs them): a missing one is an incomplete install, and fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=$(realpath "${1:-build}")
out=${2:-$build/aarch64}
data=$build/test-data/capi
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  command -v "$tool" >/dev/null || {
    echo "no $tool: scripts/install-deps installs g++-aarch64-linux-gnu and qemu-user" >&2
    exit 1
  }
done

# The header-only packages the runtime includes live in the build machine's /usr/include, which
# a cross compiler must not search as a whole: expose just them.
mkdir -p "$out/host-include"
for dir in flatbuffers dlpack; do ln -sfn "/usr/include/$dir" "$out/host-include/$dir"; done
cmake -S runtime -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DCMAKE_C_FLAGS="-isystem $out/host-include" -DCMAKE_CXX_FLAGS="-isystem $out/host-include" \
  >/dev/null
cmake --build "$out" -j 2 --target collage_runtime collage_rt_eigen collage_classify >/dev/null
readelf -h "$out/lib/libcollage_runtime.so" | grep -q "Machine: *AArch64"
cp "$out/lib/libcollage_runtime.so" "$out/libcollage_runtime.stripped.so"
aarch64-linux-gnu-strip "$out/libcollage_runtime.stripped.so"
echo "aarch64 libcollage_runtime.so: $(stat -c %s "$out/libcollage_runtime.stripped.so") bytes stripped"

expected=$(tr -d '[:space:]' <"$data/expected_class.txt")
qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/bin/collage_classify" "$data/mlp.collage" \
  "$data/input.npy" | tee "$out/classify.txt"
grep -q "top class: $expected " "$out/classify.txt"
echo "aarch64 run passed"
