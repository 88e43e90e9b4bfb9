"""collage artifacts served by Triton Inference Server (the nvidia-pytriton wheel's tritonserver,
its Python backend), end to end: a repository built by `python -m collage.triton build-repo`
from ONNX models, the server started on 127.0.0.1 on free ports, requests over HTTP and gRPC
checked against ONNX Runtime, a damaged and a missing artifact reported to the client (their
models UNAVAILABLE, collage's message as the reason in the repository index, requests refused)
while the other models serve on, the server stopped.

    test_triton.py BUILD_DIR CAPI_DATA_DIR     (in .venv-serve; models: $COLLAGE_MODEL_CACHE)

The wheel (BUILD_DIR/wheel, scripts/build-wheel) is installed into a venv of the build that sees
.venv-serve's packages through a .pth file, so that .venv-serve stays as scripts/install-deps
made it; the server's models run in that venv's Python (the first python3 on PATH).
"""
import functools
import json
import os
import shutil
import sys
import threading
import time

import numpy as np
import onnxruntime as ort
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException, np_to_triton_dtype

from triton_server import Server, clean_env, run, serve_venv, the_wheel


def scaled_error(actual, expected):
    scale = float(np.max(np.abs(expected))) or 1.0
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


def ort_outputs(onnx_path, feeds):
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def request(module, feeds, outputs):
    """The inputs and requested outputs of a request with tritonclient's MODULE (http, grpc)."""
    inputs = []
    for name, array in feeds.items():
        i = module.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
        i.set_data_from_numpy(array)
        inputs.append(i)
    return {"inputs": inputs, "outputs": [module.InferRequestedOutput(n) for n in outputs]}


def infer(client, module, model, feeds, outputs):
    result = client.infer(model, **request(module, feeds, outputs))
    return {name: result.as_numpy(name) for name in outputs}


def check(label, got, expected, rtol):
    for name, reference in expected.items():
        error = scaled_error(got[name], reference)
        print(f"  {label} {name}: error {error:.2e} against ONNX Runtime")
        assert error <= rtol, f"{label} {name}: error {error} > {rtol}"


MAX_BATCH = 4


def check_dynamic_batching(http, grpc, onnx_path, rows, rtol):
    """gpt2 (batches 1..MAX_BATCH): requests of batch 1, 3 and MAX_BATCH one at a time over both
    protocols, then 24 at once (HTTP and gRPC together), each against ONNX Runtime at its
    batch; the server's statistics must show the concurrent requests gathered into fewer
    executions than requests, and every row counted once."""
    def feeds(batch, shift=0):
        return {"input_ids": np.ascontiguousarray(rows[(np.arange(batch) + shift) % len(rows)])}

    config = http.get_model_config("gpt2")
    assert config["max_batch_size"] == MAX_BATCH and "dynamic_batching" in config, config
    expected = {}
    for batch in (1, 3, MAX_BATCH):
        for shift in (0, 1):
            expected[batch, shift] = ort_outputs(onnx_path, feeds(batch, shift))
    before = http.get_inference_statistics("gpt2")["model_stats"][0]  # no request yet
    for label, client, module in (("http", http, httpclient), ("grpc", grpc, grpcclient)):
        for batch in (1, 3, MAX_BATCH):
            check(f"gpt2 {label} batch {batch}",
                  infer(client, module, "gpt2", feeds(batch), ["logits"]), expected[batch, 0],
                  rtol)
    sizes = [(1, 3, MAX_BATCH)[i % 3] for i in range(24)]
    done, results = threading.Event(), {}

    def finished(i, result, error):
        results[i] = (result, error)
        if len(results) == len(sizes) // 2:
            done.set()

    pending = {}
    for i, batch in enumerate(sizes):
        if i % 2:
            grpc.async_infer("gpt2", callback=functools.partial(finished, i),
                             **request(grpcclient, feeds(batch, i % 2), ["logits"]))
        else:
            pending[i] = http.async_infer("gpt2",
                                          **request(httpclient, feeds(batch, i % 2), ["logits"]))
    for i, p in pending.items():
        result = p.get_result()
        check(f"gpt2 concurrent http {i} (batch {sizes[i]})",
              {"logits": result.as_numpy("logits")}, expected[sizes[i], 0], rtol)
    assert done.wait(300), f"gRPC answered {len(results)} of {len(sizes) // 2} requests"
    for i, (result, error) in sorted(results.items()):
        assert error is None, f"gpt2 concurrent grpc {i}: {error}"
        check(f"gpt2 concurrent grpc {i} (batch {sizes[i]})",
              {"logits": result.as_numpy("logits")}, expected[sizes[i], 1], rtol)
    # The server records a request's statistics after its response is sent: wait for all of
    # them (6 one at a time, 2 * (1 + 3 + MAX_BATCH) rows, then the concurrent ones).
    sent, rows_sent = 6 + len(sizes), 2 * (4 + MAX_BATCH) + sum(sizes)
    deadline = time.monotonic() + 30
    while True:
        after = http.get_inference_statistics("gpt2")["model_stats"][0]
        requests = (int(after["inference_stats"]["success"]["count"]) -
                    int(before["inference_stats"]["success"]["count"]))
        if requests >= sent or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    executions = int(after["execution_count"]) - int(before["execution_count"])
    rows_run = int(after["inference_count"]) - int(before["inference_count"])
    batches = {int(b["batch_size"]): int(b["compute_infer"]["count"])
               for b in after.get("batch_stats", [])}
    print(f"  gpt2 statistics: {requests} requests, {rows_run} rows, {executions} executions; "
          f"executions by batch: {batches}")
    assert requests == sent and rows_run == rows_sent, (requests, rows_run, sent, rows_sent)
    # The 6 requests sent one at a time ran alone: the concurrent ones must have shared.
    assert executions < requests, \
        f"{requests} requests ran in {executions} executions: none were batched"


def main():
    build, capi = (os.path.abspath(a) for a in sys.argv[1:3])
    cache = os.environ.get("COLLAGE_MODEL_CACHE", os.path.expanduser("~/.cache/collage/models"))
    work = os.path.join(build, "python-test", "triton")
    shutil.rmtree(work, ignore_errors=True)
    repo = os.path.join(work, "repo")
    python = serve_venv(os.path.join(work, "venv"), the_wheel(build))
    env = clean_env()

    # The repository: a transformer encoder at its batch (2), a transformer decoder compiled for
    # the batches 1..4 (dynamic batching up to 4, a batch waiting up to 50 ms to fill, so that
    # concurrent requests meet), a small MLP, a damaged artifact and a missing one.
    manifest = {m["name"]: m for m in json.load(open(os.path.join(cache, "models.json")))["models"]}
    bert, gpt2 = manifest["bert_small"], manifest["gpt2_small"]
    bert_onnx, gpt2_onnx = (os.path.join(cache, m["onnx"]) for m in (bert, gpt2))
    mlp_onnx = os.path.join(capi, "mlp.onnx")
    build_repo = [python, "-m", "collage.triton", "build-repo"]
    run(build_repo + [bert_onnx, repo, "--name", "bert", "--placement", "greedy",
                      "--threads", "1"], env=env)
    gpt2_input = dict(np.load(os.path.join(cache, gpt2["inputs_npz"])))["input_ids"]
    run(build_repo + [gpt2_onnx, repo, "--name", "gpt2", "--placement", "greedy",
                      "--max-batch", str(MAX_BATCH), "--queue-delay-us", "50000",
                      "--input-shape", f"input_ids=1x{gpt2_input.shape[1]}"], env=env)
    run(build_repo + [mlp_onnx, repo, "--name", "mlp", "--placement", "single:eigen"], env=env)
    for broken in ("damaged", "missing"):
        shutil.copytree(os.path.join(repo, "mlp"), os.path.join(repo, broken))
        config = os.path.join(repo, broken, "config.pbtxt")
        text = open(config).read().replace('name: "mlp"', f'name: "{broken}"')
        open(config, "w").write(text)
    artifact = os.path.join(repo, "damaged", "1", "model.collage")
    data = bytearray(open(artifact, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(artifact, "wb").write(data)
    os.unlink(os.path.join(repo, "missing", "1", "model.collage"))

    server = Server(python, repo, os.path.join(work, "tritonserver.log"))
    http = grpc = None
    try:
        server.wait_ready(["bert", "gpt2", "mlp"])
        http = httpclient.InferenceServerClient(f"127.0.0.1:{server.http_port}", concurrency=8)
        grpc = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
        print(f"tritonserver ready on 127.0.0.1:{server.http_port} (HTTP), {server.grpc_port} "
              f"(gRPC)")

        # bert (no batch range: max_batch_size 0): its batch, over both protocols and 16 at once.
        feeds = {k: v for k, v in np.load(os.path.join(cache, bert["inputs_npz"])).items()}
        outputs = [o["name"] for o in bert["outputs"]]
        expected = ort_outputs(bert_onnx, feeds)
        for label, client, module in (("http", http, httpclient), ("grpc", grpc, grpcclient)):
            check(f"bert {label} batch 2", infer(client, module, "bert", feeds, outputs),
                  expected, bert["rtol"])
        pending = [http.async_infer("bert", **request(httpclient, feeds, outputs))
                   for _ in range(16)]
        for i, p in enumerate(pending):
            result = p.get_result()
            check(f"bert concurrent {i}", {n: result.as_numpy(n) for n in outputs}, expected,
                  bert["rtol"])

        check_dynamic_batching(http, grpc, gpt2_onnx, gpt2_input, gpt2["rtol"])

        x = np.load(os.path.join(capi, "input.npy"))
        mlp_expected = ort_outputs(mlp_onnx, {"x": x})
        for label, client, module in (("http", http, httpclient), ("grpc", grpc, grpcclient)):
            check(f"mlp {label}", infer(client, module, "mlp", {"x": x}, ["logits"]),
                  mlp_expected, 1e-5)

        # The broken models: the client is told why (HTTP and gRPC), the others serve on.
        index = {m["name"]: m for m in http.get_model_repository_index()}
        grpc_index = {m.name: m for m in grpc.get_model_repository_index().models}
        for broken, why in (("damaged", "CORRUPT"), ("missing", "NOT_FOUND")):
            entry = index[broken]
            print(f"  {broken}: {entry.get('state')}: {entry.get('reason')}")
            for state, reason in ((entry.get("state"), entry.get("reason", "")),
                                  (grpc_index[broken].state, grpc_index[broken].reason)):
                assert state == "UNAVAILABLE", (broken, state)
                assert why in reason and f"{broken}/1/model.collage" in reason, (broken, reason)
            assert not http.is_model_ready(broken) and not grpc.is_model_ready(broken)
            for client, module in ((http, httpclient), (grpc, grpcclient)):
                try:
                    infer(client, module, broken, {"x": x}, ["logits"])
                    raise AssertionError(f"{broken}: a request succeeded")
                except InferenceServerException as e:
                    print(f"  {broken} request: {e.message()}")
                    assert broken in e.message(), e.message()
        check("mlp after", infer(grpc, grpcclient, "mlp", {"x": x}, ["logits"]), mlp_expected,
              1e-5)
        check("bert after", infer(http, httpclient, "bert", feeds, outputs), expected,
              bert["rtol"])
    finally:
        for client in (http, grpc):
            if client is not None:
                client.close()
        code = server.stop()
    assert code == 0, f"tritonserver exited with {code}, see {server.log_path}"
    print("triton checks passed")


if __name__ == "__main__":
    main()
