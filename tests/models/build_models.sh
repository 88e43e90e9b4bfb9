#!/usr/bin/env bash
# Builds the real test models into the model cache, on demand: ONNX file, inputs, references, manifest.
#
#   tests/models/build_models.sh [--small] [--full] [--all] [--only NAME]... [--force]
#
# With no selection, --small. The cache is ${COLLAGE_MODEL_CACHE:-$HOME/.cache/collage/models}
# (outside git). Each model is NAME.onnx, NAME.inputs.npz (seeded inputs), NAME.outputs.npz (ONNX
# Runtime's outputs), NAME.meta.json and NAME.stamp; a model whose stamp matches the hash of the
# export and reference scripts and the numpy/onnx/onnxruntime versions is up to date and skipped.
# models.json lists every complete model.
# Needs scripts/install-deps to have run (Debian's torch, and .venv for ONNX Runtime).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

usage() {
  echo "usage: tests/models/build_models.sh [--small] [--full] [--all] [--only NAME]... [--force]"
}
here=tests/models
torch_python=/usr/bin/python3
venv_python=.venv/bin/python
cache=${COLLAGE_MODEL_CACHE:-$HOME/.cache/collage/models}

sizes=()
only=()
force=0
while (($#)); do
  case "$1" in
    --small) sizes+=(small) ;;
    --full) sizes+=(full) ;;
    --all) sizes+=(all) ;;
    --only)
      if (($# < 2)); then usage >&2; exit 2; fi
      only+=("$2")
      shift ;;
    --force) force=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
if ((${#sizes[@]} == 0 && ${#only[@]} == 0)); then sizes=(small); fi

declare -A label_of=()
known=()
requested=("${only[@]}")
while read -r name label; do
  label_of[$name]=$label
  known+=("$name")
  for size in "${sizes[@]}"; do
    if [[ $size == all || $size == "$label" ]]; then requested+=("$name"); fi
  done
done < <("$torch_python" "$here/export_models.py" --list)
names=()
declare -A chosen=()
for name in "${requested[@]}"; do
  if [[ -z ${label_of[$name]:-} ]]; then
    echo "build_models: unknown model '$name'; known: ${known[*]}" >&2
    exit 2
  fi
  if [[ -z ${chosen[$name]:-} ]]; then
    chosen[$name]=1
    names+=("$name")
  fi
done
if [[ ! -x $venv_python ]]; then
  echo "build_models: $venv_python is missing; run scripts/install-deps first" >&2
  exit 1
fi

# What the models depend on: the two scripts, and the versions of the packages that compute the
# references (not the rest of requirements.txt).
stamp=$({
  cat "$here/export_models.py" "$here/make_references.py"
  grep -E '^(numpy|onnx|onnxruntime)[~=<>! ]' scripts/requirements.txt
} | sha256sum | cut -c1-16)
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9  # one builder at a time per cache

stale=()
for name in "${names[@]}"; do
  complete=1
  for suffix in onnx inputs.npz outputs.npz meta.json; do
    [[ -f $cache/$name.$suffix ]] || complete=0
  done
  if ((force || !complete)) || [[ "$(cat "$cache/$name.stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -f "$cache/$name.stamp"
    stale+=("$name")
  fi
done

if ((${#stale[@]})); then
  echo "build_models: building ${stale[*]} in $cache"
  t0=$SECONDS
  # Debian's torch with the OpenMP build of OpenBLAS: OpenBLAS's own threads beside torch's
  # OpenMP threads oversubscribe the cores or hang.
  LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$torch_python" "$here/export_models.py" "$cache" "${stale[@]}"
  t1=$SECONDS
  "$venv_python" "$here/make_references.py" "$cache" "${stale[@]}"
  for name in "${stale[@]}"; do
    echo "$stamp" >"$cache/$name.stamp"
  done
  echo "build_models: export $((t1 - t0))s, references $((SECONDS - t1))s"
fi
echo "build_models: ${#names[@]} model(s) up to date in $cache"
"$torch_python" "$here/write_manifest.py" "$cache" "$stamp"
