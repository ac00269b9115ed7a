"""(d) of bench/first_launch.cpp: Triton's own first launch in a fresh interpreter.

Times, from the top of this script: `import torch, triton` and the kernel's module, the CUDA
context (torch's, created with the first tensor), and the first `scale[grid](...)` until the
kernel has finished (its compile a hit in Triton's cache, which the program filled before).
Prints one JSON line.
"""
import time

START = time.perf_counter()

import importlib.util  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402

import torch  # noqa: E402
import triton  # noqa: E402


def ms(since):
    return (time.perf_counter() - since) * 1e3


def main():
    spec = importlib.util.spec_from_file_location("kernels", sys.argv[1])
    kernels = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kernels)
    import_ms = ms(START)
    n, block = 1 << 20, 1024
    x = torch.arange(n, device="cuda", dtype=torch.float32) % 1000
    out = torch.empty_like(x)
    torch.cuda.synchronize()
    context_ms = ms(START)
    launch = time.perf_counter()
    kernels.scale[(triton.cdiv(n, block),)](x, out, n, 2.0, BLOCK=block)
    torch.cuda.synchronize()
    launch_ms = ms(launch)
    total_ms = ms(START)
    assert torch.equal(out, x * 2.0)
    print(json.dumps({"import_ms": import_ms, "context_ms": context_ms, "launch_ms": launch_ms, "total_ms": total_ms}))


main()
