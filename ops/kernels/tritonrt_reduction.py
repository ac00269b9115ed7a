"""Reductions of tritonrt's operator library: sum and softmax along one dim.

The input is viewed as (outer, R, inner) with strides; the reduced dim is R. Program p
handles BLOCK_J consecutive output rows j = outer_index * inner + inner_index and walks R in
chunks of BLOCK_R, so the same code serves the last dim (inner == 1) and any other.
The file name is prefixed because tritonrt imports kernel files under their own names.
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["rows", "R"])
def sum_kernel(in_ptr, out_ptr, rows, R, inner, stride_outer, stride_r, stride_inner,
               BLOCK_J: tl.constexpr, BLOCK_R: tl.constexpr, ACC: tl.constexpr):
    j = tl.program_id(0).to(tl.int64) * BLOCK_J + tl.arange(0, BLOCK_J)
    j_mask = j < rows
    base = (j // inner) * stride_outer + (j % inner) * stride_inner
    r = tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_J, BLOCK_R], dtype=ACC)
    for start in range(0, R, BLOCK_R):
        rr = start + r
        mask = j_mask[:, None] & (rr < R)[None, :]
        x = tl.load(in_ptr + base[:, None] + rr.to(tl.int64)[None, :] * stride_r, mask=mask, other=0)
        # As aten: the input is converted to the output dtype first, then accumulated.
        acc += x.to(out_ptr.dtype.element_ty).to(ACC)
    tl.store(out_ptr + j, tl.sum(acc, axis=1).to(out_ptr.dtype.element_ty), mask=j_mask)


@triton.jit(do_not_specialize=["rows", "R"])
def softmax_kernel(in_ptr, out_ptr, rows, R, inner, stride_outer, stride_r, stride_inner,
                   BLOCK_J: tl.constexpr, BLOCK_R: tl.constexpr, ACC: tl.constexpr):
    """Online softmax: one pass for the running max and sum, one to write. Contiguous output."""
    j = tl.program_id(0).to(tl.int64) * BLOCK_J + tl.arange(0, BLOCK_J)
    j_mask = j < rows
    outer = j // inner
    in_base = outer * stride_outer + (j % inner) * stride_inner
    out_base = outer * R * inner + j % inner
    r = tl.arange(0, BLOCK_R)
    row_max = tl.full([BLOCK_J], float("-inf"), ACC)
    row_sum = tl.zeros([BLOCK_J], ACC)
    for start in range(0, R, BLOCK_R):
        rr = start + r
        mask = j_mask[:, None] & (rr < R)[None, :]
        x = tl.load(in_ptr + in_base[:, None] + rr.to(tl.int64)[None, :] * stride_r, mask=mask,
                    other=float("-inf")).to(ACC)
        new_max = tl.maximum(row_max, tl.max(x, axis=1))
        # While a row has seen only -inf, rescale by 0 instead of exp(-inf - -inf) = nan.
        shift = tl.where(new_max == float("-inf"), 0.0, new_max)
        row_sum = row_sum * tl.exp(row_max - shift) + tl.sum(tl.exp(x - shift[:, None]), axis=1)
        row_max = new_max
    for start in range(0, R, BLOCK_R):
        rr = start + r
        mask = j_mask[:, None] & (rr < R)[None, :]
        x = tl.load(in_ptr + in_base[:, None] + rr.to(tl.int64)[None, :] * stride_r, mask=mask,
                    other=float("-inf")).to(ACC)
        y = tl.exp(x - row_max[:, None]) / row_sum[:, None]
        tl.store(out_ptr + out_base[:, None] + rr.to(tl.int64)[None, :] * inner, y.to(out_ptr.dtype.element_ty),
                 mask=mask)
