"""A Gluon kernel (triton.experimental.gluon: layouts written by hand), got, specialized,
compiled and launched by tritonrt as a @triton.jit one: tests/cpu/test_compile.cpp (the hash
Triton gives) and tests/gpu/test_kernels.cpp (its results)."""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit
def gluon_scale(in_ptr, out_ptr, n, factor, BLOCK: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([BLOCK // 128], [32], [4], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout)
    mask = offs < n
    gl.store(out_ptr + offs, gl.load(in_ptr + offs, mask=mask) * factor, mask=mask)
