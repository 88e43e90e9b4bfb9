#!/usr/bin/env python3
"""Reduces an strace log, read from stdin, to the files that traced programs opened or executed.

    strace -f -qq -z --seccomp-bpf -y -e trace=execve,execveat,open,openat,openat2 \
        -e signal=none -o '|python3 tests/install/trace_paths.py OUT.tsv' COMMAND...

Writes OUT.tsv once its input ends: one line per distinct (requested path, opened path, program),
tab-separated. The requested path is the string the program passed (it may be a symlink such as
libdnnl.so); the opened path is what the kernel resolved it to (strace's -y); the program is the
last executable the process ran, or "?" for a forked child that ran none. Only absolute paths are
kept: what a program opens relative to its working directory belongs to the checkout.
"""
import os
import re
import sys

# PID  syscall(ARGS) = RESULT   (the ARGS of an interrupted call end in "<unfinished ...>", and
# its result arrives later on a "<... syscall resumed>" line of the same PID).
LINE = re.compile(r'^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*)$')
FIRST_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
RESULT = re.compile(r'\)\s+=\s+(\d+)(?:<(.*)>)?\s*$')
OPENS = {"open", "openat", "openat2"}
EXECS = {"execve", "execveat"}


def unescape(text):
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def first_path(args):
    """The path argument of an open or exec call: its first string literal."""
    match = FIRST_STRING.search(args)
    return unescape(match.group(1)) if match else None


def reduce_log(lines):
    """Yields (requested, opened, program) for each successful open or exec, unique, in order."""
    program = {}   # pid -> executable it runs
    pending = {}   # pid -> (syscall, requested path) of an unfinished call
    seen = set()
    for line in lines:
        match = LINE.match(line)
        if not match:
            continue
        pid, resumed, called, rest = match.groups()
        syscall = resumed or called
        if syscall not in OPENS and syscall not in EXECS:
            continue
        if resumed:
            if pid not in pending:
                continue
            syscall, requested = pending.pop(pid)
        else:
            requested = first_path(rest)
            if rest.rstrip().endswith("<unfinished ...>"):
                pending[pid] = (syscall, requested)
                continue
        result = RESULT.search(rest)
        if requested is None or result is None:
            continue
        opened = unescape(result.group(2)) if result.group(2) else requested
        if syscall in EXECS:
            program[pid] = requested
            opened = os.path.realpath(requested)  # strace names the link (/usr/bin/cc), not the file
        if not requested.startswith("/"):
            if not opened.startswith("/"):
                continue
            requested = opened
        record = (requested, opened, program.get(pid, "?"))
        if record not in seen:
            seen.add(record)
            yield record


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: trace_paths.py OUT.tsv  (strace log on stdin)")
    records = list(reduce_log(sys.stdin))
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for record in records:
            out.write("\t".join(record) + "\n")


if __name__ == "__main__":
    main()
