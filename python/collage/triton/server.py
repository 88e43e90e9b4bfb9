"""Running Triton Inference Server from the nvidia-pytriton wheel on a model repository.

The wheel ships `tritonserver`, its Python backend and a backend stub per Python version, with
the libraries they need beside them; the server finds the stub in its backend directory, and the
stub's embedded Python finds this environment's packages (collage among them) through the first
`python3` on PATH. tritonserver_command() puts that together: a backend directory with the stub
of the running Python, the library path, PATH.
"""
import os
import shutil
import sys
import tempfile


class TritonNotFound(RuntimeError):
    """nvidia-pytriton is not installed in this Python environment."""


def _pytriton_dirs():
    try:
        import pytriton
    except ImportError as e:
        raise TritonNotFound(
            "Triton Inference Server comes with the nvidia-pytriton wheel: pip install "
            "nvidia-pytriton (in the environment that serves, beside collage)") from e
    package = os.path.dirname(os.path.abspath(pytriton.__file__))
    server = os.path.join(package, "tritonserver")
    libs = os.path.join(os.path.dirname(package), "nvidia_pytriton.libs")
    return server, libs


def backend_directory(folder):
    """Makes FOLDER/python, Triton's Python backend with the stub of this interpreter's version
    (links into the pytriton wheel), and returns FOLDER."""
    server, _ = _pytriton_dirs()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stub = os.path.join(server, "python_backend_stubs", version, "triton_python_backend_stub")
    if not os.path.exists(stub):
        raise TritonNotFound(f"nvidia-pytriton has no Python backend stub for Python {version}")
    python = os.path.join(folder, "python")
    os.makedirs(python, exist_ok=True)
    backend = os.path.join(server, "backends", "python")
    for name in os.listdir(backend):
        if name != "__pycache__":
            _link(os.path.join(backend, name), os.path.join(python, name))
    _link(stub, os.path.join(python, "triton_python_backend_stub"))
    return folder


def _link(target, name):
    if os.path.lexists(name):
        os.unlink(name)
    os.symlink(target, name)


def tritonserver_command(repository, backends, http_port, grpc_port, metrics_port,
                         address="127.0.0.1", extra=()):
    """(argv, env) that serve REPOSITORY on ADDRESS with the backends of backend_directory().
    A model that fails to load does not stop the server (--exit-on-error=false): it is reported
    UNAVAILABLE, with the reason, in the repository index, and the other models serve."""
    server, libs = _pytriton_dirs()
    argv = [os.path.join(server, "bin", "tritonserver"),
            f"--model-repository={os.path.abspath(repository)}",
            f"--backend-directory={os.path.abspath(backends)}",
            f"--http-address={address}", f"--http-port={http_port}",
            f"--grpc-address={address}", f"--grpc-port={grpc_port}",
            f"--metrics-address={address}", f"--metrics-port={metrics_port}",
            "--exit-on-error=false", "--strict-readiness=false", "--exit-timeout-secs=5", *extra]
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (libs, env.get("LD_LIBRARY_PATH")) if p)
    # The stub's Python is the first python3 on PATH: this one, with this environment's packages.
    env["PATH"] = os.pathsep.join((os.path.dirname(sys.executable), env.get("PATH", "")))
    return argv, env


def serve(repository, http_port=8000, grpc_port=8001, metrics_port=8002, address="127.0.0.1",
          extra=()):
    """Runs tritonserver in the foreground on REPOSITORY (replaces this process)."""
    backends = backend_directory(tempfile.mkdtemp(prefix="collage-triton-backends-"))
    argv, env = tritonserver_command(repository, backends, http_port, grpc_port, metrics_port,
                                     address, extra)
    if shutil.which(argv[0]) is None:
        raise TritonNotFound(f"{argv[0]} is not an executable")
    os.execve(argv[0], argv, env)
