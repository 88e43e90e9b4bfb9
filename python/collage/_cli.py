"""The `collage` command the package installs: runs the collage program shipped in the wheel
(collage/bin/collage) with the same arguments."""
import os
import sys


def program():
    """The path of the collage program inside the package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "collage")


def main():
    path = program()
    os.execv(path, [path] + sys.argv[1:])
