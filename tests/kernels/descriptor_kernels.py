"""Kernels taking TMA tensor descriptors built on the host (triton.tools.tensor_descriptor),
written as Triton's tutorials and Hopper libraries write them: tests/cpu/test_descriptor.cpp
(specialization and hash against Triton's, the launch parameters on the stand-in driver) and
tests/gpu/test_descriptor.cpp (results on a GPU)."""
import triton
import triton.language as tl


@triton.jit
def scale_2d(in_desc, out_desc, factor, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # out = in * factor, one BLOCK_M x BLOCK_N tile per program; the descriptors' zero padding
    # covers the tiles that overhang the tensor, and stores past its edge are dropped.
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    tile = in_desc.load([m, n])
    out_desc.store([m, n], tile * factor)


@triton.jit
def _matmul_tile(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One BLOCK_M x BLOCK_N tile of C = A @ B (fp16 in, fp32 accumulate, fp16 out): the tile
    # loop of Triton's persistent matmul tutorial without its persistence.
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = a_desc.load([m, k])
        b = b_desc.load([k, n])
        acc = tl.dot(a, b, acc)
    c_desc.store([m, n], acc.to(tl.float16))


@triton.jit
def matmul_tma(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    _matmul_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)


def set_tile_shapes(nargs):
    # As Triton's tutorials and Hopper libraries do: the caller's descriptors carry a
    # placeholder block shape, and each config's pre_hook sets the tiles that config loads.
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [nargs["BLOCK_K"], nargs["BLOCK_N"]]
    nargs["c_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]


def tile_configs(pre_hook):
    return [
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, pre_hook=pre_hook),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=8, pre_hook=pre_hook),
    ]


@triton.autotune(configs=tile_configs(set_tile_shapes), key=["K"])
@triton.jit
def matmul_tma_tuned(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    _matmul_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)


def bad_tile_shape(nargs):
    nargs["a_desc"].block_shape = [48, 32]  # not a power of 2


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, pre_hook=bad_tile_shape)],
                 key=["K"])
@triton.jit
def matmul_tma_bad_hook(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    _matmul_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)


@triton.heuristics({"BLOCK_N": lambda args: args["in_desc"].block_shape[1]})
@triton.jit
def scale_2d_heuristic(in_desc, out_desc, factor, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # A heuristic that reads a descriptor: it runs on every call (nothing to memoize on).
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    out_desc.store([m, n], in_desc.load([m, n]) * factor)


@triton.jit
def load_either(src, out_ptr, BLOCK: tl.constexpr):
    # `src` a pointer or a descriptor, as Triton's fused-attention tutorial takes its inputs.
    offs = tl.arange(0, BLOCK)
    if isinstance(src, tl.tensor_descriptor):
        tile = src.load([0, 0])
    else:
        tile = tl.load(src + offs[:, None] * BLOCK + offs[None, :])
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], tile)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 16}, num_warps=2)], key=["src"])
@triton.jit
def keyed_on_descriptor(src, out_ptr, BLOCK: tl.constexpr):
    # An autotuner keyed on a descriptor: Triton refuses it (a TensorDescriptor is unhashable).
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], src.load([0, 0]))


def set_in_cpp(nargs):
    raise RuntimeError("this hook is replaced in C++ (JitFunction::set_config_hook)")


@triton.autotune(configs=tile_configs(set_in_cpp), key=["K"])
@triton.jit
def matmul_tma_cpp_hook(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    # Its configs' tiles are set by a C++ hook: the Python one raises if it runs.
    _matmul_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)
