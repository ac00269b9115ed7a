"""Constexpr defaults that JSON cannot hold as numbers: nan, inf and -inf."""
import triton
import triton.language as tl


@triton.jit
def nonfinite(p, n, NAN: tl.constexpr = float("nan"), INF: tl.constexpr = float("inf"),
              NEG_INF: tl.constexpr = float("-inf"), BLOCK: tl.constexpr = 16):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, NAN + INF + NEG_INF, mask=offs < n)
