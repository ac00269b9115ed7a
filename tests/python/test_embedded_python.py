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


# --- which Python is embedded: found at run time ----------------------------------------------


@pytest.fixture(scope="module")
def python_without_triton(tmp_path_factory):
    """A virtual environment of this Python version with nothing installed."""
    venv = tmp_path_factory.mktemp("bare-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return venv


def run_signature(cli, **env):
    environment = {k: v for k, v in os.environ.items() if k not in ("TRITONRT_PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX")}
    environment.update(TRITONRT_INDEX="off", TRITONRT_LOG="debug", **env)
    return subprocess.run([str(cli), "signature", f"{SIGNATURES}:plain"], capture_output=True, text=True,
                          env=environment, timeout=300)


def embedded(result):
    match = re.search(r"embedding (\S+) \(([^)]+)\), libpython (\S+)", result.stderr)
    assert match, result.stderr
    return match.groups()


def test_an_active_virtual_environment_is_embedded(cli):
    result = run_signature(cli, VIRTUAL_ENV=sys.prefix)
    assert result.returncode == 0, result.stderr
    program, found_by, library = embedded(result)
    assert (program, found_by) == (f"{sys.prefix}/bin/python3", "VIRTUAL_ENV")
    assert Path(library).name.startswith(f"libpython{BUILT_FOR}")


def test_a_python_that_cannot_import_triton_is_passed_over(cli, python_without_triton):
    # An active environment without triton: the next candidate serves.
    result = run_signature(cli, VIRTUAL_ENV=str(python_without_triton), CONDA_PREFIX=str(python_without_triton))
    assert result.returncode == 0, result.stderr
    program, _, _ = embedded(result)
    assert not program.startswith(str(python_without_triton))


def test_tritonrt_python_is_taken_or_refused_naming_why(cli, python_without_triton):
    result = run_signature(cli, TRITONRT_PYTHON=str(python_without_triton / "bin" / "python3"))
    assert result.returncode == 1
    assert "no usable one was found" in result.stderr
    assert f"{python_without_triton / 'bin' / 'python3'} (TRITONRT_PYTHON): it cannot import triton" in result.stderr
    missing = run_signature(cli, TRITONRT_PYTHON="/nonexistent/python3")
    assert missing.returncode == 1
    assert "/nonexistent/python3 (TRITONRT_PYTHON): it is not there" in missing.stderr
