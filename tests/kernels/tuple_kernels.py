"""Kernels taking tuples, written the way Triton's own tests and Hopper-era libraries write
them: tuples of pointers walked with static_range, nested tuples of coefficients whose
elements may specialize to constexprs (1, None), a tuple as a tl.constexpr shape, and the
decorators reading a tuple (tests/cpu/test_tuples.cpp, tests/gpu/test_kernels.cpp)."""

import triton
import triton.language as tl


@triton.jit
def tuple_combine(srcs, out_ptr, coeffs, n, BLOCK: tl.constexpr):
    """out = sum(coeffs[0][i] * srcs[i]) + coeffs[1][0] (+ coeffs[1][1] when it is not None)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(len(srcs)):
        acc += coeffs[0][i] * tl.load(srcs[i] + offs, mask=mask).to(tl.float32)
    acc += coeffs[1][0]
    if coeffs[1][1] is not None:
        acc += coeffs[1][1]
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.jit(do_not_specialize=["pair"])
def tuple_unspecialized(pair, out_ptr, n, BLOCK: tl.constexpr):
    """Triton's do_not_specialize does not reach a tuple's elements."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(pair[0] + offs, mask=mask) * pair[1], mask=mask)


@triton.jit
def tuple_shape(in_ptr, out_ptr, stride, SHAPE: tl.constexpr):
    """A 2-D tile whose shape is a constexpr tuple: out = in + 1."""
    rows = tl.arange(0, SHAPE[0])[:, None]
    cols = tl.arange(0, SHAPE[1])[None, :]
    tl.store(out_ptr + rows * stride + cols, tl.load(in_ptr + rows * stride + cols) + 1)


@triton.heuristics({"HAS_BIAS": lambda args: args["coeffs"][1] is not None})
@triton.jit
def tuple_heuristic(srcs, out_ptr, coeffs, n, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr):
    """out = coeffs[0] * srcs[0] + srcs[1] (+ coeffs[1] when the heuristic saw one)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = coeffs[0] * tl.load(srcs[0] + offs, mask=mask) + tl.load(srcs[1] + offs, mask=mask)
    if HAS_BIAS:
        acc += coeffs[1]
    tl.store(out_ptr + offs, acc, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def tuple_tuned(srcs, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(srcs[0] + offs, mask=mask) - tl.load(srcs[1] + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["srcs"])
@triton.jit
def tuple_keyed(srcs, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(srcs[0] + offs, mask=offs < n), mask=offs < n)
