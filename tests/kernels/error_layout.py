"""Kernels Triton refuses to compile, for the layout of the error tritonrt reports
(ErrorLayout in tests/cpu/test_errors.cpp, tests/python/test_error_layout.py): Triton's text keeps its
lines, and its caret stays under the column it points at."""
import triton
import triton.language as tl


@triton.jit
def undefined_name(x_ptr, n):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs,       no_such_name, mask=offs < n)


@triton.jit
def _odd_range(x_ptr):
    return tl.arange(0, 3)


@triton.jit
def calls_a_broken_helper(x_ptr, n):
    offs = _odd_range(x_ptr)
    tl.store(x_ptr + offs, 1.0)
