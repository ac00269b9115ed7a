"""The Python half of tritonrt_bench_torch_add (bench/torch_add.cpp runs it): host time per
call of an add of two small CUDA tensors through torch.ops.tritonrt.add, torch.add, and the
same Triton kernel launched with kernel[grid](...) inside a Python wrapper.

    python torch_add.py PACKAGE_DIR ELEMENTS REPS PER_REP OUT.json

PACKAGE_DIR holds the tritonrt package (the build's python/ folder). Writes, per
variant, the per-call time in microseconds of every repetition.
"""
import importlib.util
import json
import sys
import time
from pathlib import Path

import torch
import triton
import triton.language as tl


def main():
    package_dir, elements, reps, per_rep, out_path = sys.argv[1:]
    elements, reps, per_rep = int(elements), int(reps), int(per_rep)
    sys.path.insert(0, package_dir)
    import tritonrt.ops  # noqa: F401  (registers torch.ops.tritonrt)

    # The op library's own kernel file, imported as a module of its own.
    kernels = Path(package_dir) / "tritonrt" / "ops" / "kernels" / "tritonrt_elementwise.py"
    spec = importlib.util.spec_from_file_location("bench_tritonrt_elementwise", kernels)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    add_kernel = module.add_kernel

    def triton_add(x, y, alpha=1.0):
        """What a Python op wrapper around the kernel does: allocate, compute the grid, launch."""
        out = torch.empty_like(x)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, alpha, n, BLOCK=1024, COMPUTE=tl.float32)
        return out

    x = torch.randn(elements, device="cuda")
    y = torch.randn(elements, device="cuda")
    want = torch.add(x, y)
    variants = {
        "py_tritonrt_op": lambda: torch.ops.tritonrt.add(x, y),
        "py_tritonrt_op_overload": lambda: torch.ops.tritonrt.add.default(x, y),
        "py_torch_add": lambda: torch.add(x, y),
        "py_aten_op": lambda: torch.ops.aten.add(x, y),
        "py_triton_kernel": lambda: triton_add(x, y),
    }
    for name, call in variants.items():
        torch.testing.assert_close(call(), want, rtol=0, atol=0, msg=lambda m, n=name: f"{n}: {m}")

    # Repetitions interleave the variants, so that clock or thermal drift affects all alike.
    times = {name: [] for name in variants}
    for rep in range(reps + 3):
        for name, call in variants.items():
            torch.cuda.synchronize()
            start = time.perf_counter_ns()
            for _ in range(per_rep):
                call()
            elapsed = time.perf_counter_ns() - start
            if rep >= 3:  # the first repetitions warm up
                times[name].append(elapsed / per_rep / 1000)
    torch.cuda.synchronize()
    Path(out_path).write_text(json.dumps({"times_us": times, "torch": torch.__version__,
                                          "triton": triton.__version__}))


if __name__ == "__main__":
    main()
