"""The Python tritonrt embeds in a process without one must be the minor version its compiler
module was built for: another one is refused with both versions named, before any other
Python symbol is used (it used to crash the process inside pybind11)."""
import glob
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SIGNATURES = REPO / "tests" / "kernels" / "signatures.py"
BUILT_FOR = f"{sys.version_info.major}.{sys.version_info.minor}"


def run_with_libpython(cli, library):
    environment = dict(os.environ, TRITONRT_LIBPYTHON=str(library), TRITONRT_PYTHON=sys.executable)
    return subprocess.run([str(cli), "signature", f"{SIGNATURES}:plain"], capture_output=True, text=True,
                          env=environment, timeout=300)


def other_libpythons():
    """Shared libpythons of other minor versions on this machine (pyenv's, the system's)."""
    patterns = [os.path.expanduser("~/.pyenv/versions/3.*/lib/libpython3.*.so.1.0"),
                "/usr/lib/*-linux-gnu/libpython3.*.so.1.0", "/usr/lib64/libpython3.*.so.1.0"]
    found = {}
    for path in sorted(p for pattern in patterns for p in glob.glob(pattern)):
        version = re.match(r"libpython(\d+\.\d+)", Path(path).name).group(1)
        if version != BUILT_FOR:
            found.setdefault(version, path)
    return found


def test_a_libpython_of_another_version_is_refused_naming_both(cli):
    libraries = other_libpythons()
    if not libraries:
        pytest.skip("no libpython of another minor version on this machine")
    for version, library in libraries.items():
        result = run_with_libpython(cli, library)
        assert result.returncode == 1, f"{library}: exit {result.returncode}\n{result.stderr}"
        assert f"is Python {version}." in result.stderr and f"built for Python {BUILT_FOR}" in result.stderr, \
            result.stderr


def test_the_version_is_read_before_any_other_python_symbol(cli):
    # A library with Py_GetVersion alone: using anything else of it would fail differently.
    result = run_with_libpython(cli, os.environ["TRITONRT_TEST_FAKE_LIBPYTHON"])
    assert result.returncode == 1, result.stderr
    assert "is Python 3.99.0, but tritonrt's compiler module was built for Python " + BUILT_FOR in result.stderr


def test_a_library_that_is_not_python_is_refused(cli):
    result = run_with_libpython(cli, "libc.so.6")
    assert result.returncode == 1
    assert "libc.so.6 is not a Python library" in result.stderr


def test_the_python_it_was_built_for_works(cli):
    library = Path(sysconfig.get_config_var("LIBDIR")) / sysconfig.get_config_var("LDLIBRARY")
    if not library.exists():
        pytest.skip(f"this Python has no shared library ({library})")
    result = run_with_libpython(cli, library)
    assert result.returncode == 0, result.stderr
    assert "kernel      signatures.plain" in result.stdout
