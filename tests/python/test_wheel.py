"""The collage wheel as a user installs it: into a fresh venv (numpy, its one dependency, from
.venv/wheelhouse, no network), then check_package.py, check_batch_range.py (an artifact
compiled for a batch range) check_strings.py (string inputs and outputs), check_ml.py (ai.onnx.ml models, Cast
with strings) and check_batch_dyn.py (batch ranges with data-dependent shapes and strings) run
there, outside the checkout, without any environment variable;
then the DLPack exchange with PyTorch in Debian's Python (torch and numpy 1), the wheel
installed alone into a folder on its path.

    test_wheel.py BUILD_DIR        (the wheel: BUILD_DIR/wheel/collage-*.whl, scripts/build-wheel)
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, **kw):
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def clean_env():
    """This environment without what could make the package work by accident."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "COLLAGE_LIB_DIR", "LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    return env


def main():
    build = os.path.abspath(sys.argv[1])
    wheels = glob.glob(os.path.join(build, "wheel", "collage-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {build}/wheel, found {wheels}: run scripts/build-wheel")
    wheel = wheels[0]
    print(f"wheel {os.path.basename(wheel)}: {os.path.getsize(wheel) / 2**20:.1f} MiB")
    work = os.path.join(build, "python-test", "wheel")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    venv = os.path.join(work, "venv")
    env = clean_env()
    run(["/usr/bin/python3", "-m", "venv", venv], env=env)
    run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
         "--disable-pip-version-check", "--no-index", "--find-links",
         os.path.join(ROOT, ".venv", "wheelhouse"), wheel], env=env)
    cache = os.environ.get("COLLAGE_MODEL_CACHE", os.path.expanduser("~/.cache/collage/models"))
    data = os.path.join(build, "test-data", "capi")
    with tempfile.TemporaryDirectory(dir=work) as cwd:  # not the checkout: no python/ to import
        run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "check_package.py"),
             cache, data], env=env, cwd=cwd)
        run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "check_batch_range.py"),
             cache], env=env, cwd=cwd)
        run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "check_strings.py"),
             os.path.join(build, "test-data", "strings")], env=env, cwd=cwd)
        run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "check_ml.py"),
             os.path.join(build, "test-data", "ml")], env=env, cwd=cwd)
        run([os.path.join(venv, "bin", "python"), os.path.join(HERE, "check_batch_dyn.py"),
             os.path.join(build, "test-data", "batch")], env=env, cwd=cwd)
        # The collage command the wheel installs.
        run([os.path.join(venv, "bin", "collage"), "run", os.path.join(data, "mlp.collage"),
             "--repeat", "2"], env=env, cwd=cwd)

    # PyTorch tensors in, torch.from_dlpack on the outputs: Debian's torch, numpy 1.
    site = os.path.join(work, "torch-site")
    run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
         "--disable-pip-version-check", "--no-index", "--no-deps", "--target", site, wheel],
        env=env)
    torch_env = dict(env, PYTHONPATH=site,
                     LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu/openblas-openmp")
    run(["/usr/bin/python3", os.path.join(HERE, "check_torch.py"), data], env=torch_env, cwd=work)
    print("wheel checks passed")


if __name__ == "__main__":
    main()
