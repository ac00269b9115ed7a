"""Kernels whose signatures exercise every rule of Triton's call specialization."""
import builtins

import triton
import triton.language as tl

# Lets tests check that tritonrt executes this module once per process.
builtins.__dict__.setdefault("tritonrt_test_imports", []).append(__name__)


@triton.jit
def plain(p, q, n, m, f, flag, maybe, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(p + offs, tl.load(q + offs, mask=offs < n), mask=offs < n)


@triton.jit
def annotated(p: "*fp16", k: "const *fp32", n: tl.int64, i: "i32", u: tl.uint32, f: tl.float32, b: "u1",
              BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.load(k + offs).to(tl.float16))


@triton.jit(do_not_specialize=["n", 3], do_not_specialize_on_alignment=["p", "a"])
def unspecialized(p, q, n, m, a, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.load(q + offs))


@triton.jit
def with_defaults(p, n, BLOCK: tl.constexpr = 128, SCALE: tl.constexpr = 0.5, NAME: tl.constexpr = "relu",
                  FLAG: tl.constexpr = True, OPT: tl.constexpr = None, m=16, DT: tl.constexpr = tl.float16):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, (tl.load(p + offs) * SCALE).to(DT).to(tl.float32))


@triton.jit
def bad_arange(p, BLOCK: tl.constexpr):
    offs = tl.arange(0, 3)
    tl.store(p + offs, 1.0)


def not_a_kernel(x):
    return x


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}, num_warps=8)], key=["n"])
@triton.jit
def tuned(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, 1.0, mask=offs < n)


@triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})
@triton.jit
def heuristic(p, n, EVEN: tl.constexpr, BLOCK: tl.constexpr = 64):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, 1.0, mask=offs < n)
