"""Writes CACHE_DIR/models.json, the list of complete test models that the C++ model test reads.

Usage: write_manifest.py CACHE_DIR STAMP   (standard library only; any python3)

A model is listed when its NAME.stamp holds STAMP, i.e. it was exported and given reference
outputs by the current export and reference scripts. The file is replaced atomically.
"""
import json
import os
import pathlib
import sys


def main(argv) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cache, stamp = pathlib.Path(argv[0]), argv[1]
    models = []
    for meta_path in sorted(cache.glob("*.meta.json")):
        name = meta_path.name[:-len(".meta.json")]
        stamp_path = cache / f"{name}.stamp"
        if not stamp_path.exists() or stamp_path.read_text().strip() != stamp:
            continue
        meta = json.loads(meta_path.read_text())
        meta["inputs_npz"] = f"{name}.inputs.npz"
        meta["outputs_npz"] = f"{name}.outputs.npz"
        models.append(meta)
    models.sort(key=lambda m: (m["label"] != "small", m["name"]))
    tmp = cache / "models.json.tmp"
    tmp.write_text(json.dumps({"version": 1, "models": models}, indent=1) + "\n")
    os.replace(tmp, cache / "models.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
