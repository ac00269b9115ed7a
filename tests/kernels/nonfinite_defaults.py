"""A kernel whose constexpr defaults are not finite: Triton allows them, JSON cannot hold them."""
import triton
import triton.language as tl


@triton.jit
def scale(p, n, FACTOR: tl.constexpr = float("nan"), LIMIT: tl.constexpr = float("inf"),
          FLOOR: tl.constexpr = float("-inf"), BLOCK: tl.constexpr = 64):
    offs = tl.arange(0, BLOCK)
    x = tl.load(p + offs, mask=offs < n)
    tl.store(p + offs, tl.minimum(tl.maximum(x * FACTOR, FLOOR), LIMIT), mask=offs < n)
