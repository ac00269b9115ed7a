"""A kernel is the file it is named by, always: never another copy's binary.

Two copies of one package (`A/mypkg/kern.py`, `B/mypkg/kern.py`, the kernels differing in one
constant), and a copy of a package on PYTHONPATH: whatever was imported or indexed before,
the hash tritonrt serves for a kernel named by path is the hash Triton gives that file's
kernel, in a process with Python and in one without. A kernel named by module is the file
its import finds now: when PYTHONPATH or the files along its search path change, the index
never serves the file it found before. (Defects of an earlier version, each reproduced here.)
"""
import importlib.util
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parent)]
import triton_reference as ref  # noqa: E402

SERVED = "loaded from the index, without Python"
NO_PYTHON = {"TRITONRT_LIBPYTHON": "/nonexistent/libpython-for-this-test.so", "TRITONRT_PYTHON": ""}
SIGNATURE = "*i32,5"
KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(out, n: tl.constexpr):
    tl.store(out, {value} + n)
"""


def make_package(root, package, module, value):
    folder = root / package
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text("")
    (folder / f"{module}.py").write_text(KERNEL.format(value=value))
    return folder / f"{module}.py"


def triton_hash(path):
    """Triton's own hash for `k` of the file at `path` (imported under a name of its own)."""
    spec = importlib.util.spec_from_file_location(f"identity_{uuid.uuid4().hex}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return ref.compiled_hash(module.k, (ref.HostPointer(0x10000, "int32"), 5))


@pytest.fixture
def run(cli, tmp_path):

    def tritonrt(*args, env=None, cwd=None):
        environment = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"),
                           TRITONRT_CACHE_DIR=str(tmp_path / "index"), TRITONRT_PYTHON=sys.executable,
                           TRITONRT_LOG="debug")
        for variable in ("TRITONRT_INDEX", "PYTHONPATH"):
            environment.pop(variable, None)
        environment.update(env or {})
        result = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, env=environment,
                                timeout=600, cwd=cwd or tmp_path)
        assert result.returncode >= 0, f"tritonrt died with signal {-result.returncode}:\n{result.stderr}"
        return result

    return tritonrt


def served_hash(result):
    assert result.returncode == 0, result.stderr
    return re.search(r"^hash\s+(\S+)$", result.stdout, re.M).group(1)


def compile_k(run, source, env=None):
    return run("compile", f"{source}:k", "--target", "cuda:90", "--signature", SIGNATURE, env=env)


@pytest.fixture
def two_trees(tmp_path):
    a = make_package(tmp_path / "A", "mypkg", "kern", 1)
    b = make_package(tmp_path / "B", "mypkg", "kern", 2)
    return a, b, triton_hash(a), triton_hash(b)


def test_two_copies_of_a_package_each_get_their_own_kernel(run, two_trees):
    a, b, hash_a, hash_b = two_trees
    assert hash_a != hash_b
    assert served_hash(compile_k(run, a)) == hash_a
    first_b = compile_k(run, b)
    assert SERVED not in first_b.stderr
    assert served_hash(first_b) == hash_b
    # A process without Python: each from the index, each its own file's.
    for path, expected in ((a, hash_a), (b, hash_b)):
        result = compile_k(run, path, env=NO_PYTHON)
        assert SERVED in result.stderr
        assert served_hash(result) == expected


def test_one_process_naming_both_copies_refuses_the_second_and_names_both(run, two_trees, tmp_path):
    a, b, hash_a, hash_b = two_trees
    calls = tmp_path / "calls.json"
    calls.write_text(f'[{{"kernel": "{a}:k", "signature": "{SIGNATURE}"}},'
                     f' {{"kernel": "{b}:k", "signature": "{SIGNATURE}"}}]')
    result = run("bundle", "create", tmp_path / "x.trb", "--calls", calls, "--target", "cuda:90")
    assert result.returncode == 1
    message = [line for line in result.stderr.splitlines() if line.startswith("tritonrt: kernel")][-1]
    assert str(b) in message and str(a.parent) in message and "two copies of one package" in message
    assert not (tmp_path / "x.trb").exists()
    # Nothing of A was recorded as B's: B without Python is not served, with Python it is B's.
    assert compile_k(run, b, env=NO_PYTHON).returncode == 1
    assert served_hash(compile_k(run, b)) == hash_b


def test_a_copy_on_pythonpath_does_not_replace_the_named_file(run, tmp_path):
    dev = make_package(tmp_path / "dev", "rtdemo", "kernels", 1)
    installed = make_package(tmp_path / "inst", "rtdemo", "kernels", 2)
    env = {"PYTHONPATH": str(tmp_path / "inst")}
    signature = run("signature", f"{dev}:k", env=env)
    assert signature.returncode == 0, signature.stderr
    assert re.search(r"^file\s+(\S+)$", signature.stdout, re.M).group(1) == str(dev)
    assert served_hash(compile_k(run, dev, env=env)) == triton_hash(dev)
    # Later, PYTHONPATH unset: the index serves the named file's kernel, not the copy's.
    result = compile_k(run, dev, env=NO_PYTHON)
    assert SERVED in result.stderr
    assert served_hash(result) == triton_hash(dev) != triton_hash(installed)


def test_a_kernel_named_by_module_follows_pythonpath(run, tmp_path):
    dev = make_package(tmp_path / "dev", "rtdemo", "kernels", 1)
    installed = make_package(tmp_path / "inst", "rtdemo", "kernels", 2)
    on = {"PYTHONPATH": str(tmp_path / "inst")}
    assert served_hash(compile_k(run, "rtdemo.kernels", env=on)) == triton_hash(installed)
    again = compile_k(run, "rtdemo.kernels", env=on)
    assert SERVED in again.stderr and served_hash(again) == triton_hash(installed)
    # Another PYTHONPATH: another file, compiled through Python, never the old one.
    moved = compile_k(run, "rtdemo.kernels", env={"PYTHONPATH": str(tmp_path / "dev")})
    assert SERVED not in moved.stderr and "PYTHONPATH changed" in moved.stderr
    assert served_hash(moved) == triton_hash(dev)
    # No PYTHONPATH at all: the module is nowhere, and nothing is served.
    gone = compile_k(run, "rtdemo.kernels", env=NO_PYTHON)
    assert gone.returncode == 1 and SERVED not in gone.stderr


def test_a_copy_appearing_earlier_on_the_search_path_is_noticed(run, tmp_path):
    (tmp_path / "first").mkdir()
    installed = make_package(tmp_path / "inst", "rtdemo", "kernels", 2)
    env = {"PYTHONPATH": f"{tmp_path / 'first'}:{tmp_path / 'inst'}"}
    assert served_hash(compile_k(run, "rtdemo.kernels", env=env)) == triton_hash(installed)
    assert SERVED in compile_k(run, "rtdemo.kernels", env=env).stderr
    shadow = make_package(tmp_path / "first", "rtdemo", "kernels", 3)
    result = compile_k(run, "rtdemo.kernels", env=env)
    assert SERVED not in result.stderr
    # The copy's package is found first, so its module would be too.
    assert f"module 'rtdemo' would now be imported from '{shadow.parent / '__init__.py'}'" in result.stderr
    assert served_hash(result) == triton_hash(shadow)
    assert "not indexed" not in result.stderr, result.stderr
    # Without Python the shadowing copy is now what the index holds.
    result = compile_k(run, "rtdemo.kernels", env={**env, **NO_PYTHON})
    assert SERVED in result.stderr and served_hash(result) == triton_hash(shadow)
