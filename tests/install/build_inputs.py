"""What a CMake + Ninja build folder records about the files its build read: the CMake files its
configure step loaded (config packages, Find modules), the headers in the compilers' dependency
files, the libraries its link lines name, and every other absolute file its commands name
(compilers, code generators such as protoc) and its tests run.

This is read from the build folder, so it covers the whole build even when the last `ninja` had
nothing to do; a traced cold build (tests/install/trace_paths.py) sees the same and more.
"""
import json
import os
import shlex
import subprocess

STANDARD_LIBRARY_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/lib"]


def ninja(build_dir, *args):
    return subprocess.run(["ninja", "-C", build_dir, *args], check=True, capture_output=True,
                          text=True).stdout


def configure_inputs(build_dir):
    """The files CMake read while configuring: the inputs of the rule that re-runs it."""
    lines = ninja(build_dir, "-t", "query", "build.ninja").splitlines()
    inputs, in_inputs = [], False
    for line in lines:
        stripped = line.strip()
        if stripped == "input: RERUN_CMAKE":
            in_inputs = True
        elif stripped == "outputs:":
            in_inputs = False
        elif in_inputs and stripped:
            inputs.append(stripped.removeprefix("| ").removeprefix("|| "))
    return [os.path.join(build_dir, p) if not p.startswith("/") else p for p in inputs]


def dependency_headers(build_dir):
    """Every header in the compilers' dependency files (Ninja's deps log)."""
    headers = set()
    for line in ninja(build_dir, "-t", "deps").splitlines():
        if line.startswith("    "):
            path = line.strip()
            if path.startswith("/"):
                headers.add(path)
    return sorted(headers)


def library_search_dirs():
    """The directories the linker searches for -lNAME after those given with -L."""
    out = subprocess.run(["gcc", "-print-search-dirs"], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if line.startswith("libraries: ="):
            return [os.path.normpath(d) for d in line.split("=", 1)[1].split(":") if d]
    return STANDARD_LIBRARY_DIRS


def resolve_library(name, search_dirs):
    """-lNAME -> the file the linker takes: the shared library first, as ld does."""
    for folder in search_dirs:
        for candidate in (f"lib{name}.so", f"lib{name}.a"):
            path = os.path.join(folder, candidate)
            if os.path.exists(path):
                return path
    return None


def command_files(command, search_dirs):
    """The absolute files one command line names, and the libraries its -l flags resolve to."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    files, local_dirs = [], []
    for token in tokens:
        for piece in token.split(",") if token.startswith("-Wl,") else [token]:
            if piece.startswith("-L") and len(piece) > 2:
                local_dirs.append(piece[2:])
            elif piece.startswith("-l") and len(piece) > 2 and piece[2:].replace("_", "").replace("+", "").isalnum():
                found = resolve_library(piece[2:], local_dirs + search_dirs)
                if found:
                    files.append(found)
            else:
                path = piece.split("=", 1)[1] if piece.startswith("-D") and "=" in piece else piece
                if path.startswith("/") and os.path.isfile(path):
                    files.append(path)
    return files


def build_command_files(build_dir):
    """Programs, libraries and other absolute files named by the build's commands."""
    search_dirs = library_search_dirs()
    files = set()
    for command in ninja(build_dir, "-t", "commands").splitlines():
        files.update(command_files(command, search_dirs))
    return sorted(files)


def test_command_files(build_dir):
    """Absolute files named by the commands of the build's ctest tests (a program, a script's
    interpreter, a tool passed as an argument)."""
    out = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    search_dirs = library_search_dirs()
    files = set()
    for test in json.loads(out).get("tests", []):
        for argument in test.get("command", []):
            for piece in argument.split("|"):
                files.update(command_files(shlex.quote(piece), search_dirs))
    return sorted(files)


def recorded_inputs(build_dir):
    """(file, how the build used it) for everything above."""
    records = []
    for path in configure_inputs(build_dir):
        records.append((path, "read by CMake at configure time"))
    for path in dependency_headers(build_dir):
        records.append((path, "included by a compiled source (Ninja deps log)"))
    for path in build_command_files(build_dir):
        records.append((path, "named by a build command"))
    for path in test_command_files(build_dir):
        records.append((path, "named by a ctest command"))
    return records
