"""Kernels taking tuples, written the way Triton's own tests and Hopper-era libraries write
them: tuples of pointers walked with static_range, nested tuples of coefficients whose
elements may specialize to constexprs (1, None), a tuple as a tl.constexpr shape, tensor
descriptors inside tuples, and the decorators reading a tuple (tests/cpu/test_tuples.cpp,
tests/cpu/test_tuple_descriptors.cpp, tests/gpu/test_kernels.cpp)."""

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


@triton.jit
def _tile_sum(desc, m, n):
    return tl.sum(tl.sum(desc.load([m, n]).to(tl.float32), axis=1), axis=0)


@triton.jit
def tuple_descriptor_scale(src, out_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Each BLOCK_M x BLOCK_N tile of out = the sum of src[0]'s tile at the same corner (of its
    own block shape) times src[1]: a (descriptor, integer factor) tuple."""
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    total = _tile_sum(src[0], m, n) * src[1]
    out_desc.store([m, n], tl.zeros([BLOCK_M, BLOCK_N], tl.float32).to(out_desc.dtype) + total.to(out_desc.dtype))


@triton.jit
def tuple_descriptors_nested(descs, rows, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """descs = (out_desc, (factor, in_desc)): two descriptors in one tuple, one of them nested;
    as tuple_descriptor_scale over the first `rows` rows."""
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    if m < rows:
        out = descs[0]
        total = _tile_sum(descs[1][1], m, n) * descs[1][0]
        out.store([m, n], tl.zeros([BLOCK_M, BLOCK_N], tl.float32).to(out.dtype) + total.to(out.dtype))


def reshape_tuple_descriptor(nargs):
    nargs["src"][0].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]


@triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 64}, pre_hook=reshape_tuple_descriptor)], key=[])
@triton.jit
def tuple_descriptor_hooked(src, out_desc, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """tuple_descriptor_scale, whose config's pre_hook sets the block shape of the descriptor
    inside the tuple."""
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    total = _tile_sum(src[0], m, n) * src[1]
    out_desc.store([m, n], tl.zeros([BLOCK_M, BLOCK_N], tl.float32).to(out_desc.dtype) + total.to(out_desc.dtype))
