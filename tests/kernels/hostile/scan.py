"""A scan: with num_ctas=3 Triton's layout pass fails an assertion and dumps its IR."""
import triton
import triton.language as tl


@triton.jit
def scan(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(p + offs, mask=offs < n)
    tl.store(p + offs, tl.cumsum(x, 0), mask=offs < n)
