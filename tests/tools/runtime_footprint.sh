#!/usr/bin/env bash
# The core runtime library as shipped: stripped, at most 500 KB (goal 300 KB), and linked against
# nothing but the C/C++ system libraries (no LLVM, Abseil, oneDNN, protobuf, OpenMP, ...).
#
#   tests/tools/runtime_footprint.sh BUILD_DIR
set -euo pipefail
lib=$(realpath "$1/lib/libcollage_runtime.so")
limit=500000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strip --strip-unneeded -o "$tmp/runtime.so" "$lib"
size=$(stat -c %s "$tmp/runtime.so")
echo "$(basename "$lib"): $size bytes stripped (limit $limit, goal 300000)"
status=0
if ((size > limit)); then
  echo "FAIL: over the limit" >&2
  status=1
fi
ldd "$lib" | tee "$tmp/ldd.txt"
# The system's C and C++ runtime: libc, libm, libdl, libpthread, librt, libstdc++, libgcc_s, the
# dynamic loader and the vDSO.
allowed='^(linux-vdso\.so|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so|/lib64/ld-linux|ld-linux)'
others=$(awk '{print $1}' "$tmp/ldd.txt" | grep -Ev "$allowed" || true)
if [[ -n $others ]]; then
  echo "FAIL: depends on libraries beyond the C/C++ system libraries: $others" >&2
  status=1
fi
exit "$status"
