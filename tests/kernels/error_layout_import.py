"""A kernel module that raises while it is imported, two frames deep in its own lines
(ErrorLayout in tests/cpu/test_errors.cpp, tests/python/test_error_layout.py)."""
import triton


def _scale():
    return 1 / 0  # the failing line: 7


SCALE = _scale()  # the calling line: 10


@triton.jit
def kernel(x_ptr, n):
    pass
