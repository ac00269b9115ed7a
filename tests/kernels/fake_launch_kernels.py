"""Kernels for tests/cpu/test_fake_driver_launch.cpp: compiled by Triton for real, then launched
against the stand-in driver (tests/support/fake_cuda), which records each launch instead of
running it."""
import triton
import triton.language as tl


@triton.jit
def typed_args(out_ptr, in_ptr, n, big, scale, half, BLOCK: tl.constexpr):
    # One runtime parameter of each kind the launcher packs: pointers, i32, i64, fp32, fp16.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(in_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale + half.to(tl.float32) + big.to(tl.float32), mask=mask)


@triton.jit
def big_shared(a_ptr, b_ptr, c_ptr, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A pipelined tile product: its staged operand tiles need more than 48 KiB of shared memory.
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(b_ptr + (k + offs_k)[:, None] * BLOCK_N + offs_n[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs_m[:, None] * BLOCK_N + offs_n[None, :], acc)
