"""Decorated kernels for tritonrt's edge cases: heuristics that count how often they run (a
heuristic should run once per distinct value of what it reads, and not at all on a repeated
call), one that fails, a tuner whose every config fails, one whose configs compile at once (one
of them failing), a user pre_hook, and heuristics under a tuner."""
import builtins

import triton
import triton.language as tl

calls = builtins.__dict__.setdefault("tritonrt_heuristic_calls", {})


def _counted(name, fn):
    def heuristic(args):
        calls[name] = calls.get(name, 0) + 1
        return fn(args)

    return heuristic


@triton.heuristics({
    # Reads n's value only.
    "BLOCK": _counted("BLOCK", lambda args: 128 if args["n"] < 4096 else 1024),
    # Reads the pointer's dtype only: every address of one dtype shares the value.
    "WIDE": _counted("WIDE", lambda args: args["x_ptr"].dtype.primitive_bitwidth > 16),
    # Reads every argument (iterates them): nothing to memoize it on.
    "COUNT": _counted("COUNT", lambda args: len([name for name in args if name != "COUNT"])),
})
@triton.jit
def counted(x_ptr, n, BLOCK: tl.constexpr, WIDE: tl.constexpr, COUNT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


# Reads n and m: called with many inputs, each pair runs once (and multiples of 4096 alike in
# their low bits find their own values).
@triton.heuristics({"BLOCK": _counted("MANY", lambda args: 64 if (args["n"] + args["m"]) % 3 else 128)})
@triton.jit
def many_inputs(x_ptr, n, m, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n + m), mask=offs < n + m)


@triton.heuristics({"BLOCK": _counted("OVERRIDDEN", lambda args: 64)})
@triton.jit
def overridden(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({}, num_warps=2), triton.Config({}, num_warps=4)], key=["n"])
@triton.heuristics({"BLOCK": _counted("TUNED_OVERRIDDEN", lambda args: 64)})
@triton.jit
def tuned_overridden(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _zero_out_and_count(kwargs, reset_only=False):
    # A user pre_hook replaces reset_to_zero: it zeroes out itself. Triton calls it once with
    # reset_only=True after each tuning, so those calls count the tunings.
    kwargs["out_ptr"].zero_()
    if reset_only:
        calls["TUNINGS"] = calls.get("TUNINGS", 0) + 1


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}, num_warps=2), triton.Config({"BLOCK": 1024}, num_warps=4)],
    key=["n"],
    pre_hook=_zero_out_and_count,
)
@triton.jit
def counted_tuning_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


@triton.heuristics({"BLOCK": lambda args: args["no_such_argument"]})
@triton.jit
def failing_heuristic(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 3}), triton.Config({"BLOCK": 5})], key=["n"])
@triton.jit
def no_config_compiles(x_ptr, n, BLOCK: tl.constexpr):
    # tl.arange needs a power of two: neither config compiles.
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=offs < n)


@triton.autotune(
    # BLOCK 3 is not a power of two: that config does not compile and tuning skips it.
    configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((128, 1), (3, 4), (512, 4), (1024, 8))],
    key=["n"],
)
@triton.jit
def many_configs_scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)
