"""The project's Python environment (.venv), as the install audit needs it: which distribution
installed a file, and which distributions scripts/requirements.txt brings in.

Runs under the venv's own interpreter: requirement markers are evaluated for it, with the
`packaging` that pip carries (pip is in every venv that `python -m venv` makes).
"""
import os
import re
from dataclasses import dataclass, field

from pip._vendor.packaging.requirements import InvalidRequirement, Requirement

# `python -m venv` installs these itself: they are part of the environment it makes.
VENV_BUILTINS = ("pip", "setuptools")


def normalize(name):
    """PEP 503: 'Scikit_Learn' -> 'scikit-learn'."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Distribution:
    name: str
    files: list = field(default_factory=list)     # absolute paths from RECORD
    requires: list = field(default_factory=list)  # Requirement objects from METADATA


def read_metadata_requires(path):
    requires = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line in ("\n", "\r\n"):
                break  # the body (the long description) follows the headers
            if line.startswith("Requires-Dist:"):
                try:
                    requires.append(Requirement(line.split(":", 1)[1].strip()))
                except InvalidRequirement:
                    pass
    return requires


def load_distributions(site_packages):
    """Normalised name -> Distribution, for every *.dist-info in SITE_PACKAGES."""
    dists = {}
    for entry in sorted(os.listdir(site_packages)):
        if not entry.endswith(".dist-info"):
            continue
        info = os.path.join(site_packages, entry)
        name = None
        metadata = os.path.join(info, "METADATA")
        with open(metadata, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("Name:"):
                    name = normalize(line.split(":", 1)[1].strip())
                    break
        dist = Distribution(name=name or normalize(entry.rsplit("-", 1)[0]),
                            requires=read_metadata_requires(metadata))
        record = os.path.join(info, "RECORD")
        if os.path.exists(record):
            with open(record, encoding="utf-8", errors="replace") as f:
                for line in f:
                    relative = line.rsplit(",", 2)[0]
                    if relative:
                        dist.files.append(os.path.normpath(os.path.join(site_packages, relative)))
        dists[dist.name] = dist
    return dists


def requirement_names(requirements_file):
    """The requirements a file lists, as Requirement objects (comments and options skipped)."""
    names = []
    with open(requirements_file, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                names.append(Requirement(line))
    return names


def closure(roots, dists):
    """Normalised name -> the requirement chain that brings it in, over Requires-Dist with markers
    evaluated for this interpreter (extras followed where a requirement asks for them)."""
    chain = {}
    visited = set()  # (name, extras): a distribution asked for again with extras adds their needs
    queue = [(requirement, None) for requirement in roots]
    while queue:
        requirement, parent = queue.pop(0)
        name = normalize(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in visited or name not in dists:
            continue
        visited.add(key)
        chain.setdefault(name, f"{chain[parent]} -> {name}" if parent else name)
        for dependency in dists[name].requires:
            wanted = dependency.marker is None or any(
                dependency.marker.evaluate({"extra": extra}) for extra in (requirement.extras or {""}))
            if wanted:
                queue.append((dependency, name))
    return chain


def owner_of(path, file_owner):
    """The distribution that installed PATH; a compiled __pycache__ file belongs to its source."""
    if path in file_owner:
        return file_owner[path]
    folder, base = os.path.split(path)
    if os.path.basename(folder) == "__pycache__" and base.endswith(".pyc"):
        source = os.path.join(os.path.dirname(folder), base.split(".", 1)[0] + ".py")
        return file_owner.get(source)
    return None


class Environment:
    """A venv's distributions, their files, and those scripts/requirements.txt reaches."""

    def __init__(self, site_packages, requirements_file):
        self.site_packages = site_packages
        self.dists = load_distributions(site_packages)
        roots = requirement_names(requirements_file) + [Requirement(n) for n in VENV_BUILTINS]
        self.reached = closure(roots, self.dists)
        self.file_owner = {path: name for name, dist in self.dists.items() for path in dist.files}

    def owner_of(self, path):
        return owner_of(path, self.file_owner)
