"""Layer norm forward of tritonrt's operator library, one program per row of N elements.

The file name is prefixed because tritonrt imports kernel files under their own names.
"""
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["N"])
def layer_norm_kernel(x_ptr, weight_ptr, bias_ptr, out_ptr, N, eps, BLOCK: tl.constexpr, ACC: tl.constexpr):
    """Mean, then the variance around it (two passes, as stable as aten's), then the output.
    `weight_ptr` / `bias_ptr` None leave out the scale / shift."""
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    out_row = out_ptr + row * N
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], ACC)
    for start in range(0, N, BLOCK):
        c = start + cols
        acc += tl.load(x_row + c, mask=c < N, other=0).to(ACC)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], ACC)
    for start in range(0, N, BLOCK):
        c = start + cols
        x = tl.load(x_row + c, mask=c < N, other=0).to(ACC)
        d = tl.where(c < N, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        c = start + cols
        mask = c < N
        y = (tl.load(x_row + c, mask=mask, other=0).to(ACC) - mean) * rstd
        if weight_ptr is not None:
            y = y * tl.load(weight_ptr + c, mask=mask, other=0).to(ACC)
        if bias_ptr is not None:
            y = y + tl.load(bias_ptr + c, mask=mask, other=0).to(ACC)
        tl.store(out_row + c, y.to(out_ptr.dtype.element_ty), mask=mask)
