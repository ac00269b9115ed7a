"""A small kernel that compiles quickly: the cache-damage, ptxas and file-name tests use it."""
import triton
import triton.language as tl


@triton.jit
def fill(p, n, BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, 1.0, mask=offs < n)
