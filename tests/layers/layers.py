#!/usr/bin/env python3
"""The layers of collage and what each may use (docs/architecture.md), checked on the sources and
on the build.

    layers.py check SOURCE_DIR BUILD_DIR   fails (exit 1) naming every file that includes a
                                           header of a layer it must not see, and every target
                                           that links one
    layers.py graph BUILD_DIR              prints the library targets and their direct link
                                           dependencies as a Mermaid flowchart, grouped by layer
                                           (the picture in docs/architecture.md)
    layers.py doc SOURCE_DIR BUILD_DIR     fails when docs/architecture.md's picture is not the
                                           one `graph` prints (scripts/architecture-graph
                                           rewrites it)
    layers.py selftest                     checks that `check` finds planted violations (the
                                           runtime including compiler code, placement including
                                           the artifact writer, an example including a private
                                           header, the search linking an importer) and passes
                                           the allowed uses beside them

The link dependencies come from BUILD_DIR/layers/targets.tsv, which cmake/Layers.cmake writes
when the build is configured. Runs on any Python 3 (no packages)."""
import os
import re
import sys
import tempfile

# Layers, bottom to top, and the layers each may use besides itself. "api_c" is the C ABI
# (runtime.h and its kin), "api" the C++ headers of include/collage.
MAY_USE = {
    "api_c": set(),
    "api": {"api_c"},
    "runtime": {"api_c"},
    # Plain algorithms over arrays the runtime and the reference executor share (NMS, Unique).
    "rt_algorithms": set(),
    "runtime_modules": {"rt_algorithms", "api_c"},
    "ir": {"rt_algorithms", "api", "api_c"},
    "te": {"ir", "api", "api_c"},
    # CUDA code generation shares the cuda runtime module's driver table and program format (a
    # compiled kernel is a launch step of a GPU program); the JIT installs the runtime's workspace
    # for generated kernels' large buffers (runtime/core/kernel_workspace.h), as the runtime's
    # loader of an artifact's native code does.
    "codegen": {"runtime_modules", "runtime", "te", "ir", "api", "api_c"},
    "tune": {"codegen", "te", "ir", "api", "api_c"},
    "te_ops": {"tune", "codegen", "te", "ir", "api", "api_c"},
    "frontends": {"ir", "api", "api_c"},
    "backends": {"ir", "api", "api_c"},
    # A library backend links its runtime module's kernels, so that what the compiler measures is
    # what an artifact runs; openvino hands its region to OpenVINO as an ONNX model, written with
    # the ONNX frontend's tensor encoding; the trees backend reads the code generator's target
    # description (the ISA its kernel is built for).
    # the dynamic backend checks what its module's shared algorithms take (recurrences, TF-IDF).
    "backend_libs": {"backends", "runtime_modules", "rt_algorithms", "frontends", "codegen", "ir",
                     "api", "api_c"},
    "backend_native": {"backends", "te_ops", "tune", "codegen", "te", "ir", "api", "api_c"},
    # The cuda backend generates kernels from te_ops' tensor expressions and runs its programs
    # through the cuda runtime module's code.
    "backend_gpu": {"backends", "runtime_modules", "te_ops", "tune", "codegen", "te", "ir", "api",
                    "api_c"},
    # The wave schedule's format and runner are shared with the runtime (runtime/core).
    "waves": {"runtime", "ir", "api", "api_c"},
    "artifact": {"waves", "runtime", "backends", "codegen", "ir", "api", "api_c"},
    # The search links only what it searches over: backends and the graph.
    "placement": {"backends", "ir", "api", "api_c"},
    "driver": {"placement", "artifact", "waves", "frontends", "backend_libs", "backend_native",
               "backend_gpu", "backends", "ir", "api", "api_c"},
    # The C API: the compiler's over the driver's public header; the runtime's over runtime/core.
    "capi": {"driver", "runtime", "api", "api_c"},
    # The command line: the driver and the model readers (collage/onnx.h, collage/trees.h), plus
    # the tuner and the cost database, which `collage tune` and `collage cost-db` reach and which
    # have no public API.
    "tools": {"driver", "frontends", "placement", "te_ops", "tune", "codegen", "ir", "runtime",
              "api", "api_c"},
    # What a user copies: public headers only.
    "examples": {"api", "api_c"},
}

# What a layer's targets may link, where it differs from what its files may include:
# libcollage_compiler packs every compiler library whole (--whole-archive, capi/CMakeLists.txt),
# so that the C++ API of include/collage is exported from it, while its own files see only the
# driver's public header.
LINK_MAY_USE = {
    "capi": {"driver", "placement", "artifact", "waves", "frontends", "backend_libs",
             "backend_native", "backend_gpu", "backends", "te_ops", "tune", "codegen", "te", "ir",
             "runtime", "runtime_modules", "api", "api_c"},
}

C_HEADERS = {"runtime.h", "runtime_module.h", "backend_plugin.h", "collage.h"}

# Source folders and their layers; the longest matching prefix wins. Folders not listed (tests,
# bench, fuzz, third_party) are not checked.
DIR_LAYERS = {
    "include/collage": "api",
    "runtime/core": "runtime",
    "runtime/modules": "runtime_modules",
    "runtime/algorithms": "rt_algorithms",
    "lib/core": "ir", "lib/ir": "ir", "lib/ops": "ir", "lib/passes": "ir", "lib/io": "ir",
    "lib/reference": "ir",
    "lib/te": "te",
    "codegen": "codegen",
    "lib/tune": "tune",
    "lib/te_ops": "te_ops",
    "lib/frontends": "frontends",
    "lib/backends": "backends",
    "lib/backends/dnnl": "backend_libs", "lib/backends/eigen": "backend_libs",
    "lib/backends/trees": "backend_libs", "lib/backends/openvino": "backend_libs",
    "lib/backends/dynamic": "backend_libs", "lib/backends/strings": "backend_libs",
    "lib/backends/native": "backend_native",
    "lib/backends/cuda": "backend_gpu",
    "lib/waves": "waves",
    "lib/artifact": "artifact",
    "placement": "placement",
    "driver": "driver",
    "capi": "capi",
    "tools": "tools",
    "examples": "examples",
}

# Include paths (as written, relative to an include root) and their layers; the longest matching
# prefix wins.
INCLUDE_LAYERS = {
    "core/": "ir", "ir/": "ir", "ops/": "ir", "passes/": "ir", "io/": "ir", "reference/": "ir",
    "te/": "te",
    "codegen/": "codegen",
    "tune/": "tune",
    "te_ops/": "te_ops",
    "frontends/": "frontends",
    "backends/": "backends",
    "backends/dnnl/": "backend_libs", "backends/eigen/": "backend_libs",
    "backends/trees/": "backend_libs", "backends/openvino/": "backend_libs",
    "backends/native/": "backend_native",
    "backends/cuda/": "backend_gpu",
    "waves/": "waves",
    "artifact/": "artifact",
    "placement/": "placement",
    "driver/": "driver",
}

# Libraries outside collage, and generated headers: not a layer.
EXTERNAL = ("absl/", "nlohmann/", "llvm/", "oneapi/", "openvino/", "dlpack/", "onnx/", "flatbuffers/",
            "google/", "catch2/", "benchmark/", "Eigen/", "unsupported/", "cuda", "nvrtc",
            "artifact_generated.h")

# Targets and their layers.
TARGET_LAYERS = {
    "collage_runtime": "runtime", "collage_artifact_format": "runtime",
    "collage_rt_dynamic_algorithms": "rt_algorithms", "collage_rt_text_algorithms": "rt_algorithms",
    "collage_ir": "ir", "collage_te": "te",
    "collage_codegen_llvm": "codegen", "collage_codegen_cuda": "codegen",
    "collage_tune": "tune", "collage_te_ops": "te_ops",
    "collage_onnx": "frontends", "collage_trees": "frontends", "collage_model_file": "frontends",
    "collage_backends": "backends", "collage_backend_common": "backends",
    "collage_backend_dnnl": "backend_libs", "collage_backend_eigen": "backend_libs",
    "collage_backend_trees": "backend_libs", "collage_backend_openvino": "backend_libs",
    "collage_backend_strings": "backend_libs",
    "collage_backend_native": "backend_native",
    "collage_backend_cuda": "backend_gpu",
    "collage_waves": "waves", "collage_artifact": "artifact", "collage_placement": "placement",
    "collage_driver": "driver", "collage_compiler": "capi",
    "collage": "tools", "collage_cli_common": "tools",
}


def target_layer(name):
    if name in TARGET_LAYERS:
        return TARGET_LAYERS[name]
    if re.fullmatch(r"collage_rt_\w+", name):
        return "runtime_modules"
    return None


def longest_prefix(table, path):
    best = None
    for prefix, layer in table.items():
        if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and (
                best is None or len(prefix) > len(best[0])):
            best = (prefix, layer)
    return best[1] if best else None


def dir_layer(rel_dir):
    return longest_prefix(DIR_LAYERS, rel_dir)


def sources(src):
    for top in sorted(set(d.split("/")[0] for d in DIR_LAYERS)):
        for root, dirs, files in os.walk(os.path.join(src, top)):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".h", ".c", ".cpp")):
                    yield os.path.relpath(os.path.join(root, f), src)


def basename_index(src):
    index = {}
    for rel in sources(src):
        index.setdefault(os.path.basename(rel), []).append(rel)
    return index


def include_layer(src, rel_file, inc, index):
    """The layer of `#include "inc"` in rel_file; None for an external header."""
    if inc.startswith(EXTERNAL):
        return None
    if inc.startswith("collage/"):
        return "api_c" if inc[len("collage/"):] in C_HEADERS else "api"
    here = os.path.dirname(rel_file)
    local = os.path.normpath(os.path.join(here, inc))
    if os.path.exists(os.path.join(src, local)):
        return dir_layer(os.path.dirname(local)) or "unknown"
    layer = longest_prefix(INCLUDE_LAYERS, inc)
    if layer:
        return layer
    # A header found through a target's include folder (a runtime folder shared with the
    # compiler, a module's own folder): by its unique file name.
    found = index.get(os.path.basename(inc), [])
    if len(found) == 1:
        return dir_layer(os.path.dirname(found[0])) or "unknown"
    return "unknown"


def check_includes(src):
    problems = []
    index = basename_index(src)
    for rel in sources(src):
        layer = dir_layer(os.path.dirname(rel))
        if layer is None:
            continue
        if layer == "api" and os.path.basename(rel) in C_HEADERS:
            layer = "api_c"
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                used = include_layer(src, rel, m.group(1), index)
                if used is None or used == layer or used in MAY_USE[layer]:
                    continue
                problems.append(f"{rel}:{number}: layer {layer} includes \"{m.group(1)}\" of "
                                f"layer {used} (may use: {', '.join(sorted(MAY_USE[layer]))})")
    return problems


def read_targets(build):
    rows = {}
    with open(os.path.join(build, "layers", "targets.tsv"), encoding="utf-8") as f:
        for line in f:
            name, kind, folder, links = line.rstrip("\n").split("\t")
            deps = [d for d in links.split(",") if d]
            rows[name] = (kind, folder, deps)
    return rows


def check_links(build):
    problems = []
    for name, (_, _, deps) in sorted(read_targets(build).items()):
        layer = target_layer(name)
        if layer is None:
            continue
        may_link = LINK_MAY_USE.get(layer, MAY_USE[layer])
        for dep in deps:
            used = target_layer(dep)
            if used is None or used == layer or used in may_link:
                continue
            problems.append(f"target {name} (layer {layer}) links {dep} of layer {used}")
    return problems


LAYER_ORDER = ["rt_algorithms", "runtime", "runtime_modules", "ir", "te", "codegen", "tune", "te_ops",
               "frontends", "backends", "backend_libs", "backend_native", "backend_gpu", "waves", "artifact",
               "placement", "driver", "capi", "tools"]


def mermaid(build):
    targets = read_targets(build)
    libs = sorted(n for n in targets if target_layer(n))
    lines = ["```mermaid", "flowchart BT"]
    for layer in LAYER_ORDER:
        members = [n for n in libs if target_layer(n) == layer]
        if not members:
            continue
        lines.append(f"  subgraph {layer}")
        lines.extend(f"    {n}" for n in members)
        lines.append("  end")
    for n in libs:
        for dep in sorted(set(targets[n][2])):
            if target_layer(dep):
                lines.append(f"  {n} --> {dep}")
    lines.append("```")
    return "\n".join(lines) + "\n"


BEGIN = "<!-- layers.py graph: begin (generated by scripts/architecture-graph) -->\n"
END = "<!-- layers.py graph: end -->\n"


def doc_block(src):
    with open(os.path.join(src, "docs", "architecture.md"), encoding="utf-8") as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        return text, None
    return text, text[text.index(BEGIN) + len(BEGIN):text.index(END)]


def selftest():
    """0 when `check` flags exactly the planted violations of a small fake tree."""
    files = {
        "runtime/core/loader.cpp": '#include "collage/runtime.h"\n#include "placement/search.h"\n',
        "placement/search.h": '#include "collage/graph.h"\n',
        "placement/search.cpp": '#include "placement/search.h"\n#include "artifact/artifact.h"\n',
        "lib/artifact/artifact.h": '#include "collage/graph.h"\n',
        "examples/main.cpp": '#include "collage/compiler.h"\n#include "ir/graph_impl.h"\n',
        "lib/ir/graph_impl.h": "",
    }
    targets = ("collage_placement\tSTATIC_LIBRARY\tplacement\tcollage_ir,collage_onnx\n"
               "collage_driver\tSTATIC_LIBRARY\tdriver\tcollage_placement,collage_onnx\n")
    with tempfile.TemporaryDirectory() as root:
        src, build = os.path.join(root, "src"), os.path.join(root, "build")
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(src, rel)), exist_ok=True)
            with open(os.path.join(src, rel), "w", encoding="utf-8") as f:
                f.write(text)
        os.makedirs(os.path.join(build, "layers"))
        with open(os.path.join(build, "layers", "targets.tsv"), "w", encoding="utf-8") as f:
            f.write(targets)
        found = sorted(check_includes(src) + check_links(build))
    expected = sorted([
        'examples/main.cpp:2: layer examples includes "ir/graph_impl.h" of layer ir',
        'placement/search.cpp:2: layer placement includes "artifact/artifact.h" of layer artifact',
        'runtime/core/loader.cpp:2: layer runtime includes "placement/search.h" of layer placement',
        "target collage_placement (layer placement) links collage_onnx of layer frontends",
    ])
    got = [p.split(" (may use")[0] for p in found]
    for line in found:
        print(line)
    if got != expected:
        print("layers.py selftest: expected exactly:\n  " + "\n  ".join(expected))
        return 1
    print(f"layers.py selftest: the {len(expected)} planted violations found, nothing else")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) == 3 and argv[1] == "graph":
        sys.stdout.write(mermaid(argv[2]))
        return 0
    if len(argv) == 4 and argv[1] == "check":
        problems = check_includes(argv[2]) + check_links(argv[3])
        for p in problems:
            print(p)
        print(f"layers: {len(problems)} violation(s)")
        return 1 if problems else 0
    if len(argv) == 4 and argv[1] == "doc":
        _, block = doc_block(argv[2])
        if block != mermaid(argv[3]):
            print("docs/architecture.md: the picture is not the build's link graph; run "
                  "scripts/architecture-graph")
            return 1
        print("docs/architecture.md: the picture is the build's link graph")
        return 0
    if len(argv) == 4 and argv[1] == "write-doc":
        text, block = doc_block(argv[2])
        if block is None:
            print("docs/architecture.md has no graph markers", file=sys.stderr)
            return 1
        new = text.replace(BEGIN + block + END, BEGIN + mermaid(argv[3]) + END)
        with open(os.path.join(argv[2], "docs", "architecture.md"), "w", encoding="utf-8") as f:
            f.write(new)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
