"""First calls from Python: what a user sees when they add `tritonrt.install()` to a test suite
or a model's warm-up. Each workload calls library functions (Liger-Kernel's autograd functions,
FlagGems' operators through `flag_gems.use_gems()`) over the shapes and dtypes a test suite
sweeps, forward and backward, in a fresh process with empty caches (Triton's, tritonrt's index,
FlagGems' tuning database): once on Triton's own path and once with TRITONRT_INSTALL=1, the
two taking turns. Every specialization is compiled both ways; what differs is what each does
around the compiles (describing, indexing, tuning, loading).

    PYTHONPATH=build/python python bench/first_calls.py [bench/results/first_calls.json]
        [--workloads NAME,...] [--repeats N] [--profile]

Prints a table (seconds from the workload's first call to its last, and apart from them the
seconds its imports took; medians of --repeats runs, default 1, the order of the two ways
alternating) and writes the JSON. --profile also writes, per workload,
the functions that took the most time under install() (cProfile, cumulative and own time) to
bench/results/first_calls-<workload>.profile.txt. Needs a GPU.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def liger_rms_norm(torch):
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    for dtype in (torch.float32, torch.bfloat16):
        for shape in ((2, 128, 512), (4, 64, 1024), (3, 17, 2048), (1, 9, 4096)):
            x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)
            w = torch.randn(shape[-1], device="cuda", dtype=dtype, requires_grad=True)
            LigerRMSNormFunction.apply(x, w, 1e-6).sum().backward()


def liger_dyt(torch):
    from liger_kernel.ops.dyt import LigerDyTFunction
    for dtype in (torch.float32, torch.bfloat16):
        for shape in ((2, 64, 512), (4, 33, 1024), (1, 8, 4096)):
            x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)
            alpha = torch.ones(1, device="cuda", dtype=dtype, requires_grad=True)
            gamma = torch.randn(shape[-1], device="cuda", dtype=dtype, requires_grad=True)
            beta = torch.randn(shape[-1], device="cuda", dtype=dtype, requires_grad=True)
            LigerDyTFunction.apply(x, alpha, gamma, beta).sum().backward()


def liger_softmax_and_layer_norm(torch):
    from liger_kernel.ops.layer_norm import LigerLayerNormFunction
    from liger_kernel.ops.softmax import LigerSoftmaxFunction
    for dtype in (torch.float32, torch.bfloat16):
        for shape in ((2, 128, 256), (4, 31, 1000), (1, 8, 4096)):
            x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)
            LigerSoftmaxFunction.apply(x).sum().backward()
            w = torch.randn(shape[-1], device="cuda", dtype=dtype, requires_grad=True)
            b = torch.randn(shape[-1], device="cuda", dtype=dtype, requires_grad=True)
            LigerLayerNormFunction.apply(x, w, b, 1e-6).sum().backward()


def flag_gems_operators(torch):
    import flag_gems
    with flag_gems.use_gems():
        for dtype in (torch.float32, torch.float16):
            for shape in ((64, 512), (33, 1000), (8, 4096)):
                x = torch.randn(*shape, device="cuda", dtype=dtype)
                y = torch.randn(*shape, device="cuda", dtype=dtype)
                torch.softmax(x, -1)
                torch.add(x, y)
                torch.mul(x, y)
                torch.sum(x, -1)
                torch.nn.functional.layer_norm(x, (shape[-1], ))


def flag_gems_mm(torch):
    import flag_gems
    with flag_gems.use_gems():
        for dtype in (torch.float16, ):
            for m, n, k in ((128, 128, 128), (512, 256, 1024)):
                torch.mm(torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype))


# name: (the modules it imports, timed apart, then the calls)
WORKLOADS = {
    "liger rms_norm": (["liger_kernel.ops.rms_norm"], liger_rms_norm),
    "liger dyt (autotune)": (["liger_kernel.ops.dyt"], liger_dyt),
    "liger softmax+layer_norm": (["liger_kernel.ops.softmax", "liger_kernel.ops.layer_norm"],
                                 liger_softmax_and_layer_norm),
    "FlagGems softmax+add+mul+sum+layer_norm": (["flag_gems"], flag_gems_operators),
    "FlagGems mm (tuned)": (["flag_gems"], flag_gems_mm),
}
MODES = ("Triton", "install()")


def child(name, profile):
    """One workload in this process; prints {"seconds": ..., "import_seconds": ...} last."""
    if os.environ["TRITONRT_INSTALL"] == "1":
        import tritonrt.frontend  # what site-packages' tritonrt-install.pth does at start-up
        tritonrt.frontend._install_from_environment()
    import torch
    import triton  # noqa: F401
    import importlib
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    modules, calls = WORKLOADS[name]
    begun = time.perf_counter()
    for module in modules:
        importlib.import_module(module)
    imported = time.perf_counter() - begun
    profiler = None
    if profile:
        import cProfile
        profiler = cProfile.Profile()
        profiler.enable()
    start = time.perf_counter()
    calls(torch)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    if profiler is not None:
        import io
        import pstats
        profiler.disable()
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("cumulative").print_stats(45)
        stats.sort_stats("tottime").print_stats(30)
        Path(profile).write_text(text.getvalue())
    print(json.dumps({"seconds": seconds, "import_seconds": imported}))


def run_once(name, mode, profile=None):
    """(seconds of workload `name`'s calls in a fresh process with empty caches, in `mode`; of
    its imports; the process's wall time; what tritonrt logged, each line once)."""
    with tempfile.TemporaryDirectory() as caches:
        env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TRITONRT_CACHE_DIR": f"{caches}/tritonrt",
               "FLAGGEMS_DB_URL": "sqlite:///:memory:", "GEMS_VENDOR": "nvidia",
               "TRITONRT_INSTALL": "1" if mode == "install()" else "0", "TRITONRT_LOG": "warning"}
        command = [sys.executable, __file__, "--child", name]
        if profile:
            command += ["--profile-to", str(profile)]
        begun = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
        wall = time.perf_counter() - begun
        said = sorted({line for line in done.stderr.splitlines() if line.startswith("tritonrt")})
        if done.returncode != 0:
            failed = f"failed: {(done.stderr.strip().splitlines() or ['?'])[-1][:160]}"
            return failed, failed, wall, said
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        return answer["seconds"], answer["import_seconds"], wall, said


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", default=str(HERE / "results" / "first_calls.json"))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child")
    parser.add_argument("--profile-to")
    options = parser.parse_args()
    if options.child:
        child(options.child, options.profile_to)
        return
    import torch
    import triton
    names = [n for n in options.workloads.split(",") if n]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; known: {list(WORKLOADS)}")
    output = Path(options.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    results = []
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__} | triton {triton.__version__} | "
          f"{os.cpu_count()} CPUs | fresh caches per run, medians of {options.repeats}")
    print(f"{'workload (first calls; imports apart)':<44} {'Triton s':>9} {'install() s':>12} {'ratio':>7} "
          f"{'import s':>9} {'(install)':>12}")
    for name in names:
        samples = {mode: [] for mode in MODES}
        imports = {mode: [] for mode in MODES}
        walls = {mode: [] for mode in MODES}
        logged = set()
        for repeat in range(options.repeats):
            for mode in (MODES if repeat % 2 == 0 else MODES[::-1]):
                seconds, imported, wall, said = run_once(name, mode)
                samples[mode].append(seconds)
                imports[mode].append(imported)
                walls[mode].append(wall)
                logged.update(said)

        def medians(values):
            return {m: statistics.median(v) if all(isinstance(x, float) for x in v) else v[0]
                    for m, v in values.items()}

        median, import_median = medians(samples), medians(imports)
        ratio = median["install()"] / median["Triton"] if all(isinstance(v, float) for v in median.values()) else None
        shown = lambda v: f"{v:9.2f}" if isinstance(v, float) else f" {v}"  # noqa: E731
        print(f"{name:<44} {shown(median['Triton'])} {shown(median['install()']):>12} "
              f"{(f'{ratio:7.2f}' if ratio else '-'):>7} {shown(import_median['Triton'])} "
              f"{shown(import_median['install()']):>12}")
        for line in sorted(logged):
            print(f"    {line[:200]}")
        results.append({"workload": name, "seconds": median, "samples": samples, "import_seconds": import_median,
                        "import_samples": imports, "process_walls": walls,
                        "ratio_install_to_triton": ratio, "tritonrt_log": sorted(logged)})
        if options.profile:
            stem = "".join(c if c.isalnum() else "_" for c in name.split(" (")[0])
            run_once(name, "install()", profile=output.parent / f"first_calls-{stem}.profile.txt")
    output.write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                  "triton": triton.__version__, "cpus": os.cpu_count(), "repeats": options.repeats,
                                  "results": results}, indent=2))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
