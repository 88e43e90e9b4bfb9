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
import json
import os
import shutil
import sys

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


def main():
    build, capi = (os.path.abspath(a) for a in sys.argv[1:3])
    cache = os.environ.get("COLLAGE_MODEL_CACHE", os.path.expanduser("~/.cache/collage/models"))
    work = os.path.join(build, "python-test", "triton")
    shutil.rmtree(work, ignore_errors=True)
    repo = os.path.join(work, "repo")
    python = serve_venv(os.path.join(work, "venv"), the_wheel(build))
    env = clean_env()

    # The repository: a transformer encoder with dynamic batching (its artifact's batch, 2), a
    # small MLP without, a damaged artifact and a missing one.
    manifest = {m["name"]: m for m in json.load(open(os.path.join(cache, "models.json")))["models"]}
    bert = manifest["bert_small"]
    bert_onnx = os.path.join(cache, bert["onnx"])
    mlp_onnx = os.path.join(capi, "mlp.onnx")
    build_repo = [python, "-m", "collage.triton", "build-repo"]
    run(build_repo + [bert_onnx, repo, "--name", "bert", "--placement", "greedy",
                      "--max-batch", "auto", "--threads", "1"], env=env)
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
        server.wait_ready(["bert", "mlp"])
        http = httpclient.InferenceServerClient(f"127.0.0.1:{server.http_port}", concurrency=8)
        grpc = grpcclient.InferenceServerClient(f"127.0.0.1:{server.grpc_port}")
        print(f"tritonserver ready on 127.0.0.1:{server.http_port} (HTTP), {server.grpc_port} "
              f"(gRPC)")

        # bert: the batch the artifact was compiled for, one row (padded), and concurrent rows
        # that the dynamic batcher may gather.
        feeds = {k: v for k, v in np.load(os.path.join(cache, bert["inputs_npz"])).items()}
        outputs = [o["name"] for o in bert["outputs"]]
        expected = ort_outputs(bert_onnx, feeds)
        for label, client, module in (("http", http, httpclient), ("grpc", grpc, grpcclient)):
            check(f"bert {label} batch 2", infer(client, module, "bert", feeds, outputs),
                  expected, bert["rtol"])
            row = {k: v[1:2] for k, v in feeds.items()}
            check(f"bert {label} batch 1", infer(client, module, "bert", row, outputs),
                  {k: v[1:2] for k, v in expected.items()}, bert["rtol"])
        rows = [{k: v[i % 2:i % 2 + 1] for k, v in feeds.items()} for i in range(16)]
        pending = [http.async_infer("bert", **request(httpclient, r, outputs)) for r in rows]
        for i, p in enumerate(pending):
            result = p.get_result()
            check(f"bert concurrent {i}", {n: result.as_numpy(n) for n in outputs},
                  {k: v[i % 2:i % 2 + 1] for k, v in expected.items()}, bert["rtol"])

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
