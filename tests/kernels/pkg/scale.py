"""A kernel inside a package, calling a helper through a relative import."""
import triton
import triton.language as tl

from .helpers import twice


@triton.jit
def double_kernel(p, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p + offs, twice(tl.load(p + offs, mask=mask)), mask=mask)
