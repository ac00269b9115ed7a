"""Integer parameters, runtime and constexpr, for integer literals written on the command line."""
import triton
import triton.language as tl


@triton.jit
def integers(p, a, b, c, d, top, bottom, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    tl.store(p, 1.0)
