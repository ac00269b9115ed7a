"""Host cost of a Triton kernel launched from Python (cache hit): tritonrt's launcher against
Triton's `kernel[grid]`, Triton's `CompiledKernel.run` and torch's static launcher, at 3 / 8 /
19 arguments (bench/kernels.py) and on third-party libraries' kernels as they launch them
(through the launcher, under tritonrt.install() and on Triton's path, then the same calls from
C++ through tritonrt); then the libraries' own functions (their Python, allocations and
launch) on Triton's path and under tritonrt.install(). The C++ rows of the 3 / 8 / 19-argument
kernels (tritonrt from C++, a bare cuLaunchKernel) are read from
bench/results/launch_overhead.json, written by tritonrt_bench_launch on the same machine;
those of the descriptor kernels whose tiles a config's pre_hook sets (bench/kernels.py's and
FlagGems' Hopper matmul as it ships) from bench/results/decorated.json
(tritonrt_bench_decorated); those of the other libraries' kernels come from tritonrt_library_launch_child (build-gpu/ or build/, or
TRITONRT_LIBRARY_LAUNCH_CHILD), run here on the cases this script writes.

    PYTHONPATH=build/python python bench/python_launch.py [bench/results/python_launch.json]

Prints a table (medians of 200 repetitions of 500 launches, as tritonrt_bench_launch times,
host microseconds per launch; the methods of one case take turns, repetition by repetition, so
that a host busier at one moment weighs on each alike; the C++ calls of the libraries' kernels
run after, in their own process) and writes the JSON. Needs a GPU.
"""
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
import triton

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import kernels  # noqa: E402

import tritonrt  # noqa: E402

# As tritonrt_bench_launch times its C++ rows: launches per repetition well below the queue depth.
REPS, PER_REP = 200, 500
CPP_METHOD = "C++: tritonrt fn(config, args...)"
os.environ.setdefault("GEMS_VENDOR", "nvidia")
os.environ.setdefault("FLAGGEMS_DB_URL", "sqlite:///:memory:")


def timed(launches, stream, prepares=None):
    """Median host microseconds per call of each of `launches` (a list of callables), which
    take turns; the queue is drained before each repetition, after its `prepares` entry (a
    callable or None) has run."""
    samples = [[] for _ in launches]
    prepares = prepares or [None] * len(launches)
    for rep in range(3 + REPS):
        for launch, prepare, kept in zip(launches, prepares, samples):
            if prepare is not None:
                prepare()
            stream.synchronize()
            start = time.perf_counter_ns()
            for _ in range(PER_REP):
                launch()
            elapsed = time.perf_counter_ns() - start
            if rep >= 3:
                kept.append(elapsed / PER_REP / 1000.0)
    stream.synchronize()
    return [statistics.median(kept) for kept in samples]


def measured(case, methods, stream):
    """Rows (case, method, median or why not) for {method: callable, (prepare, callable), or a
    string saying why it is unavailable}, the callables timed together."""
    runnable = {m: f if isinstance(f, tuple) else (None, f) for m, f in methods.items() if not isinstance(f, str)}
    medians = dict(zip(runnable, timed([f for _, f in runnable.values()], stream, [p for p, _ in runnable.values()])))
    return [(case, m, medians.get(m, f)) for m, f in methods.items()]


def launch_arguments(count):
    buf = lambda: torch.zeros(16, device="cuda")  # noqa: E731
    ints, floats = [3, 5, 7, 9, 11, 13, 15, 17], [0.5, 1.5, 2.5, 3.5]
    if count == 3:
        return [buf(), 3, 0]
    if count == 8:
        return [buf(), buf(), buf(), *ints[:3], floats[0], 0]
    return [buf(), buf(), buf(), buf(), buf(), buf(), *ints, *floats, 0]


def static_launcher(compiled, args):
    """torch's static launcher for a compiled kernel (torch 2.11: torch._inductor), or why not."""
    try:
        from torch._inductor.runtime.static_triton_launcher import StaticallyLaunchedCudaKernel
        compiled._cubin_path = compiled.metadata_group[f"{compiled.name}.cubin"]
        launcher = StaticallyLaunchedCudaKernel(compiled)
        launcher.load_kernel(torch.cuda.current_device())
        runtime = [a for a, p in zip(args, compiled.src.fn.params) if not p.is_constexpr]
        return lambda stream: launcher.run(1, 1, 1, stream, *runtime)
    except Exception as e:  # reported in the table
        return f"unavailable: {type(e).__name__}: {e}"


def launch_rows(stream):
    rows = []
    for count in (3, 8, 19):
        kernel = getattr(kernels, f"args{count}")
        args = launch_arguments(count)
        grid = (1, )
        fast = tritonrt.launcher(kernel)
        compiled = kernel[grid](*args)
        fast[grid](*args)
        handle = stream.cuda_stream
        run, function, packed = compiled.run, compiled.function, compiled.packed_metadata
        static = static_launcher(compiled, args)
        rows += measured(f"{count} args", {
            "tritonrt launcher[grid](...)": lambda: fast[grid](*args),
            "tritonrt launcher[grid] alone": lambda: fast[grid],
            "Triton kernel[grid](...)": lambda: kernel[grid](*args),
            "Triton CompiledKernel.run": lambda: run(1, 1, 1, handle, function, packed, None, None, None, *args),
            "torch StaticallyLaunchedCudaKernel.run": static if isinstance(static, str) else lambda: static(handle),
        }, stream)
    return rows


def descriptor_rows(stream):
    """bench/kernels.py's hooked_desc2 (two TMA descriptors of a placeholder block shape, the
    tiles set by its config's pre_hook) through the launcher and on Triton's path; its C++ rows
    come from tritonrt_bench_decorated's JSON (cpp_rows)."""
    case = "desc2, tiles set by a config pre_hook"
    if torch.cuda.get_device_capability()[0] < 9:
        return [(case, "all", "not measured: TMA descriptors need compute capability 9.0")]
    from triton.tools.tensor_descriptor import TensorDescriptor
    x = torch.zeros(16, 16, device="cuda", dtype=torch.float16)
    # Each way its own descriptors, reused call after call: after the first call both hold the
    # chosen tiles (Triton's hook and tritonrt set the caller's block_shape), so no call here
    # pays for a new block_shape list, as one with fresh placeholder descriptors would.
    ours, theirs = (TensorDescriptor(x, [16, 16], [16, 1], [1, 1]) for _ in range(2))
    fast = tritonrt.launcher(kernels.hooked_desc2)
    grid = (1, )
    fast[grid](ours, ours, 0)
    kernels.hooked_desc2[grid](theirs, theirs, 0)
    return measured(case, {
        "tritonrt launcher[grid](...)": lambda: fast[grid](ours, ours, 0),
        "Triton kernel[grid](...)": lambda: kernels.hooked_desc2[grid](theirs, theirs, 0),
    }, stream)


MM = 256  # as tritonrt_bench_decorated's FlagGems rows: M = N = K, fp16, row-major


def flaggems_mm_rows(stream):
    """FlagGems' Hopper matmul (mm_kernel_general_host_tma: libentry over libtuner, host
    descriptors of block shape [1, 1] whose tiles each config's pre_hook sets) launched as its
    general_mm launches it: through the launcher with new descriptors each call (as general_mm
    makes them) and with the same ones call after call, under tritonrt.install(), and on
    Triton's path. Its C++ rows (a bare cuLaunchKernel of the chosen binary, tritonrt from C++)
    come from tritonrt_bench_decorated's JSON (cpp_rows)."""
    case = "FlagGems mm host TMA (libentry, libtuner, pre_hook)"
    if torch.cuda.get_device_capability()[0] < 9:
        return [(case, "all", "not measured: TMA descriptors need compute capability 9.0")]
    try:  # by its module's name: the package's `mm` is the function of that name
        import importlib
        module = importlib.import_module("flag_gems.runtime.backend._nvidia.hopper.ops.mm")
        from triton.tools.tensor_descriptor import TensorDescriptor
    except Exception as e:
        return [(case, "import", f"unavailable: {type(e).__name__}: {e}")]
    kernel = module.mm_kernel_general_host_tma
    a, b, c = (torch.full((MM, MM), 1.0, device="cuda", dtype=torch.float16) for _ in range(3))

    def descriptors():
        return [TensorDescriptor(t, t.shape, t.stride(), [1, 1]) for t in (a, b, c)]

    grid = lambda meta: (triton.cdiv(MM, meta["BLOCK_M"]) * triton.cdiv(MM, meta["BLOCK_N"]), )  # noqa: E731
    rest = (MM, MM, MM, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    keywords = dict(GROUP_M=8, A_ROW_MAJOR=True, B_ROW_MAJOR=True, dtype="float16")
    fast = tritonrt.launcher(kernel)
    ours, installed, theirs = descriptors(), descriptors(), descriptors()
    start = time.perf_counter()
    fast[grid](*ours, *rest, **keywords)
    torch.cuda.synchronize()
    print(f"{case}: first call through tritonrt.launcher (its LibTuner's tuning, the configs compiled at once "
          f"first) {time.perf_counter() - start:.1f} s")
    # Each other way's first call too (not timed: they take the choice the tuning above
    # recorded in LibTuner's database).
    tritonrt.install()
    kernel[grid](*installed, *rest, **keywords)
    tritonrt.uninstall()
    kernel[grid](*theirs, *rest, **keywords)
    return measured(case, {
        "tritonrt launcher[grid](...)": (tritonrt.uninstall, lambda: fast[grid](*ours, *rest, **keywords)),
        "tritonrt launcher, new descriptors each call":
            (tritonrt.uninstall, lambda: fast[grid](*descriptors(), *rest, **keywords)),
        "tritonrt.install(), kernel[grid](...)": (tritonrt.install, lambda: kernel[grid](*installed, *rest, **keywords)),
        "Triton kernel[grid](...)": (tritonrt.uninstall, lambda: kernel[grid](*theirs, *rest, **keywords)),
    }, stream)


OPTION_NAMES = ("num_warps", "num_stages", "num_ctas")
DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.int32: "i32",
               torch.int64: "i64"}


def cpp_case(name, module, attribute, kernel, dimensions, args, kwargs):
    """The call as tritonrt_library_launch_child makes it from C++: the parameters no decorator
    sets, positionally, up to the last one the call gives (defaults between), the options
    apart; each tensor a buffer of its dtype and size; the grid's `dimensions` each an int or
    ("cdiv", n, NAME), cdiv(n, the call's NAME), computed in C++."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    set_by_decorators, layer = set(), kernel
    while not isinstance(layer, triton.runtime.JITFunction):
        if isinstance(layer, Autotuner):
            set_by_decorators |= {k for config in layer.configs for k in config.kwargs}
        elif isinstance(layer, Heuristics):
            set_by_decorators |= set(layer.values)
        layer = layer.fn  # a library's wrapper (libentry) holds what it wraps there too
    given = {**dict(zip(layer.arg_names, args)), **{k: v for k, v in kwargs.items() if k not in OPTION_NAMES}}
    params = [p for p in layer.params if p.name not in set_by_decorators]
    last = max(i for i, p in enumerate(params) if p.name in given)

    def described(value):
        if isinstance(value, torch.Tensor):
            return {"kind": "tensor", "dtype": DTYPE_NAMES[value.dtype], "bytes": value.numel() * value.element_size()}
        if value is None:
            return {"kind": "none"}
        kind = {bool: "bool", int: "int", float: "float"}[type(value)]
        return {"kind": kind, "value": value}

    return {"name": name, "module": module, "kernel": attribute,
            "grid": [list(d) if isinstance(d, tuple) else d for d in dimensions],
            "options": {k: v for k, v in kwargs.items() if k in OPTION_NAMES},
            "args": [described(given.get(p.name, p.default)) for p in params[:last + 1]],
            "reps": REPS, "per_rep": PER_REP}


def library_rows(stream):
    """Each library's kernel launched with the arguments its own code passes (keywords
    included): through tritonrt.launcher(kernel), with kernel[grid] under tritonrt.install(),
    and on Triton's own path; and the cases for the same calls from C++."""
    import importlib
    rows, cpp_cases = [], []
    M, N = 32, 4096
    x = torch.randn(M, N, device="cuda")
    y = torch.empty_like(x)
    w, b, rstd = torch.randn(N, device="cuda"), torch.randn(N, device="cuda"), torch.empty(M, device="cuda")
    mean = torch.empty(M, device="cuda")
    wide = torch.randn(M, 3 * N, device="cuda")
    wide_out = torch.empty_like(wide)
    half = torch.randn(M, N, device="cuda", dtype=torch.float16)
    half_out = torch.empty_like(half)
    g = torch.randn(2, 256, 3, device="cuda")
    g_out = torch.empty_like(g)
    # Each grid as the library writes it; a grid(META) function with its C++ form beside it.
    dyt_grid = (lambda meta: (triton.cdiv(N, meta["BLOCK_N"]), M), (("cdiv", N, "BLOCK_N"), M))
    cases = {
        "liger rms_norm (plain, keywords)": ("liger_kernel.ops.rms_norm", "_rms_norm_forward_kernel", (M, ),
                                             (y, N, x, N, w, 1, rstd, 1, N, 1e-6, 0.0, 1),
                                             dict(elementwise_affine=True, BLOCK_SIZE=4096, num_warps=8)),
        "liger dyt (autotune, grid(META))": ("liger_kernel.ops.dyt", "_dyt_fwd_kernel", dyt_grid,
                                             (x, y, torch.ones(1, device="cuda"), w, w, True, N), {}),
        "FlagGems rms_norm (libentry)": ("flag_gems.ops.rms_norm", "rms_norm_kernel", (M, ),
                                         (y, rstd, x, w, N, 1, N, 1, N, 1e-6, 4096), {}),
        "FlagGems softmax (libentry, heuristics)": ("flag_gems.ops.softmax", "softmax_kernel_inner", (M, 1, 1),
                                                    (half_out, half, M, N), {}),
        "FlagGems layer_norm loop (libentry, autotune)": ("flag_gems.ops.layernorm", "layer_norm_loop_kernel",
                                                          (M, 1, 1), (wide, wide_out, w, b, mean, rstd, M, 3 * N,
                                                                      1e-5), {}),
        "fla cumsum (heuristics, autotune, keywords)": (
            "fla.ops.utils.cumsum", "chunk_local_cumsum_scalar_kernel", (4 * 2 * 3, ), (),
            dict(s=g, o=g_out, scale=None, cu_seqlens=None, chunk_indices=None, T=256, B=2, H=3, BT=64,
                 REVERSE=False, USE_GRAPH=False)),
    }
    for name, (module, attribute, grid, args, kwargs) in cases.items():
        try:
            kernel = getattr(importlib.import_module(module), attribute)
        except Exception as e:
            rows.append((name, "import", f"unavailable: {type(e).__name__}: {e}"))
            continue
        grid, dimensions = grid if callable(grid[0]) else (grid, grid)
        fast = tritonrt.launcher(kernel)
        kernel[grid](*args, **kwargs)
        fast[grid](*args, **kwargs)
        tritonrt.install()
        kernel[grid](*args, **kwargs)
        tritonrt.uninstall()
        methods = {
            "tritonrt launcher[grid](...)": (tritonrt.uninstall, lambda: fast[grid](*args, **kwargs)),
            "tritonrt.install(), kernel[grid](...)": (tritonrt.install, lambda: kernel[grid](*args, **kwargs)),
            "Triton kernel[grid](...)": (tritonrt.uninstall, lambda: kernel[grid](*args, **kwargs)),
        }
        if callable(grid):  # what each Python launch spends in the library's own grid function
            tuned, jit = getattr(kernel, "best_config", None), kernel
            while not isinstance(jit, triton.runtime.JITFunction):
                jit = jit.fn
            meta = {**dict(zip(jit.arg_names, args)), **kwargs, **(tuned.all_kwargs() if tuned else {})}
            methods["the grid function alone, grid(META)"] = lambda: grid(meta)
        rows += measured(name, methods, stream)
        cpp_cases.append(cpp_case(name, module, attribute, kernel, dimensions, args, kwargs))
    tritonrt.uninstall()
    return rows, cpp_cases


def library_cpp_rows(cases):
    """The library cases called from C++ (tritonrt_library_launch_child, in a process of its
    own), or why not."""
    import subprocess
    import tempfile
    built = [HERE.parent / folder / "bench" / "tritonrt_library_launch_child" for folder in ("build-gpu", "build")]
    child = os.environ.get("TRITONRT_LIBRARY_LAUNCH_CHILD") or next((str(p) for p in built if p.is_file()), None)
    if child is None:
        return [(c["name"], CPP_METHOD, "unavailable: tritonrt_library_launch_child is not built")
                for c in cases]
    with tempfile.TemporaryDirectory() as scratch:
        given, got = Path(scratch) / "cases.json", Path(scratch) / "results.json"
        given.write_text(json.dumps(cases))
        done = subprocess.run([child, str(given), str(got)], capture_output=True, text=True)
        if done.returncode != 0 or not got.is_file():
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return [(c["name"], CPP_METHOD, f"unavailable: the child failed: {why}")
                    for c in cases]
        results = json.loads(got.read_text())["results"]
    return [(r["case"], CPP_METHOD,
             float(r["median_us"]) if "median_us" in r else f"unavailable: {r.get('error', '?')}") for r in results]


def function_rows(stream):
    """The libraries' own functions as their users call them (the library's Python, its tensor
    allocations and its launch), on Triton's path and with every launch routed by
    tritonrt.install(), which is what a user gets from one line."""
    import gc
    import importlib
    M, N = 32, 4096
    x, w = torch.randn(M, N, device="cuda"), torch.randn(N, device="cuda")
    half = torch.randn(M, N, device="cuda", dtype=torch.float16)
    g = torch.randn(2, 256, 3, device="cuda")
    cases = {
        "FlagGems softmax(x, -1) (function)": ("flag_gems.ops.softmax", lambda m: m.softmax(half, -1)),
        "FlagGems add(x, x) (function, generated kernel)": ("flag_gems.ops.add", lambda m: m.add(x, x)),
        "liger LigerRMSNormFunction.apply (forward)": (
            "liger_kernel.ops.rms_norm", lambda m: m.LigerRMSNormFunction.apply(x, w, 1e-6)),
        "fla chunk_local_cumsum(g, 64) (function)": ("fla.ops.utils.cumsum", lambda m: m.chunk_local_cumsum(g, 64)),
    }

    def libentries():
        # Those of FlagGems' generated kernels are made on a function's first call.
        try:
            from flag_gems.utils.libentry import LibEntry
        except ImportError:
            return []
        with warnings.catch_warnings():  # isinstance() on torch's deprecated objects warns
            warnings.simplefilter("ignore")
            return [o for o in gc.get_objects() if isinstance(o, LibEntry)]

    def routed(on):
        """install() or uninstall(); FlagGems' libentry caches forgotten, since it relaunches the
        compiled kernel of a first call, whichever path made it."""
        def prepare():
            if tritonrt.installed() != on:
                for entry in libentries():
                    entry.kernel_cache = tuple({} for _ in entry.kernel_cache)
                tritonrt.install() if on else tritonrt.uninstall()
        return prepare

    rows = []
    with torch.no_grad():
        for name, (module, call) in cases.items():
            try:
                library = importlib.import_module(module)
            except Exception as e:
                rows.append((name, "import", f"unavailable: {type(e).__name__}: {e}"))
                continue

            def warm(on, run=lambda: call(library)):
                prepare = routed(on)
                return lambda: (prepare(), run())

            rows += measured(name, {
                "tritonrt.install(), the library's function": (warm(True), lambda: call(library)),
                "Triton, the library's function": (warm(False), lambda: call(library)),
            }, stream)
    tritonrt.uninstall()
    return rows


def cpp_rows():
    """tritonrt from C++ and a bare cuLaunchKernel, from tritonrt_bench_launch's JSON; the
    hooked descriptor kernels (bench/kernels.py's, FlagGems' matmul) from C++ and bare, from
    tritonrt_bench_decorated's."""
    rows, notes = [], []
    path = HERE / "results" / "launch_overhead.json"
    if path.is_file():
        data = json.loads(path.read_text())
        # Its argsN kernels are the Python rows' kernels; its other cases (desc2) keep their names.
        rows = [(f"{r['args']} args" if r.get("kernel") == f"args{r['args']}" else r.get("kernel", "?"),
                 f"C++: {r['method']}", float(r["median_us"])) for r in data.get("results", []) if "median_us" in r]
        notes.append(f"C++ rows from {path} ({data.get('device', '?')})")
    else:
        notes.append(f"{path} is missing: run build/bench/tritonrt_bench_launch first for its C++ rows")
    hooked = HERE / "results" / "decorated.json"
    if hooked.is_file():  # its bare launches are of the same binaries, in the same program
        named = {
            "descriptors, cuLaunchKernel (bare)": ("desc2, tiles set by a config pre_hook", "C++: cuLaunchKernel (bare)"),
            "tritonrt, descriptors, Python pre_hook": ("desc2, tiles set by a config pre_hook", CPP_METHOD),
            "FlagGems mm host TMA, cuLaunchKernel (bare)":
                ("FlagGems mm host TMA (libentry, libtuner, pre_hook)", "C++: cuLaunchKernel (bare)"),
            "FlagGems mm host TMA, tritonrt, its pre_hook": ("FlagGems mm host TMA (libentry, libtuner, pre_hook)",
                                                             CPP_METHOD),
            "FlagGems mm host TMA, tritonrt, a C++ config hook":
                ("FlagGems mm host TMA (libentry, libtuner, pre_hook)", "C++: tritonrt, a C++ config hook"),
            "FlagGems mm device TMA, tritonrt": ("FlagGems mm device TMA (libentry, libtuner)", CPP_METHOD),
        }
        data = json.loads(hooked.read_text())
        rows += [(*named[r["call"]], float(r["median_us"])) for r in data.get("results", []) if r.get("call") in named]
        notes.append(f"descriptor kernels' C++ rows from {hooked} ({data.get('device', '?')})")
    else:
        notes.append(f"{hooked} is missing: run build/bench/tritonrt_bench_decorated first for its C++ rows")
    return rows, "; ".join(notes)


def main():
    output = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results" / "python_launch.json"
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        library, cases = library_rows(stream)
        rows = (launch_rows(stream) + descriptor_rows(stream) + flaggems_mm_rows(stream) + library
                + function_rows(stream))
        tritonrt.uninstall()
    rows += library_cpp_rows(cases)
    cpp, note = cpp_rows()
    rows += cpp
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__} | triton {triton.__version__} | {note}")
    value = {(c, m): v for c, m, v in rows if isinstance(v, float)}

    def ratios(case, v):
        """(x a bare C++ cuLaunchKernel, x tritonrt from C++, x Triton's kernel[grid]) for a
        measured row."""
        bare = value.get((case, "C++: cuLaunchKernel (bare)"))
        cpp = value.get((case, CPP_METHOD))
        jit = value.get((case, "Triton kernel[grid](...)"), value.get((case, "Triton, the library's function")))
        return tuple(v / base if base else None for base in (bare, cpp, jit))

    print(f"{'case':<46} {'method':<42} {'host us/call':>12} {'x bare':>8} {'x C++':>8} {'x Triton':>9}")
    results = []
    for case, method, v in rows:
        if not isinstance(v, float):
            print(f"{case:<46} {method:<42}   {v}")
            results.append({"case": case, "method": method, "error": v})
            continue
        bare, cpp, jit = ratios(case, v)
        shown = lambda r: f"{r:8.2f}" if r is not None else f"{'-':>8}"  # noqa: E731
        print(f"{case:<46} {method:<42} {v:12.2f} {shown(bare)} {shown(cpp)} {shown(jit):>9}")
        results.append({"case": case, "method": method, "median_us": v, "ratio_to_bare_cuLaunchKernel": bare,
                        "ratio_to_tritonrt_from_cpp": cpp, "ratio_to_triton_kernel_grid": jit})
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({
        "device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
        "reps": REPS, "per_rep": PER_REP, "note": note, "results": results,
    }, indent=2))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
