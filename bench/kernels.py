"""Kernels for the launch-overhead benchmark: 3, 8 and 19 runtime parameters, and two TMA
tensor descriptors with a flag; almost no work.

Each stores one value only when `flag` is non-zero; the benchmark passes flag = 0, so a
launch costs what the launch path costs. Every parameter is used in the flagged branch so
none is dead code.
"""
import triton
import triton.language as tl


@triton.jit
def args3(out_ptr, value, flag):
    if flag != 0:
        tl.store(out_ptr, value)


@triton.jit
def args8(out_ptr, p1, p2, i1, i2, i3, f1, flag):
    if flag != 0:
        tl.store(out_ptr, tl.load(p1) + tl.load(p2) + (i1 + i2 + i3) * f1)


@triton.jit
def args19(out_ptr, p1, p2, p3, p4, p5, i1, i2, i3, i4, i5, i6, i7, i8, f1, f2, f3, f4, flag):
    if flag != 0:
        loads = tl.load(p1) + tl.load(p2) + tl.load(p3) + tl.load(p4) + tl.load(p5)
        ints = i1 + i2 + i3 + i4 + i5 + i6 + i7 + i8
        tl.store(out_ptr, loads + ints * f1 * f2 + f3 * f4)


@triton.jit
def desc2(in_desc, out_desc, flag):
    if flag != 0:
        out_desc.store([0, 0], in_desc.load([0, 0]))


@triton.jit
def scale(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * alpha, mask=offs < n)


# The same kernel as libraries wrap theirs: autotuned, and with its block from a heuristic.
# Two configs that compile to the same kernel the explicit launch gets, so only the decorator's
# own cost differs between the launches the benchmark compares.
tuned_scale = triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4),
                                       triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2)],
                              key=["n"])(scale)
heuristic_scale = triton.heuristics({"BLOCK": lambda args: 1024 if args["n"] >= 4096 else 256})(scale)
