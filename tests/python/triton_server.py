"""Triton Inference Server for the serving test and bench: a venv with the collage wheel that
sees .venv-serve's packages, and tritonserver started on free ports of 127.0.0.1 through
`python -m collage.triton serve`, waited for, and stopped. Runs in .venv-serve."""
import glob
import os
import socket
import subprocess
import sys
import sysconfig
import time

import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def the_wheel(build):
    wheels = glob.glob(os.path.join(build, "wheel", "collage-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {build}/wheel, found {wheels}: run scripts/build-wheel")
    return wheels[0]


def serve_venv(folder, wheel):
    """A venv in FOLDER with WHEEL installed, seeing this (.venv-serve's) packages through a .pth
    file, so that .venv-serve stays as scripts/install-deps made it. Returns its python."""
    run(["/usr/bin/python3", "-m", "venv", "--without-pip", folder])
    python = os.path.join(folder, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site, "serve-venv.pth"), "w") as f:
        f.write(sysconfig.get_path("purelib") + "\n")
    run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--no-index", "--no-deps", "--target", site, wheel])
    return python


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLLAGE_LIB_DIR")}


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


class Server:
    """tritonserver on REPO, run by PYTHON (serve_venv's): .http_port, .grpc_port, .log_path."""

    def __init__(self, python, repo, log_path, extra=()):
        self.http_port, self.grpc_port, metrics_port = free_ports(3)
        self.log_path = log_path
        command = [python, "-m", "collage.triton", "serve", repo,
                   "--http-port", str(self.http_port), "--grpc-port", str(self.grpc_port),
                   "--metrics-port", str(metrics_port), *extra]
        print("$", " ".join(command), ">", log_path, flush=True)
        with open(log_path, "w") as log:
            self.process = subprocess.Popen(command, env=clean_env(), stdout=log,
                                            stderr=subprocess.STDOUT)

    def wait_ready(self, models, seconds=180):
        """Waits until MODELS are READY; fails at once when one is UNAVAILABLE."""
        client = httpclient.InferenceServerClient(f"127.0.0.1:{self.http_port}")
        deadline = time.monotonic() + seconds
        try:
            while True:
                assert self.process.poll() is None, \
                    f"tritonserver exited ({self.process.returncode}), see {self.log_path}"
                try:
                    index = {m["name"]: m for m in client.get_model_repository_index()}
                except (InferenceServerException, OSError):  # not listening yet
                    index = {}
                states = {name: index.get(name, {}).get("state") for name in models}
                if all(state == "READY" for state in states.values()):
                    return
                for name, state in states.items():
                    assert state != "UNAVAILABLE", \
                        f"{name} failed to load: {index[name].get('reason')}"
                assert time.monotonic() < deadline, \
                    f"models not ready in {seconds} s, see {self.log_path}"
                time.sleep(0.5)
        finally:
            client.close()

    def stop(self):
        """Stops the server; returns its exit code."""
        self.process.terminate()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return self.process.returncode
