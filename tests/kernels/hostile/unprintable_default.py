"""A kernel whose parameter default cannot be printed: its repr() raises."""
import triton
import triton.language as tl


class Unprintable:

    def __repr__(self):
        raise ValueError("this object refuses to be printed")


@triton.jit
def k(p, n, BLOCK: tl.constexpr = 16, EXTRA: tl.constexpr = Unprintable()):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, 1.0, mask=offs < n)
