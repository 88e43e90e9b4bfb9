"""LSTM, GRU and DeformConv at the sizes of real models (bidirectional LSTM and GRU: sequence 64,
batch 1, input 128, hidden 256; DeformConv: 1x64x56x56, 3x3, 64 outputs, offsets and mask given):
collage's oneDNN backend (an artifact compiled with --backends dnnl, run by `collage run`), the
reference executor (`collage run --placement reference`) and ONNX Runtime (CPU, 2 threads, in
process), alternating the contenders round by round; prints each one's median of the per-round
medians and the ratios. Not a test.

    .venv/bin/python bench/python/rnn_kernels.py BUILD_DIR [--rounds 5] [--repeat 20]
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import single_op_bench

rng = np.random.default_rng(7)
SEQ, BATCH, INPUT, HIDDEN = 64, 1, 128, 256


def model(op, x_shape, inits, inputs, outputs, attrs=None):
    """One node over graph input x and constants `inits` (an empty name: an absent input);
    outputs is [(name, shape)], all f32."""
    nodes = [helper.make_node(op, ["x"] + inputs, [o[0] for o in outputs], name=op.lower(),
                              **(attrs or {}))]
    graph = helper.make_graph(
        nodes, op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    onnx.checker.check_model(m)
    return m


def uniform(*shape, scale=0.1):
    return rng.uniform(-scale, scale, shape).astype(np.float32)


def recurrent(op, gates, attrs):
    inits = {"w": uniform(2, gates * HIDDEN, INPUT), "r": uniform(2, gates * HIDDEN, HIDDEN),
             "b": uniform(2, 2 * gates * HIDDEN)}
    outputs = [("y", [SEQ, 2, BATCH, HIDDEN]), ("y_h", [2, BATCH, HIDDEN])]
    if op == "LSTM":
        outputs.append(("y_c", [2, BATCH, HIDDEN]))
    return model(op, [SEQ, BATCH, INPUT], inits, ["w", "r", "b"], outputs,
                 dict(direction="bidirectional", hidden_size=HIDDEN, **attrs))


def cases():
    x_seq = rng.standard_normal([SEQ, BATCH, INPUT]).astype(np.float32)
    act = [1, 64, 56, 56]
    deform = model("DeformConv", act,
                   {"w": uniform(64, 64, 3, 3), "offset": uniform(1, 18, 56, 56, scale=2.0),
                    "b": uniform(64), "mask": rng.uniform(0, 1, [1, 9, 56, 56]).astype(np.float32)},
                   ["w", "offset", "b", "mask"], [("y", act)], {"pads": [1, 1, 1, 1]})
    return [
        ("LSTM bidirectional 64x1x128, hidden 256", recurrent("LSTM", 4, {}), x_seq),
        ("GRU bidirectional 64x1x128, hidden 256, linear_before_reset 1",
         recurrent("GRU", 3, {"linear_before_reset": 1}), x_seq),
        ("GRU bidirectional 64x1x128, hidden 256, linear_before_reset 0",
         recurrent("GRU", 3, {}), x_seq),
        ("DeformConv 1x64x56x56, 3x3, 64 out, mask", deform,
         rng.standard_normal(act).astype(np.float32)),
    ]


if __name__ == "__main__":
    single_op_bench.run(__doc__, "dnnl", cases(), ref_repeat=2, ref_warmup=1)
