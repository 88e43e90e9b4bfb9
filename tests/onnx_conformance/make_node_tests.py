"""Writes ONNX's backend node tests and ONNX Runtime's verdict on each.

Usage: make_node_tests.py OUT_DIR   (run inside the project's .venv)

The onnx wheel pinned in scripts/requirements.txt ships the node tests as Python definitions
(onnx/backend/test/case/node/*.py) rather than as data files; this writes them in the layout of
ONNX's own test data: OUT_DIR/<test>/model.onnx and test_data_set_0/{input,output}_<i>.pb. Tests
with a sequence, map or optional input or output are left out (collage takes tensors only).

OUT_DIR/ort.tsv gets one line per test, "name<TAB>verdict<TAB>note", verdict being pass, wrong
or refused, as ONNX Runtime's CPU provider runs it with the comparison the conformance test
uses (rtol 1e-3, atol 1e-5, exact for integers, booleans and strings; NaN matches NaN).
"""
import pathlib
import shutil
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnx.backend.test.case import node as node_cases

RTOL, ATOL = 1e-3, 1e-5


def is_tensor_graph(model: onnx.ModelProto) -> bool:
    vis = list(model.graph.input) + list(model.graph.output)
    return all(v.type.HasField("tensor_type") for v in vis)


def as_proto(value, name: str) -> onnx.TensorProto:
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def close(actual: np.ndarray, expected: np.ndarray) -> str:
    """Empty when the arrays agree, else why not."""
    if actual.shape != expected.shape:
        return f"shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind in "fc":
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        if not np.array_equal(np.isnan(a), np.isnan(e)):
            return "NaN in different places"
        ok = np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not ok.all():
            return f"{int((~ok).sum())} of {ok.size} elements differ"
        return ""
    if not np.array_equal(actual.astype(expected.dtype), expected):
        return "values differ"
    return ""


def ort_verdict(model: onnx.ModelProto, inputs, outputs) -> tuple[str, str]:
    try:
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        feeds = {v.name: numpy_helper.to_array(as_proto(x, v.name))
                 for v, x in zip(model.graph.input, inputs)}
        got = sess.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - any failure to load or run is ORT's refusal
        return "refused", str(e).splitlines()[0][:200] if str(e) else type(e).__name__
    for i, (g, want) in enumerate(zip(got, outputs)):
        why = close(np.asarray(g), numpy_helper.to_array(as_proto(want, "")))
        if why:
            return "wrong", f"output {i}: {why}"
    return "pass", ""


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    ort.set_default_logger_severity(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = node_cases.collect_testcases()
    lines = []
    for case in sorted(cases, key=lambda c: c.name):
        if not is_tensor_graph(case.model):
            continue
        inputs, outputs = case.data_sets[0]
        d = out / case.name
        data = d / "test_data_set_0"
        data.mkdir(parents=True)
        (d / "model.onnx").write_bytes(case.model.SerializeToString())
        for kind, values, infos in (("input", inputs, case.model.graph.input),
                                    ("output", outputs, case.model.graph.output)):
            for i, (v, info) in enumerate(zip(values, infos)):
                (data / f"{kind}_{i}.pb").write_bytes(as_proto(v, info.name).SerializeToString())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdict, note = ort_verdict(case.model, inputs, outputs)
        lines.append(f"{case.name}\t{verdict}\t{note}".replace("\n", " "))
    (out / "ort.tsv").write_text("\n".join(lines) + "\n")
    counts = {v: sum(1 for l in lines if l.split("\t")[1] == v) for v in ("pass", "wrong", "refused")}
    print(f"wrote {len(lines)} node tests to {out}; ONNX Runtime {ort.__version__}: "
          f"{counts['pass']} pass, {counts['wrong']} wrong, {counts['refused']} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
