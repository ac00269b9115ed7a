"""Elementwise kernels of tritonrt's operator library: out = a + alpha * b.

The file name is prefixed because tritonrt imports kernel files under their own names.
"""
import triton
import triton.language as tl


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr, COMPUTE: tl.constexpr):
    """Contiguous operands of the output's shape. `a_ptr` None stands for zeros (axpy's y)."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    result = tl.load(b_ptr + offsets, mask=mask).to(COMPUTE) * alpha
    if a_ptr is not None:
        result = tl.load(a_ptr + offsets, mask=mask).to(COMPUTE) + result
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


# Sizes and strides vary with every shape; specializing on them would compile per shape.
@triton.jit(do_not_specialize=["n", "size1", "size2", "size3", "a_stride0", "a_stride1", "a_stride2", "a_stride3",
                               "b_stride0", "b_stride1", "b_stride2", "b_stride3"])
def add_strided_kernel(a_ptr, b_ptr, out_ptr, alpha, n, size1, size2, size3,
                       a_stride0, a_stride1, a_stride2, a_stride3,
                       b_stride0, b_stride1, b_stride2, b_stride3,
                       BLOCK: tl.constexpr, COMPUTE: tl.constexpr):
    """Operands of up to four dims given by strides (0 along broadcast dims); contiguous output."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    i3 = offsets % size3
    rest = offsets // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    b = tl.load(b_ptr + i0 * b_stride0 + i1 * b_stride1 + i2 * b_stride2 + i3 * b_stride3, mask=mask)
    result = b.to(COMPUTE) * alpha
    if a_ptr is not None:
        a = tl.load(a_ptr + i0 * a_stride0 + i1 * a_stride1 + i2 * a_stride2 + i3 * a_stride3, mask=mask)
        result = a.to(COMPUTE) + result
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)
