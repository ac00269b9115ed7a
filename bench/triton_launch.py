"""The Triton side of the launch-overhead benchmark, run inside the benchmark's own process.

bench/launch_overhead.cpp executes this file in the embedded interpreter and calls
`measure`; it times Triton's two Python launch paths on the same stream the C++ paths use:
`kernel[grid](*args)` (the JIT, what users write) and `CompiledKernel.run(...)` (the launcher
alone, with everything the JIT computes per call prepared once).
"""
import time

import torch
import triton
from triton import knobs


def versions():
    return {"triton": triton.__version__, "torch": torch.__version__}


def _arguments(kernel_name, device):
    """The same argument values the C++ side passes: tensors for pointers, ints, floats,
    descriptors of 16 x 16 fp16 matrices, flag 0."""
    buf = lambda: torch.zeros(16, device=device, dtype=torch.float32)
    ints = [3, 5, 7, 9, 11, 13, 15, 17]
    floats = [0.5, 1.5, 2.5, 3.5]
    if kernel_name == "args3":
        return [buf(), 3, 0]
    if kernel_name == "args8":
        return [buf(), buf(), buf(), *ints[:3], floats[0], 0]
    if kernel_name == "args19":
        return [buf(), buf(), buf(), buf(), buf(), buf(), *ints, *floats, 0]
    if kernel_name == "desc2":
        from triton.tools.tensor_descriptor import TensorDescriptor
        matrix = lambda: torch.zeros(16, 16, device=device, dtype=torch.float16)
        return [TensorDescriptor.from_tensor(matrix(), [16, 16]), TensorDescriptor.from_tensor(matrix(), [16, 16]), 0]
    raise ValueError(kernel_name)


def _time(launch, stream, reps, per_rep, warmup_reps=3):
    """Host microseconds per launch, one sample per repetition of `per_rep` launches."""
    samples = []
    for rep in range(warmup_reps + reps):
        stream.synchronize()
        start = time.perf_counter_ns()
        for _ in range(per_rep):
            launch()
        elapsed = time.perf_counter_ns() - start
        if rep >= warmup_reps:
            samples.append(elapsed / per_rep / 1000.0)
    stream.synchronize()
    return samples


def measure(module, kernel_name, stream_handle, reps, per_rep):
    """{'jit': [...], 'compiled_run': [...]}: per-launch host µs for `module.<kernel_name>`."""
    kernel = getattr(module, kernel_name)
    stream = torch.cuda.ExternalStream(stream_handle)
    grid = (1, )
    with torch.cuda.stream(stream):
        args = _arguments(kernel_name, "cuda")
        compiled = kernel[grid](*args)  # compiles (or loads) and launches once
        stream.synchronize()
        assert torch.cuda.current_stream().cuda_stream == stream_handle

        jit = _time(lambda: kernel[grid](*args), stream, reps, per_rep)

        # What JITFunction.run does after the cache lookup, with its per-call values hoisted.
        run = compiled.run
        function = compiled.function
        packed = compiled.packed_metadata
        launch_metadata = compiled.launch_metadata(grid, stream_handle, *args)
        enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
        compiled_run = _time(
            lambda: run(1, 1, 1, stream_handle, function, packed, launch_metadata, enter, leave, *args), stream, reps,
            per_rep)
    return {"jit": jit, "compiled_run": compiled_run, "hash": compiled.hash}


def measure_decorated(module, stream_handle, n, num_stages, reps, per_rep):
    """{'explicit': [...], 'autotuned': [...], 'heuristics': [...]}: per-call host µs of
    Triton's Python launches of bench/kernels.py's scale: with its constexprs passed, and its
    autotuned and heuristics-driven forms (each tuned or computed once first)."""
    stream = torch.cuda.ExternalStream(stream_handle)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]), )
    with torch.cuda.stream(stream):
        x = torch.randn(n, device="cuda")
        out = torch.empty_like(x)
        calls = {
            "explicit": lambda: module.scale[grid](x, out, n, 2.0, BLOCK=1024, num_warps=4, num_stages=num_stages),
            "autotuned": lambda: module.tuned_scale[grid](x, out, n, 2.0),
            "heuristics": lambda: module.heuristic_scale[grid](x, out, n, 2.0),
        }
        for call in calls.values():
            call()
        return {name: _time(call, stream, reps, per_rep) for name, call in calls.items()}
