#!/usr/bin/env python3
"""The install audit's own logic, on made-up package databases and strace logs: what it must
accept and what it must refuse (run by ctest as install/audit_logic)."""
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import audit_install  # noqa: E402
import debian_packages  # noqa: E402
import python_packages  # noqa: E402
import trace_paths  # noqa: E402
from audit_install import Audit  # noqa: E402
from debian_packages import Package  # noqa: E402
from pip._vendor.packaging.requirements import Requirement  # noqa: E402


def packages(*items):
    return {p.name: p for p in items}


# libdnnl-dev needs libdnnl2 and only recommends the OpenCL headers, as in Debian 12.
DEBIAN = packages(
    Package("libdnnl-dev", depends=[["libdnnl2"]], recommends=[["ocl-icd-opencl-dev"]]),
    Package("libdnnl2", depends=[["libc6"]]),
    Package("ocl-icd-opencl-dev", depends=[["opencl-c-headers", "opencl-headers"]],
            provides=["opencl-dev"]),
    Package("opencl-c-headers"),
    Package("libc6", depends=[["libgcc-s1"]]),
    Package("libgcc-s1"),
    Package("dash", essential=True, depends=[["debianutils"]]),
    Package("debianutils"),
    Package("mawk", provides=["awk"]),
    Package("uses-awk", depends=[["gawk", "awk"]]),
    Package("gawk", installed=False),
    Package("tool-a"), Package("tool-b"),
    Package("wants-a-or-b", depends=[["tool-a", "tool-b"]]),
)


class ClosureTest(unittest.TestCase):
    def test_depends_followed_recommends_not(self):
        closure = debian_packages.Closure(["libdnnl-dev"], DEBIAN)
        for name in ("libdnnl-dev", "libdnnl2", "libc6", "libgcc-s1"):
            self.assertIn(name, closure)
        self.assertNotIn("ocl-icd-opencl-dev", closure)
        self.assertEqual(closure.recommended_by("ocl-icd-opencl-dev"), ["libdnnl-dev"])
        self.assertEqual(closure.chain("libgcc-s1"), "libdnnl-dev -> libdnnl2 -> libc6 -> libgcc-s1")

    def test_essential_packages_are_always_there(self):
        closure = debian_packages.Closure([], DEBIAN)
        self.assertIn("dash", closure)
        self.assertIn("debianutils", closure)
        self.assertNotIn("libc6", closure)

    def test_first_installed_alternative_and_virtual_packages(self):
        closure = debian_packages.Closure(["uses-awk", "wants-a-or-b"], DEBIAN)
        self.assertIn("mawk", closure)      # gawk is not installed; mawk provides awk
        self.assertIn("tool-a", closure)
        self.assertNotIn("tool-b", closure)  # only the first alternative is followed

    def test_relations_and_merged_usr(self):
        self.assertEqual(debian_packages.parse_relations("libc6 (>= 2.34), a:any | b [amd64]"),
                         [["libc6"], ["a", "b"]])
        owners = {"/lib/x86_64-linux-gnu/libc.so.6": {"libc6"}}
        self.assertEqual(debian_packages.owners_of("/usr/lib/x86_64-linux-gnu/libc.so.6", owners),
                         {"libc6"})


class TraceTest(unittest.TestCase):
    def test_reduce_log(self):
        log = [
            '10  execve("/opt/made-up/bin/c++", ["c++", "-c", "x.cpp"], 0x0 /* 3 vars */) = 0\n',
            '10  openat(AT_FDCWD</w>, "/opt/made-up/libdnnl.so", O_RDONLY) = 3</opt/made-up/libdnnl.so.2.6>\n',
            '10  openat(AT_FDCWD</w>, "x.h", O_RDONLY) = 4</w/x.h>\n',
            '11  openat(AT_FDCWD</w>, "/usr/include/CL/cl.h", O_RDONLY <unfinished ...>\n',
            '10  openat(AT_FDCWD</w>, "/usr/include/stdio.h", O_RDONLY) = 5</usr/include/stdio.h>\n',
            '11  <... openat resumed>) = 6</usr/include/CL/cl.h>\n',
            '10  openat(AT_FDCWD</w>, "/usr/include/stdio.h", O_RDONLY) = 5</usr/include/stdio.h>\n',
        ]
        self.assertEqual(list(trace_paths.reduce_log(log)), [
            ("/opt/made-up/bin/c++", "/opt/made-up/bin/c++", "/opt/made-up/bin/c++"),
            ("/opt/made-up/libdnnl.so", "/opt/made-up/libdnnl.so.2.6", "/opt/made-up/bin/c++"),
            ("/w/x.h", "/w/x.h", "/opt/made-up/bin/c++"),
            ("/usr/include/stdio.h", "/usr/include/stdio.h", "/opt/made-up/bin/c++"),
            ("/usr/include/CL/cl.h", "/usr/include/CL/cl.h", "?"),
        ])


class PythonClosureTest(unittest.TestCase):
    def test_markers_and_extras(self):
        dists = {
            "onnx": python_packages.Distribution("onnx", requires=[
                Requirement("numpy>=1"), Requirement('pytest; extra == "test"'),
                Requirement('oldthing; python_version < "3.0"')]),
            "numpy": python_packages.Distribution("numpy"),
            "pytest": python_packages.Distribution("pytest"),
            "oldthing": python_packages.Distribution("oldthing"),
        }
        self.assertEqual(set(python_packages.closure([Requirement("onnx")], dists)), {"onnx", "numpy"})
        self.assertIn("pytest", python_packages.closure([Requirement("onnx[test]")], dists))
        self.assertEqual(python_packages.normalize("Scikit_Learn"), "scikit-learn")


def make_audit(checkout):
    """An audit over the made-up DEBIAN, reached from libdnnl-dev, with a venv that has numpy."""
    closure = debian_packages.Closure(["libdnnl-dev"], DEBIAN)
    owners = {"/opt/made-up/libdnnl.so": {"libdnnl-dev"},
              "/opt/made-up/libdnnl.so.2.6": {"libdnnl2"},
              "/opt/made-up/libOpenCL.so": {"ocl-icd-opencl-dev"}}
    site = os.path.join(checkout, ".venv", "lib", "python3.11", "site-packages")
    python = python_packages.Environment.__new__(python_packages.Environment)
    python.site_packages = site
    python.reached = {"numpy": "numpy"}
    python.file_owner = {os.path.join(site, "numpy", "__init__.py"): "numpy",
                         os.path.join(site, "torch", "__init__.py"): "torch"}
    return Audit(checkout, closure, owners, python)


class AuditTest(unittest.TestCase):
    def test_each_venv_against_its_requirements(self):
        with tempfile.TemporaryDirectory() as checkout:
            checkout = os.path.realpath(checkout)
            audit = make_audit(checkout)
            serve_site = os.path.join(checkout, ".venv-serve", "lib", "python3.11", "site-packages")
            serve = python_packages.Environment.__new__(python_packages.Environment)
            serve.site_packages = serve_site
            serve.reached = {"tritonclient": "tritonclient"}
            serve.file_owner = {os.path.join(serve_site, "tritonclient", "__init__.py"): "tritonclient",
                                os.path.join(serve_site, "torch", "__init__.py"): "torch"}
            audit = Audit(checkout, audit.closure, audit.owners,
                          {".venv": audit.venvs[os.path.join(checkout, ".venv")][1], ".venv-serve": serve})
            path = os.path.join(serve_site, "tritonclient", "__init__.py")
            audit.check(path, path, "python")
            self.assertFalse(audit.failed())
            path = os.path.join(serve_site, "torch", "__init__.py")
            audit.check(path, path, "python")
            self.assertEqual(list(audit.missing_python), [(".venv-serve", "torch")])
            report = io.StringIO()
            audit.report(report)
            self.assertIn("torch in .venv-serve is not reached from scripts/requirements-serve.txt",
                          report.getvalue())

    def test_what_passes_and_what_fails(self):
        with tempfile.TemporaryDirectory() as checkout:
            checkout = os.path.realpath(checkout)
            site = os.path.join(checkout, ".venv", "lib", "python3.11", "site-packages")
            audit = make_audit(checkout)
            audit.check("/opt/made-up/libdnnl.so", "/opt/made-up/libdnnl.so.2.6", "ld")
            audit.check(os.path.join(checkout, "lib", "x.cpp"), os.path.join(checkout, "lib", "x.cpp"), "cc")
            audit.check(os.path.join(site, "numpy", "__pycache__", "__init__.cpython-311.pyc"),
                        os.path.join(site, "numpy", "__pycache__", "__init__.cpython-311.pyc"), "python")
            audit.check("/etc/ld.so.cache", "/etc/ld.so.cache", "ld.so")
            audit.check("/usr/local/cuda/lib64/libmade-up.so", "/usr/local/cuda-13.0/lib64/libmade-up.so", "test")
            self.assertFalse(audit.failed())
            self.assertEqual(audit.reached_debian, {"libdnnl-dev", "libdnnl2"})

            audit.check("/opt/made-up/libOpenCL.so", "/opt/made-up/libOpenCL.so", "ld")
            audit.check(os.path.join(site, "torch", "__init__.py"), os.path.join(site, "torch", "__init__.py"), "python")
            audit.check("/opt/made-up-pyenv/lib/python3.11/json/__init__.py",
                        "/opt/made-up-pyenv/lib/python3.11/json/__init__.py", "python3")
            self.assertTrue(audit.failed())
            self.assertEqual(list(audit.missing_debian), ["ocl-icd-opencl-dev"])
            self.assertEqual(list(audit.missing_python), [(".venv", "torch")])
            self.assertEqual(list(audit.unowned), ["/opt/made-up-pyenv/lib/python3.11/json/__init__.py"])

            report = io.StringIO()
            audit.report(report)
            self.assertIn("Debian package ocl-icd-opencl-dev is not in scripts/install-deps", report.getvalue())
            self.assertIn("/opt/made-up/libOpenCL.so (ld)", report.getvalue())
            self.assertIn("only Recommended by libdnnl-dev", report.getvalue())
            self.assertIn("Python distribution torch", report.getvalue())


class IncidentalTest(unittest.TestCase):
    def test_reads_that_are_not_dependencies(self):
        with tempfile.TemporaryDirectory() as folder:
            folder = os.path.realpath(folder)
            audit = make_audit(os.path.join(folder, "checkout"))
            elf32 = os.path.join(folder, "libold.so.6")
            with open(elf32, "wb") as f:
                f.write(b"\x7fELF\x01\x01\x01" + bytes(57))
            pth = os.path.join(folder, "site", "hook.pth")
            os.makedirs(os.path.join(folder, "site", "hookmod"))
            with open(pth, "w") as f:
                f.write("import os; __import__('hookmod').install()\n")
            hooked = os.path.join(folder, "site", "hookmod", "__init__.py")
            audit.check(elf32, elf32, "ld")
            audit.check("/opt/made-up/pkgconfig/gl.pc", "/opt/made-up/pkgconfig/gl.pc", "/usr/bin/pkg-config")
            audit.check(pth, pth, "python3")
            audit.check(hooked, hooked, "python3")
            self.assertFalse(audit.failed(), audit.unowned)
            audit.check("/opt/made-up/pkgconfig/gl.pc", "/opt/made-up/pkgconfig/gl.pc", "/usr/bin/cc")
            self.assertEqual(list(audit.unowned), ["/opt/made-up/pkgconfig/gl.pc"])

    # The launchers are written under /tmp, which the audit otherwise takes for scratch space.
    @mock.patch.object(audit_install, "SYSTEM_STATE", ("/proc/",))
    def test_launchers_of_the_optional_cuda_toolkit(self):
        with tempfile.TemporaryDirectory() as folder:
            folder = os.path.realpath(folder)
            audit = make_audit(os.path.join(folder, "checkout"))
            nvcc = os.path.join(folder, "nvcc")
            with open(nvcc, "w") as f:
                f.write('#!/bin/sh\nexec /usr/local/cuda-13.0/bin/nvcc "$@"\n')
            other = os.path.join(folder, "made-up-tool")
            with open(other, "w") as f:
                f.write('#!/bin/sh\nexec /opt/made-up/bin/tool "$@"\n')
            audit.check(nvcc, nvcc, "cmake")
            self.assertFalse(audit.failed(), audit.unowned)
            self.assertEqual(len(audit.optional), 1)
            audit.check(other, other, "cmake")
            self.assertEqual(list(audit.unowned), [other])


if __name__ == "__main__":
    unittest.main()
