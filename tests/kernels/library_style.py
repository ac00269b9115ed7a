"""Kernels wrapped the way public Triton libraries wrap them, for tritonrt's decorator tests.

FlagGems puts `@libentry()` (a KernelInterface holding the kernel in `.fn`) and `@libtuner(...)`
(an Autotuner subclass) above `@triton.jit`; Liger-Kernel and Triton's tutorials use
`@triton.autotune` with `reset_to_zero`, `restore_value` and `prune_configs_by`; heuristics read
argument values, tensor dtypes, shapes, strides and device properties. The wrappers below are
our own code in those styles, so tritonrt can be tested on every stack order without the
libraries installed. Semantics are Triton 3.6.0's (triton/runtime/autotuner.py).

The module imports without torch and without a GPU: heuristics that look at torch use
`sys.modules.get("torch")`, which is set whenever a caller has passed a torch tensor.
"""
import sys

import triton
import triton.language as tl
from triton.runtime import Autotuner, JITFunction, KernelInterface

# ---------------------------------------------------------------------------------------------
# Host-side helpers read by the heuristics
# ---------------------------------------------------------------------------------------------


def _torch_dtypes(*names):
    # torch's dtypes when the caller already imported torch; never imports it here.
    torch = sys.modules.get("torch")
    return tuple(getattr(torch, name) for name in names) if torch is not None else ()


def _dtype_str(tensor):
    # str(torch_tensor.dtype) is 'torch.float16': comparable without importing torch.
    return str(tensor.dtype)


def _sm_count():
    # Device property read by a heuristic, as FlagGems' softmax/argmax heuristics do.
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    return 132  # an H100 SXM's count, where no device can be asked


# ---------------------------------------------------------------------------------------------
# A library entry wrapper (FlagGems' LibEntry style) and an Autotuner subclass (LibTuner style)
# ---------------------------------------------------------------------------------------------


class LibEntry(KernelInterface):
    """Holds the wrapped chain in `.fn`, keeps its own per-argument-key cache, forwards `run`."""

    def __init__(self, fn):
        self.fn = fn
        # Decorators stacked above read `arg_names`, as Triton's own wrappers do.
        self.arg_names = fn.arg_names
        jit_function = fn
        while not isinstance(jit_function, JITFunction):
            jit_function = jit_function.fn
        self.jit_function = jit_function
        self.__name__ = jit_function.__name__
        self.kernel_cache = {}

    def entry_key(self, args, kwargs):
        # Like FlagGems: tensors by (dtype, 16-byte aligned), everything else by type and value.
        values = list(args) + [kwargs[name] for name in sorted(kwargs) if name not in ("grid", "warmup")]
        return tuple((str(v.dtype), v.data_ptr() % 16 == 0) if hasattr(v, "data_ptr") else (type(v).__name__, v)
                     for v in values)

    def run(self, *args, grid, warmup=False, **kwargs):
        kernel = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)
        # Remembers the first kernel per key; the launch itself always goes through `.fn`.
        self.kernel_cache.setdefault(self.entry_key(args, kwargs), kernel)
        return kernel


def libentry():
    """Decorator form, as FlagGems spells it: `@libentry()`."""

    def decorator(fn):
        return LibEntry(fn)

    return decorator


class SizePrunedTuner(Autotuner):
    """An Autotuner subclass whose one override drops configs whose BLOCK exceeds the problem size."""

    def __init__(self, *args, size_arg, **kwargs):
        super().__init__(*args, **kwargs)
        self.size_arg = size_arg

    def prune_configs(self, kwargs):
        configs = super().prune_configs(kwargs)
        limit = triton.next_power_of_2({**self.nargs, **kwargs}[self.size_arg])
        kept = [c for c in configs if c.kwargs.get("BLOCK", 0) <= limit]
        # Keep the smallest config when every one is too large, so tuning never runs out of configs.
        return kept or [min(configs, key=lambda c: c.kwargs.get("BLOCK", 0))]


def libtuner(configs, key, size_arg, reset_to_zero=None, restore_value=None, **kwargs):
    """Decorator building a SizePrunedTuner, with FlagGems' `libtuner` argument order."""

    def decorator(fn):
        return SizePrunedTuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, size_arg=size_arg,
                               **kwargs)

    return decorator


class OpaqueLauncher:
    """A launcher with no `.fn` and no `arg_names`: a runtime cannot find the kernel below it."""

    def __init__(self, kernel):
        # Only a bound method is kept, so no attribute names the JITFunction.
        self._launch = kernel.run

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self._launch(*args, grid=grid, warmup=False, **kwargs)


def opaque(fn):
    """Decorator that jit-compiles `fn` and hides it inside an OpaqueLauncher."""
    return OpaqueLauncher(triton.jit(fn))


# ---------------------------------------------------------------------------------------------
# @libentry() @triton.autotune(...) @triton.jit
# ---------------------------------------------------------------------------------------------


@libentry()
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=4, num_stages=2),
        # maxnreg joins Config.all_kwargs() and str(config) (part of the disk cache key).
        triton.Config({"BLOCK": 2048}, num_warps=8, maxnreg=128),
    ],
    key=["n"],
    # Tuning results go to TRITON_CACHE_DIR/<key>/entry_autotuned_add.autotune.json.
    cache_results=True,
)
@triton.jit
def entry_autotuned_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


# ---------------------------------------------------------------------------------------------
# @libentry() @triton.heuristics(...) @triton.jit
# ---------------------------------------------------------------------------------------------


def _block_for_waves(args):
    # Grows BLOCK until the grid fits in four waves of the device's SMs: reads n and the device.
    block = 256
    while block < 4096 and triton.cdiv(args["n"], block) > 4 * _sm_count():
        block *= 2
    return block


@libentry()
@triton.heuristics({
    "BLOCK": _block_for_waves,
    # Heuristics run in dict order, so this one reads the BLOCK chosen just above.
    "EVEN": lambda args: args["n"] % args["BLOCK"] == 0,
})
@triton.jit
def entry_heuristic_scale(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * scale)
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


# ---------------------------------------------------------------------------------------------
# @triton.autotune(...) @triton.heuristics(...) @triton.jit  (heuristics below: run per config)
# ---------------------------------------------------------------------------------------------


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64}, num_warps=2),
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 256}, num_warps=4),
    ],
    key=["n"],
)
# Below the Autotuner this runs once per benchmarked config and at the final launch, and reads
# the config's BLOCK (the Autotuner passes config.all_kwargs() down as keyword arguments).
@triton.heuristics({"EVEN_N": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def tuned_then_heuristic_copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN_N:
        tl.store(dst_ptr + offs, tl.load(src_ptr + offs))
    else:
        tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=offs < n), mask=offs < n)


# ---------------------------------------------------------------------------------------------
# @triton.heuristics(...) @triton.autotune(...) @triton.jit  (heuristics above: run once per call)
# ---------------------------------------------------------------------------------------------


# Triton 3.6 runs this heuristic once per call, before the Autotuner, so it sees only the call's
# own arguments, never a tuned value (args["BLOCK"] raises KeyError). Its result reaches every
# config as a keyword argument; it is not part of the tuning key (a bool has no dtype and
# HAS_BIAS is not in key). Setting a tuned name here raises ValueError("Conflicting
# meta-parameters"); setting num_warps/num_stages raises TypeError (multiple values) at launch.
@triton.heuristics({"HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 512}, num_warps=4),
    ],
    key=["n"],
)
@triton.jit
def heuristic_over_tuned_fill(out_ptr, bias_ptr, n, value, BLOCK: tl.constexpr, HAS_BIAS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.full([BLOCK], value, tl.float32)
    if HAS_BIAS:
        y += tl.load(bias_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


# ---------------------------------------------------------------------------------------------
# Chained heuristics, and a heuristic that sets num_warps
# ---------------------------------------------------------------------------------------------


def _softmax_num_warps(args):
    # A launch option chosen from the BLOCK heuristic's result, as FlagGems' softmax does.
    block = args["BLOCK"]
    return 4 if block < 2048 else 8 if block < 8192 else 16


@triton.heuristics({
    "BLOCK": lambda args: triton.next_power_of_2(args["n_cols"]),
    # Not a kernel parameter: JITFunction.run takes it as the num_warps compile option.
    "num_warps": _softmax_num_warps,
})
@triton.jit
def chained_heuristics_softmax(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


# The outer Heuristics runs first and passes BLOCK down; the inner one reads it.
@triton.heuristics({"BLOCK": lambda args: min(triton.next_power_of_2(args["n"]), 1024)})
@triton.heuristics({"NEEDS_MASK": lambda args: args["n"] % args["BLOCK"] != 0})
@triton.jit
def stacked_heuristics_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr, NEEDS_MASK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        if NEEDS_MASK:
            acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
        else:
            acc += tl.load(x_ptr + offs).to(tl.float32)
    tl.store(out_ptr, tl.sum(acc, axis=0))


# ---------------------------------------------------------------------------------------------
# Heuristics reading tensor dtypes, shapes and strides (callers pass torch tensors here)
# ---------------------------------------------------------------------------------------------


@triton.heuristics({
    # String comparison: works for any object whose dtype prints as torch's does.
    "UPCAST": lambda args: _dtype_str(args["x_ptr"]) in ("torch.float16", "torch.bfloat16"),
    # Comparison with torch dtypes, as FlagGems writes `args["inp"].dtype == torch.float32`.
    "BLOCK": lambda args: 2048 if args["x_ptr"].dtype in _torch_dtypes("float16", "bfloat16") else 1024,
})
@triton.jit
def dtype_heuristic_square(x_ptr, out_ptr, n, BLOCK: tl.constexpr, UPCAST: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if UPCAST:
        # Square in fp32 and round once: half precision loses bits in the product otherwise.
        y = (x.to(tl.float32) * x.to(tl.float32)).to(out_ptr.dtype.element_ty)
    else:
        y = x * x
    tl.store(out_ptr + offs, y, mask=mask)


@triton.heuristics({
    # x_ptr must be a torch.Tensor: these read .shape and .stride(), not only .dtype.
    "BLOCK_N": lambda args: min(triton.next_power_of_2(args["x_ptr"].shape[1]), 256),
    "BLOCK_M": lambda args: min(64, max(1, 4096 // args["BLOCK_N"])),
    "INNER_CONTIGUOUS": lambda args: args["x_ptr"].stride(1) == 1,
})
@triton.jit
def strided_copy_2d(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, INNER_CONTIGUOUS: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if INNER_CONTIGUOUS:
        src = x_ptr + rows[:, None] * stride_xm + cols[None, :]
    else:
        src = x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], tl.load(src, mask=mask), mask=mask)


# ---------------------------------------------------------------------------------------------
# An autotuned matmul in the style of Triton's tutorial 03 (grouped program ordering)
# ---------------------------------------------------------------------------------------------


@triton.jit
def leaky_relu(x):
    # Called from the matmul: its cache_key joins the caller's.
    return tl.where(x >= 0, x, 0.01 * x)


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, num_stages=3,
                      num_warps=8),
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4,
                      num_warps=4),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4,
                      num_warps=4),
        triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5,
                      num_warps=2),
    ],
    key=["M", "N", "K"],
    cache_results=True,
)
@triton.jit
def tutorial_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                    GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    # Groups of GROUP_SIZE_M rows of tiles share B's columns while they are in L2.
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        k_left = K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        acc = leaky_relu(acc)
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# ---------------------------------------------------------------------------------------------
# Autotuning kernels with side effects: reset_to_zero and restore_value
# ---------------------------------------------------------------------------------------------


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 512}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
    # Every benchmarked run adds into out: it is zeroed before each one and once after tuning.
    reset_to_zero=["out_ptr"],
)
@triton.jit
def atomic_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 1024}, num_warps=4),
    ],
    key=["n"],
    # The kernel scales x in place: each benchmarked run starts from the caller's values.
    restore_value=["x_ptr"],
)
@triton.jit
def inplace_scale(x_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


# ---------------------------------------------------------------------------------------------
# Config pruning: early_config_prune, perf_model and top_k
# ---------------------------------------------------------------------------------------------


def _drop_oversized(configs, named_args, **kwargs):
    # Gets (configs, positional args by name, **the call's keyword args incl. grid and warmup).
    limit = triton.next_power_of_2({**named_args, **kwargs}["n"])
    kept = [c for c in configs if c.kwargs["BLOCK"] <= max(limit, 128)]
    return kept or configs[:1]


def _estimated_ms(**kwargs):
    # Gets every argument by name plus config.all_kwargs(); lower is better.
    blocks = triton.cdiv(kwargs["n"], kwargs["BLOCK"])
    return blocks * (1.0 + kwargs["BLOCK"] / 4096) + 0.25 * kwargs["num_warps"]


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=2),
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 512}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
    ],
    key=["n"],
    prune_configs_by={"early_config_prune": _drop_oversized, "perf_model": _estimated_ms, "top_k": 2},
)
@triton.jit
def pruned_axpy(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask) + alpha * tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, y, mask=mask)


# ---------------------------------------------------------------------------------------------
# FlagGems-shaped stacks: @libentry() @libtuner(...) @triton.jit and
# @libentry() @triton.autotune(...) @triton.heuristics(...) @triton.jit
# ---------------------------------------------------------------------------------------------


@libentry()
@libtuner(
    configs=[
        triton.Config({"BLOCK": 128}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
    size_arg="n",
)
@triton.jit
def entry_libtuner_axpby(x_ptr, y_ptr, out_ptr, n, alpha, beta, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    out = alpha * tl.load(x_ptr + offs, mask=mask) + beta * tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, out, mask=mask)


@libentry()
@triton.autotune(
    configs=[
        triton.Config({"TILE_M": 1}, num_warps=4),
        triton.Config({"TILE_M": 4}, num_warps=4),
        triton.Config({"TILE_M": 8}, num_warps=8),
    ],
    key=["M", "N"],
)
@triton.heuristics({
    # Reads the config's TILE_M, then ONE_TILE reads TILE_N: per config, in order.
    "TILE_N": lambda args: min(triton.next_power_of_2(args["N"]), 4096 // args["TILE_M"]),
    "ONE_TILE": lambda args: args["TILE_N"] >= args["N"],
})
@triton.jit
def entry_tuned_heuristic_rowsum(x_ptr, out_ptr, M, N, stride_xm, TILE_M: tl.constexpr, TILE_N: tl.constexpr,
                                 ONE_TILE: tl.constexpr):
    rows = tl.program_id(0) * TILE_M + tl.arange(0, TILE_M)
    acc = tl.zeros([TILE_M, TILE_N], dtype=tl.float32)
    if ONE_TILE:
        cols = tl.arange(0, TILE_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    else:
        for start in range(0, N, TILE_N):
            cols = start + tl.arange(0, TILE_N)
            mask = (rows[:, None] < M) & (cols[None, :] < N)
            acc += tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


# ---------------------------------------------------------------------------------------------
# A wrapper tritonrt cannot see through
# ---------------------------------------------------------------------------------------------


# `opaque_scale` is an OpaqueLauncher: no `.fn`, no `arg_names`; launch it as opaque_scale[grid](...).
@opaque
def opaque_scale(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)
