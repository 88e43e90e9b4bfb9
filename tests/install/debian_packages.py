"""Debian's package database, as the install audit needs it: who owns a file, and what
scripts/install-deps's list brings in through Depends and Pre-Depends.

Reads dpkg's own files and `dpkg-query`; needs no python-apt.
"""
import os
import re
import subprocess
from dataclasses import dataclass, field

DPKG_INFO = "/var/lib/dpkg/info"
FIELDS = ["binary:Package", "db:Status-Status", "Essential", "Pre-Depends", "Depends",
          "Recommends", "Provides"]


@dataclass
class Package:
    name: str
    installed: bool = True
    essential: bool = False
    # Each dependency is a list of alternatives ("a | b"), each a bare package name.
    depends: list = field(default_factory=list)
    recommends: list = field(default_factory=list)
    provides: list = field(default_factory=list)


def bare_name(text):
    """'libc6:amd64 (>= 2.34) [amd64]' -> 'libc6'."""
    return re.split(r"[\s:(\[]", text.strip(), maxsplit=1)[0]


def parse_relations(text):
    """A Depends-style field -> [[alternative, ...], ...] of bare names."""
    relations = []
    for clause in filter(None, (c.strip() for c in text.split(","))):
        relations.append([bare_name(alt) for alt in clause.split("|") if alt.strip()])
    return relations


def parse_query_line(line):
    name, status, essential, pre_depends, depends, recommends, provides = line.split("\t")
    return Package(name=bare_name(name), installed=status == "installed",
                   essential=essential == "yes",
                   depends=parse_relations(pre_depends) + parse_relations(depends),
                   recommends=parse_relations(recommends),
                   provides=[bare_name(p) for p in provides.split(",") if p.strip()])


def load_packages():
    """Every package dpkg knows, by bare name."""
    out = subprocess.run(["dpkg-query", "-W", "-f=" + "\t".join("${%s}" % f for f in FIELDS) + "\n"],
                         check=True, capture_output=True, text=True).stdout
    packages = {}
    for line in out.splitlines():
        package = parse_query_line(line)
        if package.name not in packages or package.installed:
            packages[package.name] = package
    return packages


def load_owners(info_dir=DPKG_INFO):
    """path -> set of packages whose file lists name it."""
    owners = {}
    for entry in os.listdir(info_dir):
        if not entry.endswith(".list"):
            continue
        package = bare_name(entry[: -len(".list")])
        with open(os.path.join(info_dir, entry), encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                owners.setdefault(line.rstrip("\n"), set()).add(package)
    return owners


def merged_usr_variants(path):
    """The spellings of PATH that dpkg may have registered on a merged-/usr system."""
    variants = [path]
    for short in ("/bin/", "/sbin/", "/lib/", "/lib64/", "/lib32/", "/libx32/"):
        if path.startswith("/usr" + short):
            variants.append(path[len("/usr"):])
        elif path.startswith(short):
            variants.append("/usr" + path)
    return variants


def owners_of(path, owners):
    """The packages that own PATH under any of its merged-/usr spellings."""
    found = set()
    for variant in merged_usr_variants(path):
        found |= owners.get(variant, set())
    return found


class Closure:
    """The packages reached from ROOTS through Depends and Pre-Depends (Recommends do not count),
    plus the Essential ones, which every Debian system has. Of alternatives "a | b" the first is
    followed, or the first installed one when the first is not installed (what apt chooses on a
    machine that has it); a virtual name leads to every installed package providing it."""

    def __init__(self, roots, packages):
        self.packages = packages
        self.providers = {}
        for package in packages.values():
            if package.installed:
                for virtual in package.provides:
                    self.providers.setdefault(virtual, []).append(package.name)
        self.parent = {}  # reached package -> the package that brought it in (None for a root)
        queue = []
        for name in list(roots) + sorted(n for n, p in packages.items() if p.essential and p.installed):
            for real in self.resolve(name):
                if real not in self.parent:
                    self.parent[real] = None
                    queue.append(real)
        while queue:
            name = queue.pop()
            for alternatives in packages[name].depends:
                for real in self.choose(alternatives):
                    if real not in self.parent:
                        self.parent[real] = name
                        queue.append(real)

    def resolve(self, name):
        """An installed real package of that name, or the installed providers of a virtual one."""
        package = self.packages.get(name)
        if package is not None and package.installed:
            return [name]
        return sorted(self.providers.get(name, []))

    def choose(self, alternatives):
        for name in alternatives:
            resolved = self.resolve(name)
            if resolved:
                return resolved
        return []

    def __contains__(self, name):
        return name in self.parent

    def chain(self, name):
        """'root -> ... -> NAME' for a reached package."""
        names = [name]
        while self.parent.get(names[-1]) is not None:
            names.append(self.parent[names[-1]])
        return " -> ".join(reversed(names))

    def recommended_by(self, name):
        """Reached packages that only recommend NAME (or something it provides)."""
        wanted = {name, *self.packages[name].provides} if name in self.packages else {name}
        return sorted(p for p in self.parent
                      if any(wanted & set(alts) for alts in self.packages[p].recommends))
