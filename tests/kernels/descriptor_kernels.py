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


# Every run of the hooks below, in order: a memoized hook's later calls add nothing.
HOOK_RUNS = []


def set_tiles_by_layout(nargs):
    # As FlagGems' Hopper matmul: the tiles follow an argument (A's layout) as well as the
    # config's values. All it does is set block shapes from what it read: memoized on that.
    m, n, k = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
    nargs["a_desc"].block_shape = [m, k] if nargs["A_ROW_MAJOR"] else [k, m]
    nargs["b_desc"].block_shape = [k, n]
    nargs["c_desc"].block_shape = [m, n]
    HOOK_RUNS.append("layout")


@triton.autotune(configs=tile_configs(set_tiles_by_layout), key=["K"])
@triton.jit
def matmul_tma_layouts(a_desc, b_desc, c_desc, K, A_ROW_MAJOR: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C = A @ B with A stored row-major ([M, K]) or column-major ([K, M]).
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if A_ROW_MAJOR:
            a = a_desc.load([m, k])
        else:
            a = a_desc.load([k, m]).T
        acc = tl.dot(a, b_desc.load([k, n]), acc)
    c_desc.store([m, n], acc.to(tl.float16))


# The same kernel and hook under a tuner of its own (its own memo): what test_frontend.py
# launches under install().
matmul_tma_layouts_installed = triton.autotune(configs=tile_configs(set_tiles_by_layout), key=["K"])(
    matmul_tma_layouts.fn)


def set_tiles_from_shape(nargs):
    # Reads a descriptor's own fields: no memo can be keyed on them, so it runs on every call.
    k = min(nargs["BLOCK_K"], nargs["a_desc"].shape[1])
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], k]
    nargs["b_desc"].block_shape = [k, nargs["BLOCK_N"]]
    nargs["c_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]
    HOOK_RUNS.append("shape")


@triton.autotune(configs=tile_configs(set_tiles_from_shape), key=["K"])
@triton.jit
def matmul_tma_shape_hook(a_desc, b_desc, c_desc, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr):
    _matmul_tile(a_desc, b_desc, c_desc, K, BLOCK_M, BLOCK_N, BLOCK_K)


def zero_then_set_tiles(nargs):
    # Zeroes the output as well as setting the tile: no memo can repeat that, so it runs on
    # every call.
    nargs["out_ptr"].zero_()
    nargs["src"].block_shape = [nargs["BLOCK"], nargs["BLOCK"]]
    HOOK_RUNS.append("zero")


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, pre_hook=zero_then_set_tiles)], key=[])
@triton.jit
def load_zeroed(src, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], src.load([0, 0]))


def tile_if_descriptor(nargs):
    # As Triton's fused-attention tutorial: only a descriptor gets its tile set.
    from triton.tools.tensor_descriptor import TensorDescriptor
    if isinstance(nargs["src"], TensorDescriptor):
        nargs["src"].block_shape = [nargs["BLOCK"], nargs["BLOCK"]]
    HOOK_RUNS.append("either")


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, pre_hook=tile_if_descriptor)], key=[])
@triton.jit
def load_either_tiled(src, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if isinstance(src, tl.tensor_descriptor):
        tile = src.load([0, 0])
    else:
        tile = tl.load(src + offs[:, None] * BLOCK + offs[None, :])
    tl.store(out_ptr + offs[:, None] * BLOCK + offs[None, :], tile)
