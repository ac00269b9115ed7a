"""Kernels launched by the GPU tests (tests/gpu). Each one's results are checked on the host."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, UPCAST: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if UPCAST:
        # fp8 has no arithmetic of its own: add in fp32 (exact for fp8 inputs), round once.
        z = (x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty)
    else:
        z = x + y
    tl.store(out_ptr + offs, z, mask=mask)


@triton.jit
def row_sum_kernel(in_ptr, out_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * row_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * out_row_stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def iota_kernel(out_ptr, base, n, stride, BLOCK: tl.constexpr):
    # out[i * stride] = base + i: `base` >= 2**31 takes the i64 path, `stride` == 1 the constexpr one.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs * stride, base + offs, mask=offs < n)


@triton.jit
def bias_add_kernel(x_ptr, bias_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if bias_ptr is not None:
        x = x + tl.load(bias_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def tma_scale_kernel(in_ptr, out_ptr, M, N, scale, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Descriptors built on the device need global scratch memory (one tensor map per program).
    src = tl.make_tensor_descriptor(in_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
    m = tl.program_id(0) * BLOCK_M
    n = tl.program_id(1) * BLOCK_N
    dst.store([m, n], src.load([m, n]) * scale)


@triton.jit
def pdl_producer_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.extra.cuda.gdc_wait()  # the previous kernel's writes are visible after this
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.extra.cuda.gdc_launch_dependents()  # let the next kernel start its prologue early
    tl.store(y_ptr + offs, x + 1.0, mask=mask)


@triton.jit
def pdl_consumer_kernel(y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.extra.cuda.gdc_wait()  # y is complete only after this
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, y * 2.0, mask=mask)


@triton.jit
def axpb_kernel(x_ptr, out_ptr, n, a, b, BLOCK: tl.constexpr):
    # Used only by the concurrent-first-call test, so no other test compiles it first.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * a + b, mask=mask)


@triton.jit
def grid_kernel(out_ptr, BLOCK: tl.constexpr):
    # out[(z * gy + y) * gx + x] block of BLOCK = linear program id: checks every grid axis.
    pid = (tl.program_id(2) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(0) + tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, pid + tl.zeros([BLOCK], dtype=tl.int32))
