"""The first call of an autotuned kernel: bench/kernels.py's `tuned_matmul` (32 configs, each its
own compile, then each timed) launched once in a fresh process with empty caches (Triton's,
tritonrt's index), fp16, for one (M, N, K):

    Triton        its own `kernel[grid]`: each config compiled inside the timing loop, in turn
    install()     the same call with TRITONRT_INSTALL=1: tritonrt tunes in C++, the configs
                  compiled at once (TRITONRT_COMPILE_THREADS, default one per processor)
    C++           tritonrt_first_tuning_child: JitFunction::get and the call, from C++
and the two tritonrt ways again with TRITONRT_COMPILE_THREADS=1 (compiles one after another),
which tells the parallel compiles apart from the rest.

    PYTHONPATH=build/python python bench/first_tuning.py [bench/results/first_tuning.json]
        [--cpp build/bench/tritonrt_first_tuning_child] [--repeats N] [--shape M,N,K]

Prints a table (seconds from just before the first call to its completion, medians of
--repeats fresh processes per way, the ways taking turns) and writes the JSON. Needs a GPU.
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
WAYS = {
    # name: (how it runs, environment it adds)
    "Triton": ("python", {"TRITONRT_INSTALL": "0"}),
    "install()": ("python", {"TRITONRT_INSTALL": "1"}),
    "install(), 1 compile thread": ("python", {"TRITONRT_INSTALL": "1", "TRITONRT_COMPILE_THREADS": "1"}),
    "C++": ("cpp", {}),
    "C++, 1 compile thread": ("cpp", {"TRITONRT_COMPILE_THREADS": "1"}),
}


def child(m, n, k):
    """One first call in this process; prints {"seconds": ..., "config": ...} last."""
    if os.environ.get("TRITONRT_INSTALL") == "1":
        import tritonrt.frontend  # what site-packages' tritonrt-install.pth does at start-up
        tritonrt.frontend._install_from_environment()
    import torch
    sys.path.insert(0, str(HERE))
    import kernels
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    torch.cuda.synchronize()
    from triton import cdiv

    def grid(meta):
        return (cdiv(m, meta["BLOCK_M"]) * cdiv(n, meta["BLOCK_N"]), )

    start = time.perf_counter()
    kernels.tuned_matmul[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                               c.stride(1))
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    expected = a.float() @ b.float()
    if not torch.allclose(c.float(), expected, atol=0.5, rtol=0.05):
        raise SystemExit("the tuned matmul's result is wrong")
    print(json.dumps({"seconds": seconds, "config": str(kernels.tuned_matmul.best_config)}))


def run_once(way, shape, cpp):
    """(seconds of the first call, its chosen config or None, the process's stderr lines from tritonrt)."""
    how, extra = WAYS[way]
    with tempfile.TemporaryDirectory() as caches:
        env = {**os.environ, "TRITON_CACHE_DIR": f"{caches}/triton", "TRITONRT_CACHE_DIR": f"{caches}/tritonrt",
               "TRITONRT_LOG": "warning", **extra}
        if how == "python":
            command = [sys.executable, __file__, "--child", ",".join(map(str, shape))]
        else:
            command = [cpp, *map(str, shape)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            return f"failed: {(done.stderr.strip().splitlines() or ['?'])[-1][:160]}", None
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        return answer["seconds"], answer.get("config")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    built = [HERE.parent / folder / "bench" / "tritonrt_first_tuning_child" for folder in ("build", "build-gpu")]
    parser.add_argument("output", nargs="?", default=str(HERE / "results" / "first_tuning.json"))
    parser.add_argument("--cpp", default=next((str(p) for p in built if p.exists()), str(built[0])))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--shape", default="1024,1024,1024")
    parser.add_argument("--child")
    options = parser.parse_args()
    if options.child:
        child(*map(int, options.child.split(",")))
        return
    import torch
    import triton
    shape = tuple(map(int, options.shape.split(",")))
    ways = [w for w in WAYS if WAYS[w][0] == "python" or Path(options.cpp).exists()]
    if len(ways) < len(WAYS):
        print(f"no {options.cpp}: the C++ rows are left out (build the benchmarks, or pass --cpp)")
    threads = len(os.sched_getaffinity(0))
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__} | triton {triton.__version__} | "
          f"{threads} processors | tuned_matmul, 32 configs, fp16 {shape} | fresh caches per run, "
          f"medians of {options.repeats}")
    samples = {w: [] for w in ways}
    configs = {w: [] for w in ways}
    for repeat in range(options.repeats):
        for way in (ways if repeat % 2 == 0 else ways[::-1]):
            seconds, config = run_once(way, shape, options.cpp)
            samples[way].append(seconds)
            configs[way].append(config)
    median = {w: statistics.median(v) if all(isinstance(x, float) for x in v) else v[0] for w, v in samples.items()}
    base = median["Triton"] if isinstance(median["Triton"], float) else None
    print(f"{'way':<30} {'first call s':>13} {'vs Triton':>10}  chosen config")
    for way in ways:
        value = median[way]
        shown = f"{value:13.2f}" if isinstance(value, float) else f" {value}"
        ratio = f"{value / base:10.2f}" if base and isinstance(value, float) else f"{'-':>10}"
        print(f"{way:<30} {shown} {ratio}  {configs[way][0] or ''}")
    output = Path(options.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                                  "triton": triton.__version__, "processors": threads, "shape": shape,
                                  "repeats": options.repeats, "seconds": median, "samples": samples,
                                  "configs": configs}, indent=2))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
