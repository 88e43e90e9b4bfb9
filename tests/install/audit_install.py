#!/usr/bin/env python3
"""The install audit: fails when the build or the tests read a file that a fresh machine would
not have after `scripts/install-deps`.

    audit_install.py --checkout DIR --build-dir DIR [--traces DIR] [--require-traces]

Every file the build folder records (build_inputs.py) and every file the traced steps of
scripts/test opened or ran (TRACES/*.tsv, from trace_paths.py) must come from
  - a Debian package that scripts/install-deps lists, or that one of them reaches through Depends
    and Pre-Depends (Recommends do not count: install-deps passes --no-install-recommends), or an
    Essential package; or
  - the venvs that install-deps makes (.venv, .venv-serve): a distribution that their
    requirements file (scripts/requirements.txt, scripts/requirements-serve.txt) reaches through
    Requires-Dist, or pip and setuptools, which `python -m venv` puts there;
  - or the checkout itself, temporary files, devices and the machine's own configuration.
Anything else (a package installed by hand, a Recommends, a Python module from another
interpreter, a tool that only happens to be on the image) fails the audit, named with the
package, the file and the program that read it. Runs under the venv's Python.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_inputs  # noqa: E402
import debian_packages  # noqa: E402
import python_packages  # noqa: E402

# Files that belong to no package and are not a dependency: the kernel's, the machine's
# configuration and state (ld.so.cache, alternatives links), scratch space.
SYSTEM_STATE = ("/proc/", "/sys/", "/dev/", "/run/", "/tmp/", "/var/tmp/", "/etc/", "/var/",
                "/.dockerenv", "pipe:", "socket:", "anon_inode:")
# Caches that a package's maintainer scripts generate next to its files.
GENERATED = ("/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache", "/usr/lib/locale/locale-archive")
# Reads that happen because something is installed, not because the build needs it: the program
# looks at whatever is there and does without when it is not. (prefix or suffix, program, why)
PLUGINS = "binutils' ar, nm and ld load every linker plugin installed, and what those need"
INCIDENTAL = [
    ("/usr/lib/bfd-plugins/", None, PLUGINS),
    ("/usr/share/locale/", None, "glibc reads the locale aliases when they are there"),
    ("/etc/locale.alias", None, "glibc reads the locale aliases when they are there"),
    ("/etc/ld.so.conf", None, "linkers and ldconfig read the library paths configured"),
    (".pc", "pkg-config", "pkgconf scans every .pc file for a package it does not find by name"),
    # tests/python install the wheel with pip, whose User-Agent names the distribution (its
    # distro module runs lsb_release when installed) and the rustc on PATH, if any.
    ("/", "lsb_release", "pip's User-Agent runs lsb_release when it is installed"),
    ("/", "rustc", "pip's User-Agent runs `rustc --version` when rustc is on PATH"),
]
# Shared libraries a program probes for by name and does without (file name prefix, why).
PROBED = [
    ("libiomp5.so", "oneTBB (OpenVINO's) dlopens Intel's OpenMP runtime, or LLVM's libomp that "
                    "stands in for it, to share the cores with it when present"),
    ("libomp.so", "oneTBB (OpenVINO's) dlopens Intel's OpenMP runtime, or LLVM's libomp that "
                  "stands in for it, to share the cores with it when present"),
]
# Optional dependencies that are not Debian packages, found at configure time when present; the
# CPU build and its tests need none of them (docs/gpu.md).
# ("/usr/local/cuda" is a link to "/usr/local/cuda-13.0" and the like.)
OPTIONAL = {"/usr/local/cuda": "the CUDA toolkit (optional: COLLAGE_CUDA=AUTO finds it)"}


def optional_reason(path):
    """Why PATH belongs to an optional dependency (OPTIONAL), or None."""
    for prefix, reason in OPTIONAL.items():
        if path and path.startswith((prefix + "/", prefix + "-")):
            return reason
    return None


def launcher_target(path):
    """The program a small launcher script execs ("exec /usr/local/cuda-13.0/bin/nvcc "$@""), or
    None. Some images put such launchers for the CUDA toolkit in /usr/local/bin, so a PATH without
    /usr/local/cuda/bin still finds nvcc; they belong to the toolkit they start."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    match = re.search(rb"^\s*exec\s+(/\S+)", head, re.MULTILINE)
    return os.fsdecode(match.group(1)) if match else None


def incidental(path, reader):
    """Why reading PATH is not a dependency, or None."""
    for pattern, program, why in INCIDENTAL:
        matches = path.endswith(pattern) if pattern.startswith(".") else path.startswith(pattern)
        if matches and (program is None or reader.endswith("/" + program)):
            return why
    for prefix, why in PROBED:
        if os.path.basename(path).startswith(prefix):
            return why
    if elf_class(path) == 1:
        return "a 32-bit ELF file: a linker or ldd probed it and skipped it (this build is 64-bit)"
    return None


def shared_libraries(path):
    """The shared libraries PATH loads (ldd), under their names and their real paths."""
    try:
        out = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    libraries = set()
    for match in re.finditer(r"=> (/\S+)", out):
        libraries.update((os.path.normpath(match.group(1)), os.path.realpath(match.group(1))))
    return libraries


def elf_class(path):
    """1 for a 32-bit ELF file, 2 for 64-bit, None for anything else."""
    try:
        with open(path, "rb") as f:
            head = f.read(5)
    except OSError:
        return None
    return head[4] if len(head) == 5 and head[:4] == b"\x7fELF" else None


def pth_imports(path):
    """The top-level modules a .pth file imports: Python's site module runs every .pth file of a
    site directory at start-up, whoever installed it, so they and their imports are not ours."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return set()
    names = re.findall(r"\bimport\s+([A-Za-z_]\w*)", text)
    names += re.findall(r"__import__\(\s*['\"]([A-Za-z_]\w*)", text)
    return set(names)


# The venvs scripts/install-deps makes, each from its requirements file.
VENVS = {".venv": "scripts/requirements.txt", ".venv-serve": "scripts/requirements-serve.txt"}


class Audit:
    """Classifies the files read. CLOSURE: the Debian packages reached from the list; OWNERS: path
    -> owning packages; PYTHON: {venv folder name (VENVS): its python_packages.Environment, or
    None}; a single Environment stands for .venv's."""

    def __init__(self, checkout, closure, owners, python, scratch=()):
        self.checkout = os.path.realpath(checkout)
        if not isinstance(python, dict):
            python = {".venv": python}
        self.venvs = {os.path.join(self.checkout, name): (name, env) for name, env in python.items()}
        self.scratch = list(scratch)
        self.closure = closure
        self.owners = owners
        self.missing_debian = defaultdict(dict)   # package -> {file: reader}
        self.missing_python = defaultdict(dict)   # (venv name, distribution) -> {file: reader}
        self.unowned = {}                          # file -> reader
        self.optional = defaultdict(set)           # reason -> files
        self.reached_debian = set()
        self.reached_python = set()
        self.pth_modules = set()                   # site-dir/module of modules .pth files import
        self.plugin_needs = {}                     # reader -> libraries its plugins load
        self.files = 0

    @classmethod
    def of_machine(cls, checkout, listed):
        """The audit of this machine's package database and CHECKOUT's .venv."""
        checkout = os.path.realpath(checkout)
        closure = debian_packages.Closure(listed, debian_packages.load_packages())
        python = {}
        for name, requirements in VENVS.items():
            site = glob.glob(os.path.join(checkout, name, "lib", "python3*", "site-packages"))
            python[name] = (python_packages.Environment(site[0], os.path.join(checkout, requirements))
                            if site else None)
        home = os.path.expanduser("~")
        # The model and cost caches, ccache's, pip's (wheels it built and downloads: a fresh
        # machine builds or fetches them again), and ONNX Runtime's telemetry id.
        scratch = [os.path.join(home, ".cache", d)
                   for d in ("collage", "ccache", "pip", "Microsoft")]
        # ccache's own configuration: a developer's setting (e.g. base_dir, to share the cache
        # between worktrees); a fresh machine builds without it.
        scratch.append(os.path.join(home, ".config", "ccache"))
        if os.environ.get("COLLAGE_MODEL_CACHE"):
            scratch.append(os.path.realpath(os.environ["COLLAGE_MODEL_CACHE"]))
        return cls(checkout, closure, debian_packages.load_owners(), python, scratch)

    def check(self, requested, opened, reader):
        """Classifies one file read; records what a fresh machine would lack."""
        requested, opened = os.path.normpath(requested), os.path.normpath(opened)
        if os.path.isdir(opened):
            return  # a directory listed or searched: its files are what counts
        self.files += 1
        if (requested in self.plugin_needs.get(reader, ()) or
                opened in self.plugin_needs.get(reader, ())):
            return
        why = incidental(requested, reader) or incidental(opened, reader)
        if why:
            if why == PLUGINS:
                self.plugin_needs.setdefault(reader, set()).update(shared_libraries(opened))
            return
        if opened.endswith(".pth"):
            site = os.path.dirname(opened)
            self.pth_modules.update(os.path.join(site, m) for m in pth_imports(opened))
            return
        if any(opened.startswith((m + "/", m + ".")) for m in self.pth_modules):
            return
        for path in dict.fromkeys((requested, opened)):
            self.check_path(path, reader, is_target=path == opened)

    def check_path(self, path, reader, is_target):
        path = os.path.normpath(path)
        for venv, (name, python) in self.venvs.items():
            if path.startswith(venv + "/"):
                return self.check_venv(path, reader, name, python)
        if path == self.checkout or path.startswith(self.checkout + "/"):
            return
        if any(path == s or path.startswith(s + "/") for s in self.scratch):
            return
        owners = debian_packages.owners_of(path, self.owners)
        if not owners and "/__pycache__/" in path and path.endswith(".pyc"):
            folder, base = os.path.split(path)
            source = os.path.join(os.path.dirname(folder), base.split(".", 1)[0] + ".py")
            owners = debian_packages.owners_of(source, self.owners)
        if owners:
            for package in owners:
                if package in self.closure:
                    self.reached_debian.add(package)
            if not any(p in self.closure for p in owners):
                for package in owners:
                    self.missing_debian[package].setdefault(path, reader)
            return
        if path.startswith(SYSTEM_STATE) or path in GENERATED:
            return
        for candidate in (path, launcher_target(path)):
            reason = optional_reason(candidate)
            if reason:
                self.optional[reason].add(path)
                return
        # An alternatives link or another unowned symlink: its target is checked on its own.
        if not is_target and os.path.islink(path):
            return
        self.unowned.setdefault(path, reader)

    def check_venv(self, path, reader, name, python):
        if python is None or not path.startswith(python.site_packages + "/"):
            return  # the venv's interpreter link and pyvenv.cfg
        owner = python.owner_of(path)
        if owner in python.reached:
            self.reached_python.add((name, owner))
        elif owner is not None:
            self.missing_python[(name, owner)].setdefault(path, reader)
        else:
            self.unowned.setdefault(path, reader)

    def failed(self):
        return bool(self.missing_debian or self.missing_python or self.unowned)

    def report(self, out):
        def examples(files):
            shown = sorted(files.items())[:3]
            more = f" (and {len(files) - 3} more)" if len(files) > 3 else ""
            return "; ".join(f"{path} ({reader})" for path, reader in shown) + more

        for package in sorted(self.missing_debian):
            why = ""
            recommenders = self.closure.recommended_by(package)
            if recommenders:
                why = (f"\n      only Recommended by {', '.join(recommenders[:3])}: Recommends are "
                       "not installed (--no-install-recommends)")
            print(f"  Debian package {package} is not in scripts/install-deps and no listed package "
                  f"Depends on it:\n      {examples(self.missing_debian[package])}{why}", file=out)
        for venv, dist in sorted(self.missing_python):
            print(f"  Python distribution {dist} in {venv} is not reached from {VENVS[venv]}:\n"
                  f"      {examples(self.missing_python[(venv, dist)])}", file=out)
        if self.unowned:
            print(f"  files that neither a Debian package nor .venv installed "
                  f"(something installed by hand, or another interpreter):\n      "
                  f"{examples(self.unowned)}", file=out)


def listed_packages(checkout):
    out = subprocess.run([os.path.join(checkout, "scripts", "install-deps"), "--list"], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def read_traces(folder):
    for tsv in sorted(glob.glob(os.path.join(folder, "*.tsv"))):
        step = os.path.splitext(os.path.basename(tsv))[0]
        with open(tsv, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                requested, opened, program = line.rstrip("\n").split("\t")
                yield requested, opened, f"{step}: {program}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", required=True)
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--traces", help="folder of trace_paths.py outputs, one per traced step")
    parser.add_argument("--require-traces", action="store_true",
                        help="fail when TRACES holds no trace (scripts/test traced nothing)")
    args = parser.parse_args()

    listed = listed_packages(args.checkout)
    audit = Audit.of_machine(args.checkout, listed)
    for path, how in build_inputs.recorded_inputs(os.path.abspath(args.build_dir)):
        audit.check(path, os.path.realpath(path), how)
    recorded = audit.files
    traced = 0
    if args.traces and os.path.isdir(args.traces):
        for requested, opened, reader in read_traces(args.traces):
            audit.check(requested, opened, reader)
            traced += 1
    if args.require_traces and traced == 0:
        print(f"install audit: no traces in {args.traces}: run it through scripts/test", file=sys.stderr)
        return 1
    print(f"install audit: {recorded} files recorded by the build folder, {traced} opened by traced "
          f"steps; {len(listed)} Debian packages listed, {len(audit.closure.parent)} reached "
          f"(Depends, Pre-Depends, Essential), {len(audit.reached_debian)} of them read; "
          f"{len(audit.reached_python)} Python distributions of {' and '.join(VENVS)} read")
    for reason, files in sorted(audit.optional.items()):
        print(f"install audit: {len(files)} files of {reason} read")
    if audit.failed():
        print("install audit: FAILED: a fresh machine after scripts/install-deps would lack:", file=sys.stderr)
        audit.report(sys.stderr)
        return 1
    print("install audit: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
