"""Hopper-era kernels written the way Triton's tutorials (persistent matmul, fused attention)
and Hopper operator libraries write them: host TensorDescriptors passed with a placeholder
block shape, each autotune config's pre_hook setting the tiles that config loads, and a
persistent tile loop. tests/gpu/test_descriptor.cpp and tests/python/test_frontend_gpu.py run
them against torch on a GPU."""
import triton
import triton.language as tl


def _matmul_tiles(nargs):
    nargs["a_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_K"]]
    nargs["b_desc"].block_shape = [nargs["BLOCK_N"], nargs["BLOCK_K"]]
    nargs["c_desc"].block_shape = [nargs["BLOCK_M"], nargs["BLOCK_N"]]


def _matmul_config(m, n, k, stages, warps):
    return triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=stages,
                         num_warps=warps, pre_hook=_matmul_tiles)


@triton.autotune(configs=[
    _matmul_config(128, 128, 64, 3, 8),
    _matmul_config(128, 256, 64, 3, 8),
    _matmul_config(64, 128, 64, 4, 4),
], key=["M", "N", "K"])
@triton.jit
def matmul_persistent(a_desc, b_desc, c_desc, M, N, K, NUM_SMS: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # C = A @ B^T for A (M x K), B (N x K), fp16 in and out, fp32 accumulation. NUM_SMS
    # programs walk the output tiles NUM_SMS apart; tiles are numbered in groups of GROUP_M
    # rows so that programs running together share the B tiles they load.
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_SMS):
        first_m = (tile // per_group) * GROUP_M
        rows = min(tiles_m - first_m, GROUP_M)
        tm = first_m + (tile % per_group) % rows
        tn = (tile % per_group) // rows
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = a_desc.load([tm * BLOCK_M, k])
            b = b_desc.load([tn * BLOCK_N, k])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([tm * BLOCK_M, tn * BLOCK_N], acc.to(tl.float16))


def _attention_tiles(nargs):
    rows, columns, head = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    nargs["desc_q"].block_shape = [rows, head]
    nargs["desc_o"].block_shape = [rows, head]
    nargs["desc_k"].block_shape = [columns, head]
    nargs["desc_v"].block_shape = [columns, head]


def _fits(configs, named_args, **kwargs):
    # K and V tiles of BLOCK_N x HEAD_DIM fp16, double-buffered, within shared memory.
    head = kwargs.get("HEAD_DIM", named_args.get("HEAD_DIM"))
    return [c for c in configs if c.kwargs["BLOCK_N"] * head <= 8192]


@triton.autotune(configs=[
    triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=w, pre_hook=_attention_tiles)
    for m, n, s, w in ((128, 64, 3, 8), (128, 128, 3, 8), (64, 64, 4, 4))
], key=["N_CTX", "HEAD_DIM"], prune_configs_by={"early_config_prune": _fits})
@triton.jit
def attention_forward(sm_scale, desc_q, desc_k, desc_v, desc_o, N_CTX, HEAD_DIM: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # softmax(Q K^T * sm_scale) V for each (batch, head), Q, K, V, O given as (Z * H * N_CTX) x
    # HEAD_DIM row-major fp16 through their descriptors; N_CTX a multiple of both blocks. One
    # program takes BLOCK_M queries and streams K and V through in BLOCK_N rows, keeping the
    # running maximum and sum of the softmax (in base 2) per query row.
    row0 = tl.program_id(1) * N_CTX
    q_row = row0 + tl.program_id(0) * BLOCK_M
    q = desc_q.load([q_row, 0])
    scale = sm_scale * 1.4426950408889634  # 1 / ln(2)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start in range(0, N_CTX, BLOCK_N):
        k = desc_k.load([row0 + start, 0])
        s = tl.dot(q, k.T) * scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = desc_v.load([row0 + start, 0])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_new
    desc_o.store([q_row, 0], (acc / l_i[:, None]).to(tl.float16))
