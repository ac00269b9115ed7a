"""The Python front end on a machine without a GPU: tritonrt.launcher and install() launch
through tritonrt's stand-in driver (tests/support/fake_cuda), Triton's own path runs against
a recording driver (triton_reference.RecordingDriver), and the two are compared: binding, the
arguments a grid sees, errors, the compiled kernel's hash, routing and fallback.

CTest runs this file as `pytest_frontend`, with the stand-in libcuda first on the library
path; the plain pytest run skips it.
"""
import contextlib
import ctypes
import logging
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

if not os.environ.get("TRITONRT_TEST_FAKE_CUDA"):
    pytest.skip("run by ctest's pytest_frontend, which puts the stand-in libcuda first on the library path",
                allow_module_level=True)

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime.driver import driver  # noqa: E402
from triton.runtime.jit import JITFunction, KernelInterface  # noqa: E402

from triton_reference import HostPointer, RecordingDriver, parse_target  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "kernels"))
import descriptor_kernels as D  # noqa: E402
import frontend_kernels as K  # noqa: E402
import gluon_kernels as G  # noqa: E402
import tuple_kernels as T  # noqa: E402

import stand_in_driver  # noqa: E402


class FakeLaunches(ctypes.Structure):
    _fields_ = [("launches", ctypes.c_uint64), ("captured", ctypes.c_uint64), ("loads", ctypes.c_uint64),
                ("unloads", ctypes.c_uint64), ("live", ctypes.c_uint64)]


@pytest.fixture(scope="module")
def rt(tritonrt_package):
    return tritonrt_package


@pytest.fixture(scope="module")
def recording():
    """Triton's driver for the module: launches recorded, never run."""
    previous = driver._active
    recorder = RecordingDriver(parse_target("cuda:90"))
    driver.set_active(recorder)
    yield recorder
    driver._active = previous


def fake_launches():
    """Launches the stand-in libcuda has received (tritonrt's)."""
    lib = ctypes.CDLL("libcuda.so.1")
    stats = FakeLaunches()
    lib.fake_cuda_get_stats(ctypes.byref(stats))
    return stats.launches


@pytest.fixture
def slow_kernels():
    """Each kernel takes 10 ms on the stand-in driver's clock, so that tuning (25 ms of
    warm-up, 100 ms of runs, as Triton's do_bench) takes a few launches per config."""
    lib = ctypes.CDLL("libcuda.so.1")
    lib.fake_cuda_set_kernel_duration_us.argtypes = [ctypes.c_char_p, ctypes.c_double]
    lib.fake_cuda_set_kernel_duration_us(None, 10000.0)
    yield
    lib.fake_cuda_set_kernel_duration_us(None, 1.0)


def pointer(address=0x10000, dtype="float32"):
    return HostPointer(address, dtype)


def descriptor(address):
    """Triton's host TensorDescriptor of a 64 x 128 fp16 matrix, loaded 32 x 64 at a time."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    return TensorDescriptor(pointer(address, "float16"), [64, 128], [128, 1], [32, 64])


def gluon_descriptor(address):
    """Gluon's host TensorDescriptor of a 64 x 128 fp16 matrix, 32 x 64 tiles in Gluon's
    default shared-memory layout for them."""
    import triton.experimental.gluon.language as gl
    from triton.experimental.gluon.language._layouts import NVMMASharedLayout
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    layout = NVMMASharedLayout.get_default_for([32, 64], gl.float16)
    return TensorDescriptor(pointer(address, "float16"), [64, 128], [128, 1], [32, 64], layout)


def test_the_stand_in_driver_is_the_one_loaded(rt, recording):
    rt.launcher(K.add_kernel)[(1, )](pointer(), pointer(), pointer(), 16)
    assert fake_launches() > 0


# --- binding, against Triton's own binder ---------------------------------------------------------

KINDS = ("pointer", "int", "float", "bool", "constexpr", "annotated")


def write_generated_kernels(folder, count, rng):
    """A module of `count` kernels with random signatures: (module name, {kernel: [(name, kind,
    has_default)]})."""
    lines = ["import triton", "import triton.language as tl", ""]
    signatures = {}
    for k in range(count):
        params = []
        n = rng.randint(1, 8)
        defaults_from = rng.randint(0, n)
        for i in range(n):
            kind = rng.choice(KINDS)
            params.append((f"p{i}", kind, i >= defaults_from))
        spelled = []
        for name, kind, has_default in params:
            annotation = {"constexpr": ": tl.constexpr", "annotated": ": tl.int64"}.get(kind, "")
            default = {"pointer": "None", "int": "7", "float": "0.5", "bool": "True", "constexpr": "4",
                       "annotated": "3"}[kind]
            spelled.append(f"{name}{annotation}" + (f" = {default}" if has_default else ""))
        dns = [name for name, kind, _ in params if kind == "int" and rng.random() < 0.3]
        lines += [f"@triton.jit(do_not_specialize={dns!r})", f"def k{k}({', '.join(spelled)}):", "    pass", ""]
        signatures[f"k{k}"] = params
    name = f"generated_signatures_{rng.randint(0, 10**9)}"
    (folder / f"{name}.py").write_text("\n".join(lines))
    return name, signatures


def value_for(kind, rng):
    if kind == "pointer":
        return rng.choice([pointer(0x1000 * rng.randint(1, 9), rng.choice(["float32", "float16", "int32"])),
                           pointer(0x1004, "float32"), None])
    if kind == "int":
        return rng.choice([0, 1, 16, 17, 2**31, -5, 2**40, 2**63 + 5])
    if kind == "annotated":
        return rng.choice([0, 1, 16, 17, -5, 2**40])
    if kind == "float":
        return rng.choice([0.5, 1.0, -2.25])
    if kind == "bool":
        return rng.choice([True, False])
    return rng.choice([1, 4, 64, True, 0.25, "mode", tl.float16, None])


def random_call(params, rng):
    """(args, kwargs) of one call, sometimes a wrong one (extra, duplicate, missing, unknown)."""
    values = [value_for(kind, rng) for _, kind, _ in params]
    given = [i for i, (_, _, has_default) in enumerate(params) if not has_default or rng.random() < 0.5]
    prefix = 0
    while prefix < len(given) and given[prefix] == prefix:
        prefix += 1
    cut = rng.randint(0, prefix)
    args = values[:cut]
    keyed = [(params[i][0], values[i]) for i in given if i >= cut]
    rng.shuffle(keyed)
    kwargs = dict(keyed)
    if rng.random() < 0.3:
        kwargs[rng.choice(["num_warps", "num_stages", "num_ctas"])] = rng.choice([1, 2, 4, 8])
    wrong = rng.random()
    if wrong < 0.06:
        args.append(1)  # one too many
    elif wrong < 0.12 and args:
        kwargs[params[0][0]] = args[0]  # given twice
    elif wrong < 0.18:
        required = [i for i, (_, _, d) in enumerate(params) if not d]
        if required:
            kwargs.pop(params[required[-1]][0], None)
            args = args[:required[-1]]
    elif wrong < 0.22:
        kwargs["no_such_argument"] = 1
    return args, kwargs


def tritons_binding(fn, args, kwargs):
    """(specialization repr, options) from Triton's binder, or the exception it raises."""
    binder = fn.device_caches[0][4]
    try:
        _, specialization, options = binder(*args, **kwargs)
    except Exception as e:  # what the caller sees from Triton
        return e
    return repr(specialization), options


@pytest.mark.parametrize("given", [42, None, "kernel", lambda x: x], ids=["int", "None", "str", "lambda"])
def test_a_launcher_of_what_is_no_kernel_is_a_type_error_naming_it(rt, given):
    with pytest.raises(TypeError, match=r"takes a @triton.jit function.*it was given .*, a (int|NoneType|str|function)"):
        rt.launcher(given)


def test_binding_matches_tritons_binder_over_generated_signatures(rt, recording, tmp_path):
    from tritonrt import _wiring, frontend
    rng = random.Random(20)
    module_name, signatures = write_generated_kernels(tmp_path, 40, rng)
    sys.path.insert(0, str(tmp_path))
    try:
        module = __import__(module_name)
    finally:
        sys.path.remove(str(tmp_path))
    compared = errors = deferred = 0
    for kernel_name, params in signatures.items():
        fn = getattr(module, kernel_name)
        frontend._setup()
        kernel = _wiring._new_kernel(fn, JITFunction.run, strict=True)
        assert kernel.reason is None, kernel.reason
        for _ in range(15):
            args, kwargs = random_call(params, rng)
            theirs = tritons_binding(fn, args, kwargs)
            call = f"{kernel_name}{[n + ':' + k for n, k, _ in params]} args={args} kwargs={kwargs}"
            try:
                ours = kernel.specialization(*args, **kwargs)
            except LookupError as e:
                # Left to Triton: its binder raised, or it takes an option tritonrt does not pass.
                unknown = not isinstance(theirs, Exception) and set(theirs[1]) - {"num_warps", "num_stages", "num_ctas"}
                assert isinstance(theirs, Exception) or unknown, f"{call}: tritonrt deferred ({e}), Triton bound it"
                deferred += 1
                errors += isinstance(theirs, Exception)
                continue
            assert not isinstance(theirs, Exception), f"{call}: Triton raised {theirs!r}, tritonrt bound it"
            assert ours[0] == theirs[0], call
            assert ours[1] == theirs[1], call
            compared += 1
    assert compared > 300 and errors > 30 and deferred >= errors


# --- launches: tritonrt's against Triton's own ------------------------------------------------------

def both_launch(rt, recording, kernel, grid, *args, **kwargs):
    """(tritonrt's result, Triton's result, Triton's recorded launch); tritonrt's launch checked
    to reach the stand-in driver and Triton's to reach its recorder."""
    before, recorded = fake_launches(), len(recording.launches)
    ours = rt.launcher(kernel)[grid](*args, **kwargs)
    assert fake_launches() == before + 1 and len(recording.launches) == recorded
    theirs = kernel[grid](*args, **kwargs)
    assert len(recording.launches) == recorded + 1
    return ours, theirs, recording.launches[-1]


CALLS = {
    "positional": (K.add_kernel, (4, ), lambda: ((pointer(), pointer(0x2000), pointer(0x3000), 1000), {})),
    "default and keywords": (K.add_kernel, (2, 1, 1), lambda: ((pointer(), ), dict(n=17, out_ptr=pointer(0x3004),
                                                                                      y_ptr=pointer(0x2000)))),
    "constexpr and options": (K.add_kernel, (1, ), lambda: ((pointer(), pointer(), pointer(), 4096), dict(
        BLOCK=256, num_warps=8, num_stages=2))),
    "every kind": (K.mixed_kernel, (3, ), lambda: ((pointer(dtype="float16"), pointer(), 64, 1.5, True, 2**40, None),
                                                  dict(MODE="twice", DTYPE=tl.float32))),
    "int that is 1": (K.mixed_kernel, (1, ), lambda: ((pointer(), pointer(), 1, 2.0, False, 1, 3, "once",
                                                        tl.float16), {})),
    "class attribute": (K.Holder.copy_kernel, (2, ), lambda: ((pointer(), pointer(), 99), dict(BLOCK=32))),
    "heuristics": (K.heuristic_kernel, (5, ), lambda: ((pointer(), pointer(), 5000), {})),
    "tensor descriptors": (D.scale_2d, (2, 2), lambda: ((descriptor(0x10000), descriptor(0x20000), 2.0),
                                                         dict(BLOCK_M=32, BLOCK_N=64))),
    "Gluon tensor descriptors": (G.gluon_tma_scale, (2, 2), lambda: ((gluon_descriptor(0x10000),
                                                                      gluon_descriptor(0x20000), 2.0), {})),
    "nested tuples": (T.tuple_combine, (4, ), lambda: (((pointer(), pointer(0x2008, "float16")), pointer(0x3000),
                                                        ((2.0, 1), (3, None)), 1000), dict(BLOCK=256))),
    "tuples, other values": (T.tuple_combine, (4, ), lambda: (((pointer(0x1004), ), pointer(0x3000),
                                                               ((0.5, ), (2**40, 0.25)), 16, 128), {})),
    "constexpr tuple": (T.tuple_shape, (1, ), lambda: ((pointer(), pointer(0x2000), 64), dict(SHAPE=(16, 32)))),
    "heuristic reading a tuple": (T.tuple_heuristic, (2, ), lambda: (((pointer(), pointer(0x2000)), pointer(0x3000),
                                                                      (2.0, None), 64, 32), {})),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_launch_compiles_what_tritons_launch_compiles(rt, recording, name):
    kernel, grid, make = CALLS[name]
    args, kwargs = make()
    ours, theirs, launch = both_launch(rt, recording, kernel, grid, *args, **kwargs)
    assert ours.hash == theirs.hash
    assert ours.name == theirs.name
    assert ours.metadata == theirs.metadata
    assert launch[1] == tuple(grid) + (1, ) * (3 - len(grid))


def test_an_autotuned_launch_compiles_tritons_choice(rt, recording, slow_kernels):
    from triton_reference import forget_tuning
    args = (pointer(), pointer(), 1000)
    grid = lambda meta: (triton.cdiv(1000, meta["BLOCK"]), )  # noqa: E731
    ours = rt.launcher(K.tuned_kernel)[grid](*args)
    forget_tuning(K.tuned_kernel)
    theirs = K.tuned_kernel[grid](*args)  # equal timings: both keep the first config
    assert ours.hash == theirs.hash


def test_descriptors_a_config_pre_hook_reshapes_compile_tritons_choice(rt, recording, slow_kernels):
    """As Triton's persistent-matmul tutorial launches: descriptors with a placeholder block
    shape, set by each config's pre_hook (shown Triton's own TensorDescriptor). The caller's
    descriptors are left with the block shapes the launch used, as Triton's hook leaves them:
    after the tuning call, and after a call served without running the hook."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    from triton_reference import forget_tuning

    def descriptors():
        return [TensorDescriptor(pointer(0x10000 * (i + 1), "float16"), [128, 128], [128, 1], [1, 1]) for i in range(3)]

    grid = lambda meta: (triton.cdiv(128, meta["BLOCK_M"]), triton.cdiv(128, meta["BLOCK_N"]))  # noqa: E731
    launcher = rt.launcher(D.matmul_tma_tuned)
    ours_given, theirs_given = descriptors(), descriptors()
    ours = launcher[grid](*ours_given, 128)
    forget_tuning(D.matmul_tma_tuned)
    theirs = D.matmul_tma_tuned[grid](*theirs_given, 128)  # equal timings: both keep the first config
    assert ours.hash == theirs.hash
    assert [tuple(m["block_size"]) for m in ours.metadata.tensordesc_meta] == [(64, 32), (32, 64), (64, 64)]
    tiles = [[64, 32], [32, 64], [64, 64]]
    assert [d.block_shape for d in theirs_given] == tiles
    assert [d.block_shape for d in ours_given] == tiles
    again = descriptors()
    launcher[grid](*again, 128)
    assert [d.block_shape for d in again] == tiles


def test_a_config_pre_hook_runs_in_python_once_per_input_it_reads(rt, recording, slow_kernels):
    """A config's pre_hook that only sets block shapes from what it read (the config's values
    and A's layout, as FlagGems' Hopper matmul) runs in Python once per config and input: not
    on each timed launch of the tuning, not on later calls. One that reads a descriptor's own
    fields runs on every call, as Triton runs hooks."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    def descriptors(a_shape):
        shapes = [a_shape, [256, 128], [128, 128]]
        return [TensorDescriptor(pointer(0x10000 * (i + 1), "float16"), shape, [shape[1], 1], [1, 1])
                for i, shape in enumerate(shapes)]

    grid = lambda meta: (triton.cdiv(128, meta["BLOCK_M"]), triton.cdiv(128, meta["BLOCK_N"]))  # noqa: E731
    layouts = rt.launcher(D.matmul_tma_layouts)
    D.HOOK_RUNS.clear()
    first = layouts[grid](*descriptors([128, 256]), 256, True)
    assert D.HOOK_RUNS == ["layout", "layout"]  # once per config while tuning
    for _ in range(3):
        again = layouts[grid](*descriptors([128, 256]), 256, True)
    assert again.hash == first.hash and len(D.HOOK_RUNS) == 2
    other = layouts[grid](*descriptors([256, 128]), 256, False)  # another layout: the hook runs for it
    assert len(D.HOOK_RUNS) == 3 and other.hash != first.hash
    assert [m["block_size"][0] for m in other.metadata.tensordesc_meta][:1] != [first.metadata.tensordesc_meta[0]
                                                                               ["block_size"][0]]
    layouts[grid](*descriptors([256, 128]), 256, False)
    assert len(D.HOOK_RUNS) == 3

    shaped = rt.launcher(D.matmul_tma_shape_hook)
    shaped[grid](*descriptors([128, 256]), 256)
    runs = len(D.HOOK_RUNS)
    shaped[grid](*descriptors([128, 256]), 256)
    shaped[grid](*descriptors([128, 256]), 256)
    assert len(D.HOOK_RUNS) == runs + 2 and D.HOOK_RUNS[-1] == "shape"


def test_under_install_a_config_pre_hook_runs_once_per_input_and_reshapes_the_callers(rt, recording, slow_kernels):
    """install(): the library's own `kernel[grid]` call launches through tritonrt, its config
    hooks memoized as through the launcher, and the caller's descriptors left with the chosen
    config's tiles."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    def descriptors():
        shapes = [[128, 512], [512, 128], [128, 128]]
        return [TensorDescriptor(pointer(0x10000 * (i + 1), "float16"), shape, [shape[1], 1], [1, 1])
                for i, shape in enumerate(shapes)]

    grid = lambda meta: (triton.cdiv(128, meta["BLOCK_M"]), triton.cdiv(128, meta["BLOCK_N"]))  # noqa: E731
    D.HOOK_RUNS.clear()
    rt.install()
    try:
        recorded, fake = len(recording.launches), fake_launches()
        given = descriptors()
        first = D.matmul_tma_layouts_installed[grid](*given, 512, True)
        assert D.HOOK_RUNS == ["layout", "layout"]  # once per config, while tuning
        tiles = [[64, 32], [32, 64], [64, 64]] if first.metadata.num_warps == 4 else [[128, 64], [64, 64], [128, 64]]
        assert [d.block_shape for d in given] == tiles
        for _ in range(3):
            again = descriptors()
            D.matmul_tma_layouts_installed[grid](*again, 512, True)
            assert [d.block_shape for d in again] == tiles
        assert len(D.HOOK_RUNS) == 2
        assert len(recording.launches) == recorded and fake_launches() > fake  # all through tritonrt
    finally:
        rt.uninstall()


HOOK_RUNS_CHILD = """
import sys
sys.path[:0] = sys.argv[1:4]
import tritonrt
import descriptor_kernels as D
from triton.runtime.driver import driver
from triton.tools.tensor_descriptor import TensorDescriptor
from triton_reference import HostPointer, RecordingDriver, parse_target
driver.set_active(RecordingDriver(parse_target("cuda:90")))
src = TensorDescriptor(HostPointer(0x10000, "float16"), [16, 16], [16, 1], [1, 1])
for _ in range(3):
    tritonrt.launcher(D.load_either_tiled)[(1, )](src, HostPointer(0x20000, "float16"))
print(len(D.HOOK_RUNS))
"""


@pytest.mark.parametrize("memoize, runs", [("on", "1"), ("off", "3")])
def test_memoize_hooks_off_runs_a_config_hook_on_every_call(rt, memoize, runs):
    env = {**os.environ, "TRITONRT_MEMOIZE_HOOKS": memoize}
    done = subprocess.run([sys.executable, "-c", HOOK_RUNS_CHILD, str(Path(rt.__file__).parents[1]),
                           str(Path(__file__).parent), str(REPO / "tests" / "kernels")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [runs]


def test_grid_gets_the_bound_arguments_triton_gives_it(rt, recording):
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (triton.cdiv(meta["n"], meta["BLOCK"]), )

    args = (pointer(), pointer(), pointer())
    ours, theirs, _ = both_launch(rt, recording, K.add_kernel, grid, *args, n=300)
    assert list(seen[0]) == list(seen[1]) and seen[0] == seen[1]
    seen.clear()
    both_launch(rt, recording, K.heuristic_kernel, grid, pointer(), pointer(), 5000)
    assert seen[0] == seen[1] and seen[0]["BLOCK"] == 2048


def test_grid_gets_a_tuple_argument_as_given(rt, recording):
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (triton.cdiv(meta["n"], meta["BLOCK"]), )

    args = ((pointer(), pointer(0x2000)), pointer(0x3000), (2.0, 0.5), 300, 64)
    both_launch(rt, recording, T.tuple_heuristic, grid, *args)
    assert seen[0] == seen[1] and seen[0]["srcs"] is args[0] and seen[0]["HAS_BIAS"] is True


def test_a_tuple_grid_is_read_as_triton_reads_it(rt, recording):
    args = (pointer(), pointer(), pointer(), 64)
    for grid in ((3, ), [2, 2], (1, 2, 3, 4)):
        _, _, launch = both_launch(rt, recording, K.add_kernel, grid, *args)
        assert launch[1] == (tuple(grid) + (1, 1))[:3]


@contextlib.contextmanager
def calls_of(function):
    """A list that counts the Python calls of `function`'s code while the block runs."""
    calls = []

    def profile(frame, event, _):
        if event == "call" and frame.f_code is function.__code__:
            calls.append(1)

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)


def memoized_grid_launch(rt, n, rows):
    """A launch whose grid is a library's lambda over the calling function's values; the grid
    the stand-in driver got and the lambda."""
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]), rows)  # noqa: E731
    with calls_of(grid) as calls:
        rt.launcher(K.add_kernel)[grid](pointer(), pointer(), pointer(), n, BLOCK=64)
    return tuple(stand_in_driver.last_launch().grid), len(calls)


def test_a_grid_that_reads_only_values_runs_once_per_value_it_reads(rt, recording):
    assert memoized_grid_launch(rt, 1000, 3) == ((16, 3, 1), 1)
    assert memoized_grid_launch(rt, 1000, 3) == ((16, 3, 1), 0)  # a new lambda, the same code and values
    assert memoized_grid_launch(rt, 1000, 5) == ((16, 5, 1), 1)  # a cell read another value
    assert memoized_grid_launch(rt, 2000, 5) == ((32, 5, 1), 1)
    assert memoized_grid_launch(rt, 1000, 3) == ((16, 3, 1), 0)
    grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]), )  # noqa: E731  # META's items are read too
    runs = []
    for n in (640, 640, 650):
        with calls_of(grid) as calls:
            rt.launcher(K.add_kernel)[grid](pointer(), pointer(), pointer(), n, BLOCK=64)
        runs.append((stand_in_driver.last_launch().grid[0], len(calls)))
    assert runs == [(10, 1), (10, 0), (11, 1)]


def test_a_grid_runs_again_when_a_name_it_calls_names_another_function(rt, recording, monkeypatch):
    assert memoized_grid_launch(rt, 3000, 2) == ((47, 2, 1), 1)
    assert memoized_grid_launch(rt, 3000, 2) == ((47, 2, 1), 0)
    with monkeypatch.context() as patched:
        patched.setattr(triton, "cdiv", lambda a, b: 7)
        assert memoized_grid_launch(rt, 3000, 2) == ((7, 2, 1), 1)
    assert memoized_grid_launch(rt, 3000, 2) == ((47, 2, 1), 0)
    monkeypatch.setattr(triton.cdiv, "fn", lambda a, b: 9)  # the same wrapper, another function inside
    assert memoized_grid_launch(rt, 3000, 2) == ((9, 2, 1), 1)


def test_a_grid_that_reads_anything_else_runs_every_launch(rt, recording):
    rows = [2]
    grid = lambda meta: (len(rows), rows[0])  # noqa: E731  # a list may change under the same identity
    counts = []
    for value in (2, 2, 4):
        rows[0] = value
        with calls_of(grid) as calls:
            rt.launcher(K.add_kernel)[grid](pointer(), pointer(), pointer(), 64)
        counts.append(len(calls))
        assert tuple(stand_in_driver.last_launch().grid) == (1, value, 1)
    assert counts == [1, 1, 1]
    class Padded(tuple):  # a tuple whose methods run code of their own
        pad = 0

        def __len__(self):
            return tuple.__len__(self) + Padded.pad

    shape = Padded((1, 2))
    sized = lambda meta: (len(shape), )  # noqa: E731
    for pad in (0, 0, 3):
        Padded.pad = pad
        with calls_of(sized) as calls:
            rt.launcher(K.add_kernel)[sized](pointer(), pointer(), pointer(), 64)
        assert len(calls) == 1 and stand_in_driver.last_launch().grid[0] == 2 + pad
    printed = lambda meta: (print(end="") or 1, )  # noqa: E731
    for _ in range(2):
        with calls_of(printed) as calls:
            rt.launcher(K.add_kernel)[printed](pointer(), pointer(), pointer(), 64)
        assert len(calls) == 1


ERRORS = {
    "missing": ((pointer(), pointer()), {}),
    "too many": ((pointer(), pointer(), pointer(), 4, 128, 7), {}),
    "twice": ((pointer(), pointer(), pointer(), 4), dict(n=4)),
    "unknown keyword": ((pointer(), pointer(), pointer(), 4), dict(bogus=1)),
    "device option": ((pointer(), pointer(), pointer(), 4), dict(device=0)),
    "string for a pointer": (("x", pointer(), pointer(), 4), {}),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_tritons_own(rt, recording, name):
    args, kwargs = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        K.add_kernel[(1, )](*args, **kwargs)
    with pytest.raises(Exception) as ours:
        rt.launcher(K.add_kernel)[(1, )](*args, **kwargs)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_the_result_launches_again_as_a_compiled_kernel(rt, recording):
    args = (pointer(), pointer(), pointer(), 100, 128)
    compiled = rt.launcher(K.add_kernel)[(1, )](*args)
    before = fake_launches()
    again = compiled[(2, 1, 1)](*args)
    assert fake_launches() == before + 1 and again.hash == compiled.hash


def test_a_binary_tritons_cache_holds_is_tritons_own_compiled_kernel(rt, recording):
    """While Triton's cache holds the binary's entry, the result's `.asm` and Triton's own
    CompiledKernel behind it are that entry's, as Triton's launch returns them."""
    from triton.runtime.cache import get_cache_manager
    compiled = rt.launcher(K.add_kernel)[(1, )](pointer(), pointer(), pointer(), 100, 512)
    entry = Path(get_cache_manager(compiled.hash).cache_dir)
    assert {"ttir", "ttgir", "llir", "ptx", "cubin"} <= set(compiled.asm)
    assert compiled.asm["cubin"] == (entry / f"{compiled.name}.cubin").read_bytes()
    assert {Path(path).parent for path in compiled.metadata_group.values()} == {entry}


def test_a_binary_tritons_cache_no_longer_holds_is_tritons_compiled_kernel_from_tritonrts_own_files(rt, recording):
    """Triton's own CompiledKernel of a binary whose Triton cache entry is gone is made from
    files tritonrt keeps (here, with the index off, in a folder of this process's own): the
    same binary and metadata, and nothing written into Triton's cache."""
    from triton.runtime.cache import get_cache_manager
    compiled = rt.launcher(K.add_kernel)[(1, )](pointer(), pointer(), pointer(), 100, 256)
    entry = Path(get_cache_manager(compiled.hash).cache_dir)
    binary = (entry / f"{compiled.name}.cubin").read_bytes()
    metadata = (entry / f"{compiled.name}.json").read_text()
    shutil.rmtree(entry)
    group = compiled.metadata_group  # an attribute of Triton's own CompiledKernel
    files = {Path(path).suffix: Path(path) for path in group.values()}
    assert sorted(files) == [".cubin", ".json"]
    assert files[".cubin"].read_bytes() == binary and files[".json"].read_text() == metadata
    assert files[".cubin"].parent.parent.name == compiled.hash
    assert files[".cubin"].parent.parent.parent.name.startswith("tritonrt-compiled-")
    assert compiled.asm == {"cubin": binary}
    # (Triton's cache manager makes the entry's folder when asked for it, as tritonrt asks.)
    assert not entry.exists() or not any(entry.iterdir()), "tritonrt wrote into Triton's cache"


def test_launcher_subscript_runs_in_c_and_the_python_one_while_torch_compiles(rt, recording, monkeypatch):
    from tritonrt import _wiring, frontend
    launcher = rt.launcher(K.add_kernel)  # (sets _wiring._compiling up)
    ran = []
    monkeypatch.setattr(_wiring, "_compiling", lambda: ran.append(1) or False)  # what Launcher.__getitem__ asks
    args = (pointer(), pointer(), pointer(), 64)
    for _ in range(100):  # long enough for CPython to specialize the subscript, were it able to
        launcher[(1, )](*args)
    assert ran == [] and type(launcher[(1, )]).__name__ == "Bound"
    compiled = launcher[(1, )](*args)
    assert type(compiled[(1, )]).__name__ == "Bound"  # (the Python method: it finds the Kernel)
    setup = frontend._setup
    monkeypatch.setattr(frontend, "_setup", lambda: ran.append(1))  # what CompiledKernel.__getitem__ calls
    before = fake_launches()
    for _ in range(100):  # as FlagGems' libentry relaunches the compiled kernel of a first call
        compiled[(1, )](*args)
    assert ran == [] and fake_launches() == before + 100
    monkeypatch.setattr(frontend, "_setup", setup)

    class Own(frontend.Launcher):
        def __getitem__(self, grid):
            return ("own", grid)

    assert Own(K.add_kernel)[(2, )] == ("own", (2, ))  # a subclass's own __getitem__ is the one called

    torch = pytest.importorskip("torch")
    if "_is_compiling_flag" not in vars(torch.compiler):
        pytest.skip("this torch has no torch.compiler._is_compiling_flag: Launcher.__getitem__ runs in Python")
    monkeypatch.setattr(_wiring, "_compiling", lambda: ran.append(1) or torch.compiler.is_compiling())
    monkeypatch.setattr(torch.compiler, "_is_compiling_flag", True)  # as torch.export sets it while tracing
    traced = launcher[(1, )]
    assert ran == [1] and type(traced).__name__ != "Bound"  # Triton's kernel[grid], which torch traces
    recorded = len(recording.launches)
    traced(*args)
    assert len(recording.launches) == recorded + 1


# --- install(), uninstall(), fallback --------------------------------------------------------------

def routed_attributes():
    """The attributes install() replaces: run of Triton's kernel and decorator classes, and
    KernelInterface.__getitem__."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    return {(cls.__name__, name): cls.__dict__.get(name, "absent")
            for cls, name in ((JITFunction, "run"), (Autotuner, "run"), (Heuristics, "run"),
                              (KernelInterface, "__getitem__"), (JITFunction, "__getitem__"))}


def test_install_routes_every_launch_and_uninstall_restores_triton(rt, recording):
    before = routed_attributes()
    rt.install()
    try:
        assert rt.installed()
        for launch in (lambda: K.add_kernel[(1, )](pointer(), pointer(), pointer(), 8),
                       lambda: K.heuristic_kernel[(1, )](pointer(), pointer(), 8),
                       lambda: K.heuristic_kernel.run(pointer(), pointer(), 8, grid=(1, ), warmup=False),
                       lambda: K.add_kernel.run(pointer(), pointer(), pointer(), 8, grid=(1, ), warmup=False)):
            fake, recorded = fake_launches(), len(recording.launches)
            result = launch()
            assert fake_launches() == fake + 1 and len(recording.launches) == recorded
            assert result.hash
    finally:
        rt.uninstall()
    assert not rt.installed()
    after = routed_attributes()
    assert after == before and all(after[k] is before[k] for k in after)
    assert "__getitem__" not in JITFunction.__dict__ and JITFunction.__getitem__ is KernelInterface.__getitem__
    recorded = len(recording.launches)
    K.add_kernel[(1, )](pointer(), pointer(), pointer(), 8)
    assert len(recording.launches) == recorded + 1


def test_a_decorated_kernel_under_install_runs_its_whole_stack_through_tritonrt(rt, recording, slow_kernels):
    """autotune over heuristics over jit, called as kernel[grid]: tuned and launched by
    tritonrt, the heuristic memoized (Triton's path asks it on every launch), and the tuner's
    best_config, configs_timings and bench_time set as Triton's Autotuner.run sets them."""
    from triton_reference import forget_tuning
    kernel = K.tuned_heuristic_kernel
    forget_tuning(kernel)
    for attribute in ("best_config", "configs_timings", "bench_time"):
        kernel.__dict__.pop(attribute, None)
    rt.install()
    try:
        kernel[(1, )](pointer(), pointer(), 1000)  # tunes
        asked, fake, recorded = len(K.heuristic_calls), fake_launches(), len(recording.launches)
        for _ in range(5):
            result = kernel[(1, )](pointer(), pointer(), 1000)
        assert fake_launches() == fake + 5 and len(recording.launches) == recorded
        assert len(K.heuristic_calls) == asked  # no Python per launch
        ours = kernel.best_config
        assert ours in kernel.configs and result.metadata.num_warps == ours.num_warps
        timings = kernel.configs_timings
        assert min(timings, key=timings.get) is ours and kernel.bench_time > 0
        assert all(len(t) == 3 and t[0] >= 10.0 for t in timings.values())  # 10 ms a launch on the stand-in
    finally:
        rt.uninstall()
    forget_tuning(kernel)
    theirs = kernel[(1, )](pointer(), pointer(), 1000)  # equal timings: both keep the first config
    assert kernel.best_config is ours and theirs.hash == result.hash
    assert set(kernel.configs_timings) == set(timings)  # the configs Triton's path times


def test_a_process_keeps_one_config_per_key_whichever_path_launches(rt, recording, slow_kernels):
    """The config Triton's path chose for a key (its Autotuner.cache) is the one install()
    launches, and the one tritonrt chooses for a new key is where Triton's path takes it after
    uninstall(), without tuning again."""
    from triton_reference import forget_tuning
    kernel = K.tuned_kernel
    forget_tuning(kernel)
    kernel[(1, )](pointer(), pointer(), 5000)  # Triton's path tunes (equal timings: the first config)
    (key, ) = kernel.cache
    kernel.cache[key] = kernel.configs[1]  # as if its timings had chosen the second
    rt.install()
    try:
        ours = kernel[(1, )](pointer(), pointer(), 5000)
        assert kernel.best_config is kernel.configs[1] and ours.metadata.num_warps == kernel.configs[1].num_warps
        kernel[(1, )](pointer(), pointer(), 7000)  # a key only tritonrt has tuned
        chosen = kernel.best_config
    finally:
        rt.uninstall()
    (new_key, ) = set(kernel.cache) - {key}
    assert kernel.cache[new_key] is chosen
    recorded = len(recording.launches)
    kernel[(1, )](pointer(), pointer(), 7000)
    assert len(recording.launches) == recorded + 1 and kernel.best_config is chosen  # no tuning


def launch_counting_its_run(kernel, recording):
    """kernel[(1, )] of a CountingTuner stack: its own run ran once, the launch went through
    tritonrt (the stand-in driver) and not through Triton's launcher."""
    runs, fake, recorded = K.CountingTuner.runs, fake_launches(), len(recording.launches)
    kernel[(1, )](pointer(), pointer(), 1000)
    assert K.CountingTuner.runs == runs + 1
    assert fake_launches() == fake + 1 and len(recording.launches) == recorded


def autotuner_run():
    """Triton's own Autotuner.run, whatever install() put in its place."""
    from triton.runtime.autotuner import Autotuner
    run = Autotuner.__dict__["run"]
    return getattr(run, "__wrapped__", run)


def test_a_tuner_subclass_whose_run_calls_autotuners_launches_through_tritonrt_from_there(rt, recording, slow_kernels,
                                                                                          caplog):
    """A tuner subclass that redefines run and calls Autotuner.run from it (super().run, as fla's
    CachedAutotuner does): under install() its own run runs every call, and the stack from
    Autotuner.run down launches through tritonrt (Triton's Autotuner.run never runs); said once,
    at info."""
    from triton_reference import forget_tuning
    forget_tuning(K.counted_kernel)
    rt.install()
    try:
        with caplog.at_level(logging.INFO, logger="tritonrt"), calls_of(autotuner_run()) as triton_runs:
            for _ in range(3):
                launch_counting_its_run(K.counted_kernel, recording)
                assert K.counted_kernel.best_config is K.counted_kernel.configs[0]
        assert triton_runs == []
    finally:
        rt.uninstall()
    said = [r for r in caplog.records if r.name == "tritonrt" and "CountingTuner" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.INFO
    assert "CountingTuner redefines Autotuner.run" in said[0].getMessage()
    assert "where it calls Autotuner.run (super().run), the stack launches through tritonrt" in said[0].getMessage()
    # tritonrt.launcher, asked for this stack, runs it as Triton's own classes would.
    fake, runs = fake_launches(), K.CountingTuner.runs
    rt.launcher(K.counted_kernel)[(1, )](pointer(), pointer(), 1000)
    assert fake_launches() == fake + 1 and K.CountingTuner.runs == runs
    assert K.counted_kernel.best_config is K.counted_kernel.configs[0]


def test_a_tuner_subclass_that_also_times_its_own_way_keeps_autotuners_run_in_python(rt, recording, caplog):
    """The same subclass redefining _bench too: Autotuner.run would call it, so under install()
    Triton's Autotuner.run runs, and only the kernel under it launches through tritonrt."""
    rt.install()
    try:
        with caplog.at_level(logging.INFO, logger="tritonrt"), calls_of(autotuner_run()) as triton_runs:
            for _ in range(2):
                launch_counting_its_run(K.timing_kernel, recording)
        assert len(triton_runs) == 2
    finally:
        rt.uninstall()
    (said, ) = [r.getMessage() for r in caplog.records if r.name == "tritonrt" and "TimingTuner" in r.getMessage()]
    assert "TimingTuner redefines Autotuner.run, and frontend_kernels.TimingTuner redefines Autotuner._bench" in said
    assert "kernel under them launches through tritonrt" in said


def test_a_config_a_tuner_subclass_puts_in_its_cache_is_launched(rt, recording, slow_kernels):
    """What a subclass's run puts into the tuner's cache before Autotuner.run is what Triton
    launches: one equal to a config of the tuner is taken without tuning (through tritonrt);
    one that is none of its configs sends the call to Triton's Autotuner.run, which launches it."""
    equal = triton.Config({"BLOCK": 64}, num_warps=2)  # the second config, another object
    foreign = triton.Config({"BLOCK": 16}, num_warps=1)
    K.StoreTuner.store.update({2001: equal, 2003: foreign})
    rt.install()
    try:
        with calls_of(autotuner_run()) as triton_runs:
            fake = fake_launches()
            ours = K.stored_kernel[(1, )](pointer(), pointer(), 2001)
            assert fake_launches() == fake + 1 and triton_runs == []  # not tuned: one launch
            assert K.stored_kernel.best_config is K.stored_kernel.configs[1]
            assert ours.metadata.num_warps == 2 and stand_in_driver.last_launch().block[0] == 64
            for _ in range(2):
                runs, fake = len(triton_runs), fake_launches()
                theirs = K.stored_kernel[(1, )](pointer(), pointer(), 2003)
                assert len(triton_runs) == runs + 1 and fake_launches() == fake + 1
                assert K.stored_kernel.best_config is foreign
                assert theirs.metadata.num_warps == 1 and stand_in_driver.last_launch().block[0] == 32
    finally:
        rt.uninstall()
        K.StoreTuner.store.clear()


def test_a_tuners_best_config_is_set_again_after_the_caller_changed_it(rt, recording, slow_kernels):
    """Triton's Autotuner.run sets best_config on every call; tritonrt writes it only where it
    is not already that config, so a value the caller put there is replaced by the next launch."""
    from triton_reference import forget_tuning
    forget_tuning(K.tuned_kernel)
    launcher = rt.launcher(K.tuned_kernel)
    launcher[(1, )](pointer(), pointer(), 3000)  # tunes
    chosen = K.tuned_kernel.best_config
    K.tuned_kernel.best_config = None
    launcher[(1, )](pointer(), pointer(), 3000)
    assert chosen is not None and K.tuned_kernel.best_config is chosen
    del K.tuned_kernel.best_config
    launcher[(1, )](pointer(), pointer(), 3000)
    assert K.tuned_kernel.best_config is chosen


def test_an_object_whose_class_names_tensor_is_read_through_its_data_ptr(rt, recording):
    """isinstance() believes an object whose __class__ says torch.Tensor; tritonrt reads a
    tensor's storage only where the object's type is torch.Tensor's or a subclass's, and reads
    such a stand-in as any other object with data_ptr() and dtype."""
    torch = pytest.importorskip("torch")

    class NamesTensor(HostPointer):

        @property
        def __class__(self):
            return torch.Tensor

    named = NamesTensor(0x50000, "float32")
    assert isinstance(named, torch.Tensor)
    rt.launcher(K.add_kernel)[(1, )](named, pointer(0x60000), pointer(0x70000), 8)
    launch = stand_in_driver.last_launch()
    assert launch.name.decode().startswith("add_kernel")
    assert [int.from_bytes(p, "little") for p in launch.parameters()[:3]] == [0x50000, 0x60000, 0x70000]


def test_a_descriptor_that_rounds_fp32_to_tf32_goes_to_triton(rt, recording, caplog):
    """Triton 3.9's descriptors may ask to round fp32 to tf32, which tritonrt's descriptors do
    not: such a call goes to Triton's path, saying why; the same kernel's descriptors that do
    not ask (of the same type, or of Triton's own) launch through tritonrt before and after."""
    import dataclasses
    from triton.tools.tensor_descriptor import TensorDescriptor

    @dataclasses.dataclass
    class Rounding(TensorDescriptor):
        round_f32_to_tf32: bool = False

    def rounding(address, rounds):
        return Rounding(pointer(address, "float16"), [64, 128], [128, 1], [32, 64], "zero", rounds)

    launcher = rt.launcher(D.scale_2d)
    with caplog.at_level(logging.WARNING, logger="tritonrt"):
        for given, through_tritonrt in [((descriptor(0x10000), descriptor(0x20000)), True),
                                        ((rounding(0x10000, False), rounding(0x20000, False)), True),
                                        ((rounding(0x10000, True), descriptor(0x20000)), False),
                                        ((descriptor(0x10000), rounding(0x20000, True)), False),
                                        ((descriptor(0x10000), descriptor(0x20000)), True)]:
            fake, recorded = fake_launches(), len(recording.launches)
            launcher[(2, 2)](*given, 2.0, BLOCK_M=32, BLOCK_N=64)
            assert (fake_launches(), len(recording.launches)) == ((fake + 1, recorded) if through_tritonrt else
                                                                  (fake, recorded + 1))
    messages = [r.getMessage() for r in caplog.records if r.name == "tritonrt"]
    assert len(messages) == 1 and "a tensor descriptor that rounds fp32 to tf32" in messages[0]


def test_a_descriptor_field_its_class_makes_a_property_is_read_through_it(rt, recording):
    """A descriptor class may make a field a property over what its __init__ stored: tritonrt
    reads the field as Python does, through the property, from the start for a class that has
    one and from the next call for a class given one after a launch (so that no shortcut in
    how a class's fields are read outlives a change to the class)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    def halving(self):  # the block shape kept in __dict__, halved
        return [b // 2 for b in self.__dict__["block_shape"]]

    def keep(self, value):
        self.__dict__["block_shape"] = value

    class Halved(TensorDescriptor):
        block_shape = property(halving, keep)

    class LaterHalved(TensorDescriptor):
        pass

    def tiles(cls):
        given = [cls(pointer(0x10000 * (i + 1), "float16"), [64, 128], [128, 1], [32, 64]) for i in range(2)]
        fake = fake_launches()
        result = rt.launcher(D.scale_2d)[(2, 2)](*given, 2.0, BLOCK_M=16, BLOCK_N=32)
        assert fake_launches() == fake + 1
        return [tuple(m["block_size"]) for m in result.metadata.tensordesc_meta]

    assert tiles(TensorDescriptor) == [(32, 64), (32, 64)]
    assert tiles(Halved) == [(16, 32), (16, 32)]
    assert tiles(LaterHalved) == [(32, 64), (32, 64)]
    LaterHalved.block_shape = property(halving, keep)
    assert tiles(LaterHalved) == [(16, 32), (16, 32)]
    assert tiles(TensorDescriptor) == [(32, 64), (32, 64)]


def test_a_fallback_is_logged_once_per_kernel_with_its_reason(rt, recording, caplog):
    from triton import knobs
    hook = lambda metadata: None  # noqa: E731
    knobs.runtime.launch_enter_hook.add(hook)
    try:
        k = rt.launcher(K.Holder.copy_kernel)
        with caplog.at_level(logging.WARNING, logger="tritonrt"):
            for _ in range(3):
                fake, recorded = fake_launches(), len(recording.launches)
                k[(1, )](pointer(), pointer(), 8, BLOCK=16)
                assert fake_launches() == fake and len(recording.launches) == recorded + 1
    finally:
        knobs.runtime.launch_enter_hook.remove(hook)
    messages = [r.getMessage() for r in caplog.records if r.name == "tritonrt"]
    assert len(messages) == 1 and "launch hook" in messages[0] and "copy_kernel" in messages[0]
    fake = fake_launches()
    k[(1, )](pointer(), pointer(), 8, BLOCK=16)
    assert fake_launches() == fake + 1  # the hook gone, tritonrt launches again


def test_kernels_made_inside_a_function_launch_through_tritonrt_each_its_own_binary(rt, recording, caplog):
    args = (pointer(), pointer(0x20000), 100)
    doubled, tripled = K.scaled_copy_made_for(2.0), K.scaled_copy_made_for(3.0)
    assert doubled.fn.__qualname__ == tripled.fn.__qualname__
    with caplog.at_level(logging.WARNING, logger="tritonrt"):
        fake, recorded = fake_launches(), len(recording.launches)
        ours = [rt.launcher(k)[(2, )](*args, BLOCK=64) for k in (doubled, tripled, doubled, tripled)]
    assert fake_launches() == fake + 4 and len(recording.launches) == recorded
    assert [r.getMessage() for r in caplog.records if r.name == "tritonrt"] == []
    theirs = [k[(2, )](*args, BLOCK=64) for k in (doubled, tripled)]
    assert [c.hash for c in ours] == [c.hash for c in theirs] * 2
    assert theirs[0].hash != theirs[1].hash


def test_a_decorated_kernel_made_inside_a_function_runs_its_stack_through_tritonrt_under_install(rt, recording):
    calls = []

    def block_for(args):
        calls.append(args["n"])
        return 64 if args["n"] > 64 else 32

    kernel = triton.heuristics({"BLOCK": block_for})(K.scaled_copy_made_for(5.0))
    rt.install()
    try:
        fake, recorded = fake_launches(), len(recording.launches)
        results = [kernel[(2, )](pointer(), pointer(0x20000), n) for n in (100, 100, 100, 10)]
        assert fake_launches() == fake + 4 and len(recording.launches) == recorded
    finally:
        rt.uninstall()
    assert calls == [100, 10]  # memoized per value read, as for a kernel its module names
    assert [r.hash for r in results[:3]] == [results[0].hash] * 3
    assert results[3].hash == kernel[(2, )](pointer(), pointer(0x20000), 10).hash != results[0].hash


GENERATED_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def generated_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, scalar_fn(tl.load(x_ptr + offsets, mask=mask)), mask=mask)
"""


def test_a_kernel_of_a_module_kept_out_of_sys_modules_launches_through_tritonrt(rt, recording, tmp_path, caplog):
    # As FlagGems loads the kernels it generates: from a file, not listed in sys.modules, then
    # the globals of the scalar function's module copied in (its __name__ and __file__ too).
    import importlib.util
    path = tmp_path / "_generated_pointwise.py"
    path.write_text(GENERATED_KERNEL)
    spec = importlib.util.spec_from_file_location("_generated_pointwise", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.__dict__.update(K.tripled.fn.__globals__)
    module.scalar_fn = K.tripled
    args = (pointer(), pointer(0x20000), 100)
    with caplog.at_level(logging.WARNING, logger="tritonrt"):
        fake, recorded = fake_launches(), len(recording.launches)
        ours = rt.launcher(module.generated_kernel)[(2, )](*args, BLOCK=64)
        again = rt.launcher(module.generated_kernel)[(2, )](*args, BLOCK=64)
    assert fake_launches() == fake + 2 and len(recording.launches) == recorded
    assert [r.getMessage() for r in caplog.records if r.name == "tritonrt"] == []
    assert "_generated_pointwise" not in sys.modules
    theirs = module.generated_kernel[(2, )](*args, BLOCK=64)
    assert ours.hash == again.hash == theirs.hash


REDEFINED_KERNEL = """
import triton
import triton.language as tl


@triton.jit
def scaled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * {factor}, mask=mask)
"""


def launched_alike(rt, kernel):
    """Triton's launch of `kernel`, then tritonrt's (on the stand-in driver): the hash of both."""
    args = (pointer(), pointer(0x20000), 100)
    theirs = kernel[(2, )](*args, BLOCK=64)
    fake = fake_launches()
    ours = rt.launcher(kernel)[(2, )](*args, BLOCK=64)
    assert fake_launches() == fake + 1
    assert ours.hash == theirs.hash
    return ours.hash


def test_a_kernel_redefined_under_its_name_launches_as_redefined(rt, recording, tmp_path, monkeypatch):
    # A module reloaded after an edit, or a notebook cell run again: the kernel of the same
    # module and name is a new one, with its own hash, never the binary of the one before.
    import importlib
    path = tmp_path / "_redefined_kernels.py"
    path.write_text(REDEFINED_KERNEL.format(factor=2))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "_redefined_kernels", raising=False)
    module = importlib.import_module("_redefined_kernels")
    hashes = []
    for factor in (2, 30, 2):
        if hashes:
            path.write_text(REDEFINED_KERNEL.format(factor=factor))
            importlib.reload(module)
        hashes.append(launched_alike(rt, module.scaled))
    assert hashes[0] != hashes[1] and hashes[0] == hashes[2]


# What a child process of the tests below runs first: argv[1:3] the tritonrt package's folder
# and this one's, then launches on the recording driver; argv[3:] are the script's.
CHILD_PREAMBLE = """
import sys
sys.path[:0] = sys.argv[1:3]
import tritonrt
from triton.runtime.driver import driver
from triton_reference import HostPointer, RecordingDriver, parse_target
driver.set_active(RecordingDriver(parse_target("cuda:90")))
args = (HostPointer(0x10000, "float32"), HostPointer(0x20000, "float32"), 100)


def print_both_hashes(kernel):
    theirs = kernel[(2, )](*args, BLOCK=64)
    ours = tritonrt.launcher(kernel)[(2, )](*args, BLOCK=64)
    print(ours.hash, theirs.hash)
"""


def in_a_child(rt, tmp_path, script, *argv):
    """Runs CHILD_PREAMBLE and `script` in a process of its own, with an index and a Triton
    cache of the test's own and tritonrt's log at info: (what it printed, split; its log)."""
    env = {**os.environ, "TRITONRT_CACHE_DIR": str(tmp_path / "index"), "TRITON_CACHE_DIR": str(tmp_path / "triton"),
           "TRITONRT_LOG": "info"}
    env.pop("TRITONRT_INDEX")  # conftest.py turns the index off; here it is the subject
    done = subprocess.run([sys.executable, "-c", CHILD_PREAMBLE + script, str(Path(rt.__file__).parents[1]),
                           str(Path(__file__).parent), *argv], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split(), done.stderr


INDEX_SERVED = """
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[2]).parent / "kernels"))
import frontend_kernels as K
p = HostPointer(0x10000, "float32")
compiled = tritonrt.launcher(K.add_kernel)[(1, )](p, p, p, 100, 256)
print(compiled.hash, *(sorted(compiled.metadata_group.values()) if len(sys.argv) > 3 else []))
"""


MANY_INPUTS = """
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[2]).parent / "kernels"))
import decorator_cases as D
p = HostPointer(0x10000, "float32")
launch = tritonrt.launcher(D.many_inputs)
hashes = [launch[(1, )](p, n, 1).hash for n in range(1, 301)]
for sizes in (range(300, 0, -1), range(1, 301)):  # each call the second time remembered whole, then recalled
    assert [launch[(1, )](p, n, 1).hash for n in sizes] == [hashes[n - 1] for n in sizes]
print(D.calls["MANY"], *hashes)
"""


def test_a_heuristic_seen_with_more_inputs_than_the_index_keeps_runs_once_per_input_in_each_process(rt, tmp_path):
    # A heuristic of 300 inputs, called for each three times (the last two from memory, the
    # last recalling the call whole): Python runs it once per input, and each call launches the
    # same kernel as that input's first; the index keeps the first 256 values, which serve a
    # second process, and that process runs the heuristic for the other 44 only.
    first, log = in_a_child(rt, tmp_path, MANY_INPUTS)
    assert first[0] == "300", log
    second, log = in_a_child(rt, tmp_path, MANY_INPUTS)
    assert second[0] == "44", log
    assert second[1:] == first[1:]
    assert len(set(first[1:])) > 1  # the heuristic's two values are two kernels


def test_a_binary_the_index_served_is_tritons_compiled_kernel_from_files_beside_the_index(rt, tmp_path):
    # A first process compiles (Triton's cache and the index); Triton's cache is emptied; a
    # second is served from the index, and its Triton CompiledKernel reads tritonrt's copy.
    (first, ), _ = in_a_child(rt, tmp_path, INDEX_SERVED)
    shutil.rmtree(tmp_path / "triton")
    (second, *paths), log = in_a_child(rt, tmp_path, INDEX_SERVED, "files")
    assert second == first
    assert "compiling" not in log.lower(), log
    files = sorted(Path(path) for path in paths)
    assert [f.suffix for f in files] == [".cubin", ".json"]
    assert all(f.parent.parent == tmp_path / "index" / "compiled" / first for f in files)
    assert not (tmp_path / "triton").exists() or not any((tmp_path / "triton").rglob("*.cubin"))


FACTORY_KERNEL = """
from pathlib import Path
sys.path.insert(0, str(Path(sys.argv[2]).parent / "kernels"))
import frontend_kernels as K
print_both_hashes(K.scaled_copy_made_for(float(sys.argv[3])))
"""


def test_a_kernel_made_inside_a_function_is_not_indexed_and_each_process_launches_its_own(rt, tmp_path):
    # No other process can name such a kernel: the index keeps nothing of it, and a later
    # process compiles it again (from Triton's cache), binaries per closure constant.
    (ours, theirs), log = in_a_child(rt, tmp_path, FACTORY_KERNEL, "2.0")
    assert ours == theirs
    assert "scaled_copy" in log and "not indexed" in log, log
    (again, theirs_again), _ = in_a_child(rt, tmp_path, FACTORY_KERNEL, "2.0")
    assert again == theirs_again == ours
    (other, theirs_other), _ = in_a_child(rt, tmp_path, FACTORY_KERNEL, "3.0")
    assert other == theirs_other != ours


EDITED_ON_DISK = """
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import _edited_kernels as module
if len(sys.argv) > 4:  # the file edited after the import, the module not reloaded
    Path(module.__file__).write_text(sys.argv[4])
print_both_hashes(module.scaled)
"""


# The same kernel with its factor in a module-level constexpr: written as a literal (the
# index compares it with the file's text) and computed (the file's text does not tell it).
GLOBAL_KERNEL = """
import triton
import triton.language as tl

FACTOR = tl.constexpr({factor})


@triton.jit
def scaled(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * FACTOR, mask=mask)
"""
EDITS = {
    "the kernel's code": lambda factor: REDEFINED_KERNEL.format(factor=factor),
    "a global's literal": lambda factor: GLOBAL_KERNEL.format(factor=factor),
    "a computed global": lambda factor: GLOBAL_KERNEL.format(factor=f'int("{factor}")'),
}


@pytest.mark.parametrize("edit", EDITS)
def test_a_kernel_edited_on_disk_but_not_reloaded_leaves_the_index_alone(rt, tmp_path, edit):
    # A process runs the kernel it imported, as Triton does, after its file was edited; a
    # later process that imports the edited file launches the edited kernel, never a binary
    # the first process compiled from its older code and recorded under the file as it is now.
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    source = kernels / "_edited_kernels.py"
    older, newer = EDITS[edit](2), EDITS[edit](30)

    def run(*edit):
        return in_a_child(rt, tmp_path, EDITED_ON_DISK, str(kernels), *edit)

    def indexed():
        return [p for p in (tmp_path / "index").rglob("kernel") if str(source).encode() in p.read_bytes()]

    def write_before_the_next_process(text):
        source.write_text(text)
        an_hour_ago = time.time() - 3600  # as a library's files are: older than what imports them
        os.utime(source, (an_hour_ago, an_hour_ago))

    write_before_the_next_process(older)
    (ours, theirs), said = run(newer)  # runs the factor-2 kernel it imported, the file now says 30
    assert ours == theirs
    filed_by_the_first = indexed()
    (ours_after, theirs_after), said_after = run()
    assert ours_after == theirs_after != theirs, said_after
    assert "not indexed" not in said_after, said_after
    assert "not indexed" in said and filed_by_the_first == []
    assert len(indexed()) == 1  # a file older than the process: checked or not, the kernel is filed
    write_before_the_next_process(older)
    assert run()[0] == [theirs, theirs]


NOTEBOOK_CELL = """
import linecache
cell, name = sys.argv[3], "<ipython-input-1>"  # as IPython runs a cell: its lines in linecache, no file
linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
exec(compile(cell, name, "exec"), globals())
print_both_hashes(scaled)
"""


def test_notebook_kernels_of_one_name_in_two_processes_launch_their_own(rt, tmp_path):
    # A kernel defined in a notebook cell has no file: nothing tells one process's
    # __main__.scaled from another's, so neither may be served what the other compiled.
    hashes = []
    for factor in (2, 30):
        (ours, theirs), _ = in_a_child(rt, tmp_path, NOTEBOOK_CELL, REDEFINED_KERNEL.format(factor=factor))
        assert ours == theirs
        hashes.append(theirs)
    assert hashes[0] != hashes[1]


def test_two_unlisted_modules_of_one_name_launch_their_own_kernels(rt, recording, tmp_path, caplog):
    # FlagGems names a generated module by its scalar function and rank, while the file it
    # loads (and the code in it) also depends on its code generation options: one module
    # name, one kernel name, two kernels.
    import importlib.util
    modules = []
    for variant, factor in (("plain", 2), ("block_pointer", 30)):
        path = tmp_path / f"_one_name_{variant}.py"
        path.write_text(REDEFINED_KERNEL.format(factor=factor))
        spec = importlib.util.spec_from_file_location("_one_name", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules.append(module)
    hashes = []
    with caplog.at_level(logging.WARNING, logger="tritonrt"):
        for module in modules + modules:
            hashes.append(launched_alike(rt, module.scaled))
    assert [r.getMessage() for r in caplog.records if r.name == "tritonrt"] == []
    assert hashes[0] != hashes[1] and hashes[:2] == hashes[2:]
    assert "_one_name" not in sys.modules


def test_a_named_tuple_goes_to_triton_saying_why(rt, recording, caplog):
    import collections
    Pair = collections.namedtuple("Pair", ["src", "scale"])  # Triton keeps its type: the kernel sees the names
    with caplog.at_level(logging.WARNING, logger="tritonrt"):
        fake, recorded = fake_launches(), len(recording.launches)
        rt.launcher(T.tuple_unspecialized)[(1, )](Pair(pointer(), 3), pointer(0x3000), 64, BLOCK=64)
    assert fake_launches() == fake and len(recording.launches) == recorded + 1
    messages = [r.getMessage() for r in caplog.records if r.name == "tritonrt"]
    assert len(messages) == 1 and "named tuple" in messages[0], messages


def test_a_value_tritonrt_does_not_pass_goes_to_triton(rt, recording, caplog):
    class Pointerish:  # a data_ptr() without a dtype: Triton raises, and so must the launch
        def data_ptr(self):
            return 0x1000

    with pytest.raises(Exception) as theirs:
        K.add_kernel[(1, )](Pointerish(), pointer(), pointer(), 4)
    with pytest.raises(Exception) as ours:
        rt.launcher(K.add_kernel)[(1, )](Pointerish(), pointer(), pointer(), 4)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_install_from_the_environment(tritonrt_package):
    """TRITONRT_INSTALL=1 with the package's .pth: install() runs once triton is imported."""
    site = Path(tritonrt_package.__file__).parents[1]
    code = ("import site, sys; site.addsitedir(sys.argv[1]); import tritonrt.frontend as f; "
            "assert not f.installed(); import triton; from triton.runtime.jit import JITFunction; "
            "print(f.installed(), type(JITFunction.__dict__['run']).__name__)")
    env = {**os.environ, "TRITONRT_INSTALL": "1"}
    done = subprocess.run([sys.executable, "-c", code, str(site)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "RoutedRun"]
    for setting in ("0", "off", "OFF", "false", "No", "maybe"):  # any case; anything else is off, and said
        env["TRITONRT_INSTALL"] = setting
        done = subprocess.run([sys.executable, "-c", code.replace("print(f.installed()", "print((f.installed(),)"),
                               str(site)], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.split()[0] == "(False,)", (setting, done.stderr)
        assert ("is not a switch tritonrt reads" in done.stderr) == (setting == "maybe"), done.stderr
    env["TRITONRT_INSTALL"] = "Yes"
    done = subprocess.run([sys.executable, "-c", code, str(site)], env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["True", "RoutedRun"], done.stderr


# --- third-party kernel libraries (from PyPI), as they launch their kernels -----------------------

def library_module(name):
    import importlib
    os.environ.setdefault("GEMS_VENDOR", "nvidia")  # FlagGems asks no GPU which vendor it is
    os.environ.setdefault("FLAGGEMS_DB_URL", "sqlite:///:memory:")
    return importlib.import_module(name)


# name: (module, kernel, grid, make (args, kwargs)); the calls are the libraries' own.
LIBRARY_CALLS = {
    "liger rms_norm (plain, options)": (
        "liger_kernel.ops.rms_norm", "_rms_norm_forward_kernel", (4, ),
        lambda: ((pointer(0x10000), 512, pointer(0x20000), 512, pointer(0x30000), 1, pointer(0x40000), 1, 512, 1e-6,
                  0.0, 1), dict(elementwise_affine=True, BLOCK_SIZE=512, num_warps=4))),
    "liger dyt (autotune)": (
        "liger_kernel.ops.dyt", "_dyt_fwd_kernel", lambda meta: (triton.cdiv(4096, meta["BLOCK_N"]), 8),
        lambda: ((pointer(0x10000), pointer(0x20000), pointer(0x30000), pointer(0x40000), pointer(0x50000), True,
                  4096), {})),
    "flag_gems softmax (libentry, heuristics)": (
        "flag_gems.ops.softmax", "softmax_kernel_inner", (8, 1, 1),
        lambda: ((pointer(0x10000, "float16"), pointer(0x20000, "float16"), 8, 1000), {})),
    "fla cumsum (heuristics, cached autotuner, keywords)": (
        "fla.ops.utils.cumsum", "chunk_local_cumsum_scalar_kernel", (4 * 2 * 3, ),
        lambda: ((), dict(s=pointer(0x10000), o=pointer(0x20000), scale=None, cu_seqlens=None, chunk_indices=None,
                          T=256, B=2, H=3, BT=64, REVERSE=False, USE_GRAPH=False))),
}


@pytest.fixture
def no_torch_gpu(monkeypatch):
    """torch as on a machine without a GPU, though the stand-in libcuda is loaded (the libraries
    ask torch about devices at import, and FlagGems' libentry for the current device)."""
    import torch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H100 (stand-in)")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))


@pytest.mark.parametrize("name", sorted(LIBRARY_CALLS))
def test_library_kernels_compile_what_tritons_launch_compiles(rt, recording, slow_kernels, no_torch_gpu, name):
    from triton_reference import forget_tuning
    module, attribute, grid, make = LIBRARY_CALLS[name]
    kernel = getattr(library_module(module), attribute)
    if hasattr(kernel, "kernel_cache") and not kernel.kernel_cache:  # FlagGems' libentry: one cache per device
        kernel.kernel_cache = ({}, )
    args, kwargs = make()
    assert rt.launcher(kernel)._kernel.reason is None
    forget_tuning(kernel)
    before, recorded = fake_launches(), len(recording.launches)
    ours = rt.launcher(kernel)[grid](*args, **kwargs)  # an autotuner's tuning launches too
    assert fake_launches() > before and len(recording.launches) == recorded
    theirs = kernel[grid](*args, **kwargs)
    assert len(recording.launches) == recorded + 1
    if isinstance(theirs, tuple):  # FlagGems' libentry returns (kernel, constexprs), and so does its launcher
        assert isinstance(ours, tuple) and ours[1] == theirs[1]
        ours, theirs = ours[0], theirs[0]
    assert ours.hash == theirs.hash


@pytest.mark.parametrize("name", sorted(LIBRARY_CALLS))
def test_library_kernels_under_install_launch_through_tritonrt_every_call(rt, recording, slow_kernels, no_torch_gpu,
                                                                          caplog, name):
    """kernel[grid] as the library calls it, under install(): every launch through tritonrt; a
    stack tritonrt reproduces (autotune, heuristics, FlagGems' libentry) runs no decorator
    Python (libentry's run and fla's CachedAutotuner.run, Autotuner.run while fla's
    FLA_CACHE_MODE is DISABLED, are never called; nor is Triton's Autotuner.run) and returns
    what Triton's path returns (libentry: its (kernel, constexprs))."""
    from triton_reference import forget_tuning
    module, attribute, grid, make = LIBRARY_CALLS[name]
    kernel = getattr(library_module(module), attribute)
    if hasattr(kernel, "kernel_cache") and not kernel.kernel_cache:
        kernel.kernel_cache = ({}, )
    args, kwargs = make()
    runs = []
    own = next((layer for layer in layers_of(kernel) if type(layer).__name__ in ("LibEntry", "CachedAutotuner")), None)
    if own is not None:  # counted, still the class's own
        original_run = type(own).run
        type(own).run = lambda self, *a, **k: runs.append(1) or original_run(self, *a, **k)
    forget_tuning(kernel)
    rt.install()
    try:
        with caplog.at_level(logging.INFO, logger="tritonrt"), calls_of(autotuner_run()) as triton_runs:
            kernel[grid](*args, **kwargs)  # tunes where it is tuned
            fake, recorded = fake_launches(), len(recording.launches)
            for _ in range(3):
                ours = kernel[grid](*args, **kwargs)
            assert fake_launches() == fake + 3 and len(recording.launches) == recorded
        assert triton_runs == []
    finally:
        rt.uninstall()
        if own is not None:
            type(own).run = original_run
    assert runs == []
    assert kernel._tritonrt_kernel.reason is None, kernel._tritonrt_kernel.reason
    if hasattr(kernel, "kernel_cache"):
        kernel.kernel_cache = ({}, )
    theirs = kernel[grid](*args, **kwargs)
    if isinstance(theirs, tuple):  # FlagGems' libentry returns (kernel, constexprs)
        assert isinstance(ours, tuple) and ours[1] == theirs[1]
        ours, theirs = ours[0], theirs[0]
    assert ours.hash == theirs.hash



def layers_of(kernel):
    """`kernel` and each object under it in .fn, outermost first."""
    while kernel is not None:
        yield kernel
        kernel = getattr(kernel, "fn", None)


def forget_kernels(kernel):
    """Drops the Kernels install() kept on each layer of `kernel`: the next launch makes them anew."""
    for layer in layers_of(kernel):
        for attribute in ("_tritonrt_kernel", "_tritonrt_base_kernel"):
            layer.__dict__.pop(attribute, None)


def test_fla_kernels_with_a_config_cache_mode_keep_their_tuners_run_under_install(rt, recording, slow_kernels,
                                                                                  no_torch_gpu, monkeypatch, caplog):
    """Where fla's FLA_CACHE_MODE is not DISABLED, CachedAutotuner.run looks configs up in fla's
    files: under install() it runs every call, said once, and the stack from its call of
    Autotuner.run down is tritonrt's (Triton's Autotuner.run never runs)."""
    from triton_reference import forget_tuning
    module, attribute, grid, make = LIBRARY_CALLS["fla cumsum (heuristics, cached autotuner, keywords)"]
    kernel = getattr(library_module(module), attribute)
    cache = library_module("fla.ops.utils.cache")
    monkeypatch.setattr(cache, "FLA_CACHE_MODE", cache.FlaCacheMode.STRICT)
    monkeypatch.setenv("FLA_CONFIG_DIR", str(Path(os.devnull)))  # no config files: Triton's tuning
    tuner = next(layer for layer in layers_of(kernel) if type(layer).__name__ == "CachedAutotuner")
    forget_kernels(kernel)  # made afresh for this mode
    args, kwargs = make()
    runs = []
    original_run = type(tuner).run
    monkeypatch.setattr(type(tuner), "run", lambda self, *a, **k: runs.append(1) or original_run(self, *a, **k))
    forget_tuning(kernel)
    rt.install()
    try:
        with caplog.at_level(logging.INFO, logger="tritonrt"), calls_of(autotuner_run()) as triton_runs:
            for _ in range(4):
                fake, recorded = fake_launches(), len(recording.launches)
                kernel[grid](*args, **kwargs)
                assert fake_launches() > fake and len(recording.launches) == recorded
        assert triton_runs == [] and len(runs) == 4
    finally:
        rt.uninstall()
        forget_kernels(kernel)
    said = [r.getMessage() for r in caplog.records if r.name == "tritonrt" and "CachedAutotuner" in r.getMessage()]
    assert len(said) == 1 and "redefines Autotuner.run: fla's FLA_CACHE_MODE is STRICT, not DISABLED" in said[0]



def dreglu_call(m):
    """FlagGems' dreglu kernel (libentry over its LibTuner, keyed on M and N) as reglu's backward
    calls it, for an m x 256 fp16 gradient: (kernel, its LibTuner, grid, args, LibTuner's key)."""
    kernel = library_module("flag_gems.fused.reglu").dreglu_kernel
    if not kernel.kernel_cache:  # one cache per device: none is counted without a GPU
        kernel.kernel_cache = ({}, )
    tuner = kernel.fn
    args = (pointer(0x10000, "float16"), pointer(0x20000, "float16"), pointer(0x30000, "float16"), m, 256, 256, 1,
            512, 1, 512, 1)
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]), triton.cdiv(256, meta["BLOCK_N"]))  # noqa: E731
    own_key = tuner.get_key({k: v for k, v in zip(tuner.arg_names, args)})
    return kernel, tuner, grid, args, own_key


def test_flag_gems_libtuner_under_install_takes_its_databases_choice_and_leaves_a_key_it_lacks_to_its_run(
        rt, recording, slow_kernels, no_torch_gpu, monkeypatch, caplog):
    """FlagGems' LibTuner keeps its choices in its database under its own key and tunes a key it
    lacks with its policy. Under install(): a key it holds launches its config through tritonrt
    from the first call, its run never called; a key it lacks goes to its run once (which
    tunes, here with stand-in timings, and records the choice), then tritonrt launches that
    choice with no Python; best_config is the config that ran; no warning; Triton's path
    launches the same binaries."""
    kernel, tuner, grid, args, held = dreglu_call(64)
    LibTuner = library_module("flag_gems.utils.libentry").LibTuner
    runs = []
    original_run = LibTuner.run
    monkeypatch.setattr(LibTuner, "run", lambda self, *a, **k: runs.append(1) or original_run(self, *a, **k))
    assert len(tuner.configs) > 2
    tuner.cache[held] = triton.Config(dict(tuner.configs[2].kwargs), num_warps=tuner.configs[2].num_warps,
                                      num_stages=tuner.configs[2].num_stages)  # as its database gives it back
    _, _, _, lacking_args, lacking = dreglu_call(96)
    grids = {held: grid, lacking: (96, 1)}  # a grid function holds the GIL through the launch; a tuple does not
    assert lacking != held and tuner.cache.get(lacking) is None
    chosen = len(tuner.configs) - 1
    timed = []  # its policy times each config it keeps: the stand-in says the last is fastest
    monkeypatch.setattr(tuner, "_bench", lambda *a, config, **k: timed.append(config) or
                        [1.0 if config is tuner.configs[chosen] else 2.0] * 3, raising=False)
    forget_kernels(kernel)
    rt.install()
    results = {}
    try:
        with caplog.at_level(logging.INFO, logger="tritonrt"), calls_of(autotuner_run()) as triton_runs:
            for call_args, key in ((args, held), (lacking_args, lacking)):
                for _ in range(3):
                    fake, recorded = fake_launches(), len(recording.launches)
                    results[key] = kernel[grids[key]](*call_args)
                    assert fake_launches() == fake + 1 and len(recording.launches) == recorded
                    assert tuner.best_config is tuner.configs[2 if key is held else chosen]
                if key is held:
                    assert runs == [] and timed == []
        assert triton_runs == []
    finally:
        rt.uninstall()
    assert runs == [1] and len(timed) == len(tuner.configs)  # the lacking key's first call, which tuned
    assert tuner.cache.get(lacking).all_kwargs() == tuner.configs[chosen].all_kwargs()
    assert kernel._tritonrt_kernel.reason is None
    assert [r.getMessage() for r in caplog.records if r.name == "tritonrt" and r.levelno >= logging.WARNING] == []
    for call_args, key, config in ((args, held, 2), (lacking_args, lacking, chosen)):
        made = tuner.configs[config]
        assert {k: results[key][1].get(k) for k in made.kwargs} == made.kwargs
        assert results[key][1].get("num_warps") == made.num_warps
        kernel.kernel_cache = ({}, )
        runs.clear()
        theirs = kernel[grids[key]](*call_args)
        assert runs == [1] and theirs[1] == results[key][1] and theirs[0].hash == results[key][0].hash


# --- without a GPU ---------------------------------------------------------------------------------

INTERPRETED = """
import sys
sys.path[:0] = sys.argv[1:2]
import torch
import triton
import triton.language as tl
import tritonrt


@triton.jit
def scale(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


x = torch.arange(100, dtype=torch.float32)
out = torch.zeros_like(x)
launch = tritonrt.launcher(scale)
print(repr(launch))
launch[(2, )](x, out, 100, 2.0, BLOCK=64)
print(torch.equal(out, 2 * x))
"""


def test_under_triton_interpret_the_launcher_hands_the_kernel_to_tritons_interpreter(rt, tmp_path):
    pytest.importorskip("torch")
    env = {**os.environ, "TRITON_INTERPRET": "1", "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    (tmp_path / "scale.py").write_text(INTERPRETED)
    done = subprocess.run([sys.executable, tmp_path / "scale.py", str(Path(rt.__file__).parents[1])], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    shown, equal = done.stdout.splitlines()
    assert shown.startswith("tritonrt.launcher(<triton.runtime.interpreter.InterpretedFunction"), shown
    assert equal == "True"


def test_without_a_gpu_a_cpu_tensor_is_said_to_need_one_in_tritonrts_words(rt, tmp_path):
    pytest.importorskip("torch")
    # The machine as it is: without the stand-in driver ctest puts on the library path.
    env = {name: value for name, value in os.environ.items() if name not in ("LD_LIBRARY_PATH", "TRITONRT_TEST_FAKE_CUDA")}
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    probe = subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"], env=env,
                           capture_output=True)
    if probe.returncode == 0:
        pytest.skip("this machine has a CUDA driver: the message is for machines without one")
    (tmp_path / "scale.py").write_text(INTERPRETED)
    done = subprocess.run([sys.executable, tmp_path / "scale.py", str(Path(rt.__file__).parents[1])], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0  # Triton's own path fails too, in its words
    assert "kernel '__main__.scale' is launched by Triton's own path: parameter 'x_ptr' is a tensor that is not on " \
           "a CUDA device" in done.stderr, done.stderr
    assert "so Triton's path cannot launch it either. Without a GPU, TRITON_INTERPRET=1 runs kernels in Triton's " \
           "interpreter" in done.stderr, done.stderr
