"""Gluon kernels (triton.experimental.gluon: layouts written by hand), got, specialized,
compiled and launched by tritonrt as @triton.jit ones: tests/cpu/test_compile.cpp and
tests/cpu/test_descriptor.cpp (the hash Triton gives) and tests/gpu/ (their results); one of
them takes Gluon's host TMA descriptors, which carry a shared-memory layout."""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma

# Triton 3.9 renamed the TMA copies (the old names raise there).
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global


@gluon.jit
def gluon_scale(in_ptr, out_ptr, n, factor, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([BLOCK // 128], [32], [4], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(in_ptr + offs, mask=mask) * factor, mask=mask)


@gluon.jit
def gluon_tma_scale(in_desc, out_desc, factor):
    # out = in * factor, one block_shape tile per program (a row of tiles per program_id(0)),
    # through Hopper's TMA: a host descriptor with its shared-memory layout
    # (gluon.nvidia.hopper.TensorDescriptor), copied in, scaled in registers, copied out.
    BLOCK_M: gl.constexpr = in_desc.block_shape[0]
    BLOCK_N: gl.constexpr = in_desc.block_shape[1]
    registers: gl.constexpr = gl.BlockedLayout([1, BLOCK_N // 32], [1, 32], [4, 1], [1, 0])
    tile = gl.allocate_shared_memory(in_desc.dtype, in_desc.block_shape, in_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    m = gl.program_id(0) * BLOCK_M
    n = gl.program_id(1) * BLOCK_N
    mbarrier.expect(bar, in_desc.block_type.nbytes)
    tma_load(in_desc, [m, n], bar, tile)
    mbarrier.wait(bar, phase=0)
    mbarrier.invalidate(bar)
    scaled = tile.load(registers) * factor
    tile.store(scaled.to(in_desc.dtype))
    fence_async_shared()
    tma_store(out_desc, [m, n], tile)
    tma.store_wait(pendings=0)
