"""The Python front end on a GPU: results equal to Triton's own launch for third-party
libraries' kernels on fresh random inputs, CUDA graph capture and replay, torch.compile with
fullgraph=True over a launcher, two threads launching at once, install() under a library's own
functions (FlagGems' and Liger's operators bit for bit), and a second device. Each test skips
without a GPU."""
import os
import sys
import threading
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA GPU", allow_module_level=True)

import triton  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "kernels"))
import frontend_kernels as K  # noqa: E402

os.environ.setdefault("GEMS_VENDOR", "nvidia")
os.environ.setdefault("FLAGGEMS_DB_URL", "sqlite:///:memory:")


@pytest.fixture(scope="module")
def rt(tritonrt_package):
    return tritonrt_package


def library(name):
    """Module `name` of a kernel library; the test skips, saying so, where the library is not
    installed (requirements-libraries.txt; .ci/gpu-run's gpu stage installs them)."""
    import importlib
    import importlib.util
    if importlib.util.find_spec(name.split(".")[0]) is None:
        pytest.skip(f"{name.split('.')[0]} is not installed (pip install -r requirements-libraries.txt)")
    return importlib.import_module(name)


def cases():
    """name: (kernel, grid, make(): (args, kwargs, outputs)), each call as its library makes it."""
    def rms_norm():
        M, N = 64, 1000
        x, w = torch.randn(M, N, device="cuda"), torch.randn(N, device="cuda")
        y, rstd = torch.empty_like(x), torch.empty(M, device="cuda")
        return (y, y.stride(0), x, x.stride(0), w, w.stride(0), rstd, rstd.stride(0), N, 1e-6, 0.0, 1), dict(
            elementwise_affine=True, BLOCK_SIZE=1024, num_warps=4), (y, rstd)

    def dyt():
        M, N = 32, 4096
        x, y = torch.randn(M, N, device="cuda"), torch.empty(M, N, device="cuda")
        alpha, gamma, beta = torch.randn(1, device="cuda"), torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
        return (x, y, alpha, gamma, beta, True, N), {}, (y, )

    def softmax():
        M, N = 48, 3000
        x = torch.randn(M, N, device="cuda", dtype=torch.float16)
        out = torch.empty_like(x)
        return (out, x, M, N), {}, (out, )

    def cumsum():
        B, T, H, BT = 2, 256, 3, 64
        s, o = torch.randn(B, T, H, device="cuda"), torch.empty(B, T, H, device="cuda")
        return (), dict(s=s, o=o, scale=None, cu_seqlens=None, chunk_indices=None, T=T, B=B, H=H, BT=BT,
                        REVERSE=False, USE_GRAPH=False), (o, )

    return {
        "liger rms_norm": (library("liger_kernel.ops.rms_norm")._rms_norm_forward_kernel, (64, ), rms_norm),
        "liger dyt": (library("liger_kernel.ops.dyt")._dyt_fwd_kernel,
                      lambda meta: (triton.cdiv(4096, meta["BLOCK_N"]), 32), dyt),
        "flag_gems softmax": (library("flag_gems.ops.softmax").softmax_kernel_inner, (48, 1, 1), softmax),
        "fla cumsum": (library("fla.ops.utils.cumsum").chunk_local_cumsum_scalar_kernel, (4 * 2 * 3, ), cumsum),
    }


CASES = ["liger rms_norm", "liger dyt", "flag_gems softmax", "fla cumsum"]


@pytest.mark.parametrize("name", CASES)
def test_library_kernels_give_tritons_results(rt, name):
    kernel, grid, make = cases()[name]
    for seed in range(3):  # fresh random inputs each time, the kernel's cache warm after the first
        torch.manual_seed(seed)
        args, kwargs, outputs = make()
        kernel[grid](*args, **kwargs)
        expected = [o.clone() for o in outputs]
        for o in outputs:
            o.fill_(float("nan"))
        result = rt.launcher(kernel)[grid](*args, **kwargs)
        torch.cuda.synchronize()
        for got, want in zip(outputs, expected):
            assert torch.equal(got, want), name
        if type(kernel).__name__ == "LibEntry":  # (kernel, constexprs), as FlagGems' libentry returns
            result, constexprs = result
            assert isinstance(constexprs, dict)
        assert result.hash


def test_host_tensor_descriptors_launch_through_tritonrt(rt):
    """Triton's TensorDescriptor arguments become tritonrt's (no fallback to Triton's path): a
    matmul through three descriptors equals Triton's own launch, on fresh inputs twice."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    import descriptor_kernels as D
    M, N, K_ = 256, 128, 192
    launcher = rt.launcher(D.matmul_tma)
    for seed in range(2):
        torch.manual_seed(seed)
        a = torch.randn(M, K_, device="cuda", dtype=torch.float16)
        b = torch.randn(K_, N, device="cuda", dtype=torch.float16)
        ours, theirs = torch.empty(M, N, device="cuda", dtype=torch.float16), torch.empty(M, N, device="cuda",
                                                                                          dtype=torch.float16)
        descs = lambda c: (TensorDescriptor.from_tensor(a, [128, 64]), TensorDescriptor.from_tensor(b, [64, 64]),  # noqa: E731
                           TensorDescriptor.from_tensor(c, [128, 64]))
        grid = (M // 128, N // 64)
        D.matmul_tma[grid](*descs(theirs), K_, 128, 64, 64)
        result = launcher[grid](*descs(ours), K_, 128, 64, 64)
        torch.cuda.synchronize()
        assert torch.equal(ours, theirs)
        assert type(result).__module__ == "tritonrt.frontend", "Triton's own path launched it"
        assert result.hash == D.matmul_tma[grid](*descs(theirs), K_, 128, 64, 64).hash


def test_tuple_arguments_launch_through_tritonrt(rt):
    """Tuples of tensors and nested coefficients (1 and None elements constexprs) are tritonrt's
    own (no fallback): equal to Triton's launch and to torch, on fresh inputs, both ways."""
    import tuple_kernels as T
    n = 100003
    launcher = rt.launcher(T.tuple_combine)
    for seed, coeffs in enumerate([((2.0, 1), (3, None)), ((0.5, -1.5), (2, 0.25))]):
        torch.manual_seed(seed)
        x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda", dtype=torch.float16)
        ours, theirs = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
        grid = lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]), )  # noqa: E731
        compiled = T.tuple_combine[grid]((x, y), theirs, coeffs, n, BLOCK=1024)
        result = launcher[grid]((x, y), ours, coeffs, n, BLOCK=1024)
        torch.cuda.synchronize()
        assert torch.equal(ours, theirs)
        expected = coeffs[0][0] * x + coeffs[0][1] * y.float() + coeffs[1][0] + (coeffs[1][1] or 0.0)
        assert torch.allclose(ours, expected, rtol=1e-5, atol=1e-5)
        assert type(result).__module__ == "tritonrt.frontend", "Triton's own path launched it"
        assert result.hash == compiled.hash


def test_gluon_host_descriptors_launch_through_tritonrt(rt):
    """A @gluon.jit kernel taking Gluon's TensorDescriptor (with its shared-memory layout)
    runs on tritonrt's path, equal to Triton's own launch, with its hash."""
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("Gluon's Hopper TMA needs compute capability 9.0")
    import triton.experimental.gluon.language as gl
    from triton.experimental.gluon.language._layouts import NVMMASharedLayout
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    import gluon_kernels as G
    x = torch.randn(200, 192, device="cuda", dtype=torch.float16)
    ours, theirs = torch.empty_like(x), torch.empty_like(x)
    layout = NVMMASharedLayout.get_default_for([64, 64], gl.float16)
    desc = lambda t: TensorDescriptor.from_tensor(t, [64, 64], layout)  # noqa: E731
    grid = (triton.cdiv(200, 64), triton.cdiv(192, 64))
    expected = G.gluon_tma_scale[grid](desc(x), desc(theirs), 2.0)
    result = rt.launcher(G.gluon_tma_scale)[grid](desc(x), desc(ours), 2.0)
    torch.cuda.synchronize()
    assert type(result).__module__ == "tritonrt.frontend", "Triton's own path launched it"
    assert torch.equal(ours, theirs) and torch.equal(ours, x * 2)
    assert result.hash == expected.hash


def tutorial_cases():
    """name: (kernel, make(): (grid, args(), output, reference, tuning key)): the kernels of
    tests/kernels/hopper_kernels.py with host descriptors of a placeholder block shape, as
    Triton's persistent-matmul and fused-attention tutorials launch theirs."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    import hopper_kernels as H
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def desc(t):
        return TensorDescriptor.from_tensor(t, [1, 1])

    def matmul():
        M, N, K_ = 512, 384, 256
        a = torch.randn(M, K_, device="cuda", dtype=torch.float16)
        b = torch.randn(N, K_, device="cuda", dtype=torch.float16)
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        grid = lambda meta: (min(sms, triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"])), )  # noqa: E731
        return grid, lambda: (desc(a), desc(b), desc(c), M, N, K_, sms), c, (a.float() @ b.float().T), (M, N, K_)

    def attention():
        Z, H_, N_CTX, D = 2, 3, 1024, 64
        q, k, v = (torch.randn(Z, H_, N_CTX, D, device="cuda", dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        flat = lambda t: desc(t.view(Z * H_ * N_CTX, D))  # noqa: E731
        grid = lambda meta: (N_CTX // meta["BLOCK_M"], Z * H_)  # noqa: E731
        want = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), scale=0.125)
        return grid, lambda: (0.125, flat(q), flat(k), flat(v), flat(o), N_CTX, D), o, want, (N_CTX, D)

    return {"persistent matmul": (H.matmul_persistent, matmul), "fused attention": (H.attention_forward, attention)}


@pytest.mark.parametrize("name", ["persistent matmul", "fused attention"])
def test_tutorial_style_descriptor_kernels_tune_and_match_torch(rt, name):
    """Descriptors with a placeholder block shape that each config's pre_hook sets: tuned and
    launched through tritonrt (not handed to Triton), equal to torch within fp16 tolerance on
    fresh inputs, and with the hash Triton's launch gives for the config tritonrt chose. The
    caller's descriptors are left with that config's block shapes, as Triton leaves them."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    def blocks(args):
        return [a.block_shape for a in args if isinstance(a, TensorDescriptor)]

    kernel, make = tutorial_cases()[name]
    launcher = rt.launcher(kernel)
    for seed in range(2):
        torch.manual_seed(seed)
        grid, args, out, want, key = make()
        out.fill_(float("nan"))
        given = args()
        ours = launcher[grid](*given)
        torch.cuda.synchronize()
        assert type(ours).__module__ == "tritonrt.frontend", "Triton's own path launched it"
        error = (out.float() - want).norm() / want.norm()
        assert error < 1e-2, f"{name}: relative L2 error {error:.3g}"
    hashes = []  # Triton's launch with each config (its tuner told to choose it)
    for config in kernel.configs:
        kernel.cache[key] = config
        theirs = args()
        hashes.append(kernel[grid](*theirs).hash)
        if hashes[-1] == ours.hash:
            assert blocks(given) == blocks(theirs) and [1, 1] not in blocks(given)
    assert ours.hash in hashes


def add(rt, x, y):
    out = torch.empty_like(x)
    n = x.numel()
    rt.launcher(K.add_kernel)[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, y, out, n, BLOCK=256)
    return out


def test_cuda_graph_capture_and_replay(rt):
    x, y = torch.randn(10000, device="cuda"), torch.randn(10000, device="cuda")
    add(rt, x, y)  # compiled and loaded before capture
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph):
        out = add(rt, x, y)
    for _ in range(3):
        x.copy_(torch.randn_like(x))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, x + y)


def test_torch_compile_fullgraph_over_a_launcher(rt):
    launcher = rt.launcher(K.add_kernel)

    def f(x, y):
        out = torch.empty_like(x)
        n = x.numel()
        launcher[(triton.cdiv(n, 128), )](x, y, out, n, BLOCK=128)
        return out * 2

    x, y = torch.randn(5000, device="cuda"), torch.randn(5000, device="cuda")
    compiled = torch.compile(f, fullgraph=True)
    assert torch.equal(compiled(x, y), f(x, y))
    assert torch.equal(compiled(x, y), (x + y) * 2)


def test_a_sparse_tensor_raises_what_triton_raises(rt):
    # It has no data pointer: torch raises when asked for one, from C++ as from Python.
    x = torch.sparse_coo_tensor(torch.tensor([[0, 2]]), torch.tensor([1.0, 2.0]), (4, ), device="cuda")
    y, out = torch.ones(4, device="cuda"), torch.empty(4, device="cuda")
    with pytest.raises(Exception) as theirs:
        K.add_kernel[(1, )](x, y, out, 4)
    with pytest.raises(type(theirs.value)) as ours:
        rt.launcher(K.add_kernel)[(1, )](x, y, out, 4)
    assert str(ours.value) == str(theirs.value)


def test_two_threads_launch_at_once(rt):
    errors = []

    def work(seed):
        try:
            generator = torch.Generator(device="cuda").manual_seed(seed)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                for _ in range(200):
                    x = torch.randn(4096, device="cuda", generator=generator)
                    y = torch.randn(4096, device="cuda", generator=generator)
                    out = add(rt, x, y)
                    if not torch.equal(out, x + y):
                        errors.append(seed)
            stream.synchronize()
        except Exception as e:  # reported below, from the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s, )) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_a_tuners_best_config_is_the_config_tritonrt_chose_and_tritons_choice(rt):
    """After a launch through tritonrt.launcher and under install(), the tuner's best_config
    is the config that ran, as Triton's Autotuner.run leaves it: here the one Triton chooses."""
    kernel = K.lopsided_tuned_kernel
    x = torch.randn(1 << 24, device="cuda")
    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]), )  # noqa: E731
    kernel.cache.clear()
    out = torch.empty_like(x)
    kernel[grid](x, out, x.numel())
    theirs = kernel.best_config
    assert theirs.kwargs == {"BLOCK": 2048}
    for way in ("launcher", "install"):
        del kernel.best_config
        out = torch.empty_like(x)
        if way == "launcher":
            compiled = rt.launcher(kernel)[grid](x, out, x.numel())
        else:
            rt.install()
            try:
                compiled = kernel[grid](x, out, x.numel())
            finally:
                rt.uninstall()
        assert kernel.best_config is theirs, way
        assert compiled.metadata.num_warps == theirs.num_warps
        torch.cuda.synchronize()
        assert torch.equal(out, x)


def test_install_under_a_librarys_own_function(rt):
    softmax = library("flag_gems.ops.softmax").softmax
    x = torch.randn(64, 2048, device="cuda", dtype=torch.float16)
    expected = softmax(x, -1)
    rt.install()
    try:
        got = softmax(x, -1)
    finally:
        rt.uninstall()
    assert torch.equal(got, expected)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, device="cuda", dtype=dtype)


def randint(high, *shape):
    return torch.randint(0, high, shape, device="cuda")


def gems_operators():
    """FlagGems' operators as torch calls them under flag_gems.use_gems(): name: (op, inputs)."""
    F = torch.nn.functional
    return {
        "softmax": (lambda a: torch.softmax(a, -1), lambda: (randn(64, 1000), )),
        "log_softmax": (lambda a: torch.log_softmax(a, 1), lambda: (randn(32, 513), )),
        "layer_norm": (lambda a, w, b: F.layer_norm(a, (512, ), w, b),
                       lambda: (randn(64, 512), randn(512), randn(512))),
        "rms_norm": (lambda a, w: F.rms_norm(a, (256, ), w), lambda: (randn(64, 256), randn(256))),
        "sum over a dim": (lambda a: a.sum(1), lambda: (randn(128, 1000), )),
        "mean over a dim": (lambda a: a.mean(0), lambda: (randn(100, 300), )),
        "max over a dim": (lambda a: a.max(1).values, lambda: (randn(64, 777), )),
        "argmax": (lambda a: a.argmax(1), lambda: (randn(64, 777), )),
        "var_mean": (lambda a: torch.var_mean(a, 1), lambda: (randn(32, 1000), )),
        "cumsum": (lambda a: a.cumsum(1), lambda: (randn(16, 4000), )),
        "topk": (lambda a: torch.topk(a, 5, 1).values, lambda: (randn(16, 1000), )),
        "mm fp16": (torch.mm, lambda: (randn(256, 512, dtype=torch.float16), randn(512, 128, dtype=torch.float16))),
        "bmm fp16": (torch.bmm, lambda: (randn(4, 64, 96, dtype=torch.float16), randn(4, 96, 80, dtype=torch.float16))),
        "addmm": (torch.addmm, lambda: (randn(128), randn(64, 256), randn(256, 128))),
        "embedding": (F.embedding, lambda: (randint(100, 64, 8), randn(100, 32))),
        "cat": (lambda a, b: torch.cat([a, b], 0), lambda: (randn(10, 33), randn(20, 33))),
        "triu": (torch.triu, lambda: (randn(100, 100), )),
        "zeros_like": (torch.zeros_like, lambda: (randn(1000), )),
    }


def gems_generated_operators():
    """FlagGems' operators whose kernels FlagGems generates into files, loads into modules it
    keeps out of sys.modules and then gives the scalar function (pointwise_dynamic and its kin)."""
    F = torch.nn.functional
    return {
        "add": (torch.add, lambda: (randn(1000, 333), randn(1000, 333))),
        "mul by a scalar": (lambda a: a * 3.5, lambda: (randn(4097), )),
        "div": (torch.div, lambda: (randn(300, 300), randn(300, 300).abs() + 1)),
        "exp": (torch.exp, lambda: (randn(10000), )),
        "gelu": (F.gelu, lambda: (randn(2048, 64), )),
        "silu fp16": (F.silu, lambda: (randn(1000, 100, dtype=torch.float16), )),
        "abs bf16": (torch.abs, lambda: (randn(4096, dtype=torch.bfloat16), )),
        "sigmoid": (torch.sigmoid, lambda: (randn(5000), )),
        "where": (torch.where, lambda: (randn(1000) > 0, randn(1000), randn(1000))),
        "clamp": (lambda a: torch.clamp(a, -0.5, 0.5), lambda: (randn(3000), )),
        "pow": (torch.pow, lambda: (randn(1000).abs(), randn(1000))),
        "masked_fill": (lambda a, m: a.masked_fill(m, 0.0), lambda: (randn(500), randn(500) > 0)),
        "eq": (torch.eq, lambda: (randint(3, 999), randint(3, 999))),
        "isclose": (torch.isclose, lambda: (randn(1000), randn(1000))),
        "index_select": (lambda a, i: torch.index_select(a, 0, i), lambda: (randn(100, 64), randint(100, 30))),
        "gather": (lambda a, i: torch.gather(a, 1, i), lambda: (randn(32, 64), randint(64, 32, 10))),
        "flip": (lambda a: torch.flip(a, (0, )), lambda: (randn(100, 30), )),
        "sort": (lambda a: torch.sort(a, 1).values, lambda: (randn(8, 512), )),
    }


def liger_operators():
    """Liger's autograd functions, forward and backward: name: (op, inputs)."""
    def function(module, name):  # imported when called
        return lambda *args: getattr(library(f"liger_kernel.ops.{module}"), name).apply(*args)

    def with_grads(apply):
        def op(*inputs):
            inputs = [i.requires_grad_() if i.is_floating_point() else i for i in inputs]
            out = apply(*inputs)
            (out[0] if isinstance(out, tuple) else out).float().sum().backward()
            return out, [i.grad for i in inputs if i.is_floating_point()]
        return op

    def heads():  # (batch, heads, seq, dim) with the strides rope's callers pass
        return randn(2, 128, 4, 64).transpose(1, 2)

    dyt = function("dyt", "LigerDyTFunction")
    rms_norm = function("rms_norm", "LigerRMSNormFunction")
    layer_norm = function("layer_norm", "LigerLayerNormFunction")
    cross_entropy = function("cross_entropy", "LigerCrossEntropyFunction")
    jsd = function("jsd", "LigerJSDFunction")
    return {
        "swiglu": (with_grads(function("swiglu", "LigerSiLUMulFunction")), lambda: (randn(64, 1024), randn(64, 1024))),
        "geglu": (with_grads(function("geglu", "LigerGELUMulFunction")), lambda: (randn(64, 1024), randn(64, 1024))),
        "rms_norm": (with_grads(lambda x, w: rms_norm(x, w, 1e-6)), lambda: (randn(32, 2048), randn(2048))),
        "layer_norm": (with_grads(lambda x, w, b: layer_norm(x, w, b, 1e-6)),
                       lambda: (randn(32, 1024), randn(1024), randn(1024))),
        "cross_entropy": (with_grads(lambda x, t: cross_entropy(x, t, None)),
                          lambda: (randn(16, 4000), randint(4000, 16))),
        # autotuned both ways, its backward with reset_to_zero (tritonrt zeroes what the tensor spans)
        "dyt": (with_grads(dyt), lambda: (randn(16, 2048), torch.ones(1, device="cuda"), randn(2048), randn(2048))),
        "rope": (function("rope", "LigerRopeFunction"),
                 lambda: (heads(), heads(), randn(1, 128, 64), randn(1, 128, 64))),
        "jsd": (with_grads(lambda a, b: jsd(a, b, None, 0.5, -100)),
                lambda: (randn(8, 1000).log_softmax(-1), randn(8, 1000).log_softmax(-1))),
    }


def fla_operators():
    """fla's functions over its autotuned kernels (heuristics over its CachedAutotuner; under
    install() the whole stack is tritonrt's while FLA_CACHE_MODE is DISABLED): name: (op, inputs)."""
    return {
        "chunk_local_cumsum": (lambda g: library("fla.ops.utils.cumsum").chunk_local_cumsum(g, 64),
                               lambda: (randn(2, 256, 4), )),
        "l2norm_fwd": (lambda x: library("fla.modules.norm.l2norm").l2norm_fwd(x), lambda: (randn(4, 512, 128), )),
    }


def library_operators():
    """name: (under use_gems, op, inputs)."""
    return {**{f"flag_gems {k}": (True, *v) for k, v in gems_operators().items()},
            **{f"flag_gems {k} (generated)": (True, *v) for k, v in gems_generated_operators().items()},
            **{f"liger {k}": (False, *v) for k, v in liger_operators().items()},
            **{f"fla {k}": (False, *v) for k, v in fla_operators().items()}}


def flatten(value):
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flatten(v)]
    return [value]


@pytest.fixture
def launches_by_triton(monkeypatch):
    """How many launches went through Triton's own launcher (CudaLauncher.__call__)."""
    from triton.backends.nvidia.driver import CudaLauncher
    count = [0]
    original = CudaLauncher.__call__

    def counted(self, *args, **kwargs):
        count[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CudaLauncher, "__call__", counted)
    return count


@pytest.mark.parametrize("name", sorted(library_operators()))
def test_library_operators_under_install_equal_tritons_own_bit_for_bit(rt, launches_by_triton, caplog, name):
    """The operators a FlagGems, Liger or fla user calls, every kernel launch of them routed by
    install(): the same bits as Triton's own path on the same inputs, twice; no launch through
    Triton's launcher, no fallback logged."""
    import logging
    flag_gems = library("flag_gems")
    gems, op, inputs = library_operators()[name]

    def run():
        forget_libentry_kernels()  # libentry relaunches the compiled kernel of its first call: each side afresh
        torch.manual_seed(0)
        made = inputs()
        if gems:
            with flag_gems.use_gems():
                out = op(*made)
        else:
            out = op(*made)
        torch.cuda.synchronize()
        return flatten(out)

    theirs = run()
    launched = launches_by_triton[0]
    assert launched > 0
    rt.install()
    try:
        with caplog.at_level(logging.WARNING, logger="tritonrt"):
            ours = run()
            again = run()
    finally:
        rt.uninstall()
    for got in (ours, again):
        assert len(got) == len(theirs)
        for a, b in zip(theirs, got):
            assert (a is None and b is None) or torch.equal(a, b)
    assert launches_by_triton[0] == launched
    assert [r.getMessage() for r in caplog.records if r.name == "tritonrt"] == []


def forget_libentry_kernels():
    """Empties every FlagGems libentry's cache of the kernels its first calls compiled."""
    import gc
    from flag_gems.utils.libentry import LibEntry
    # type(), not isinstance(): the heap holds weak proxies of objects gone, which raise there
    for entry in (o for o in gc.get_objects() if issubclass(type(o), LibEntry)):
        entry.kernel_cache = tuple({} for _ in entry.kernel_cache)


def test_flag_gems_mm_under_install_tunes_a_new_key_with_its_libtuner_then_launches_its_choice(
        rt, launches_by_triton, monkeypatch, caplog):
    """FlagGems' matmul on a shape its LibTuner has not tuned, under install(): the first call
    runs LibTuner.run (its policy times its configs, each launch through tritonrt), the later
    ones do not (tritonrt launches the config it recorded); the same bits as Triton's path,
    which then takes that config from LibTuner's database; no warning."""
    import logging
    flag_gems = library("flag_gems")
    from flag_gems.utils.libentry import LibTuner
    runs = []
    original = LibTuner.run
    monkeypatch.setattr(LibTuner, "run", lambda self, *a, **k: runs.append(1) or original(self, *a, **k))
    torch.manual_seed(0)
    a, b = randn(160, 224, dtype=torch.float16), randn(224, 96, dtype=torch.float16)
    forget_libentry_kernels()
    launches_by_triton[0] = 0
    rt.install()
    try:
        with caplog.at_level(logging.WARNING, logger="tritonrt"), flag_gems.use_gems():
            ours = [torch.mm(a, b) for _ in range(3)]
            torch.cuda.synchronize()
    finally:
        rt.uninstall()
    assert runs == [1] and launches_by_triton[0] == 0
    assert [r.getMessage() for r in caplog.records if r.name == "tritonrt"] == []
    forget_libentry_kernels()
    with flag_gems.use_gems():
        theirs = torch.mm(a, b)
    assert runs == [1, 1] and launches_by_triton[0] > 0
    for got in ours:
        assert torch.equal(got, theirs)


def test_kernels_made_inside_a_function_under_install_give_tritons_results(rt, launches_by_triton):
    """Kernels no module names, one per closure constant as a factory makes them (with a
    heuristic over each): under install(), each computes its own scale through tritonrt,
    bit for bit Triton's own launch of it, none through Triton's launcher."""
    x = torch.randn(1000, device="cuda")
    kernels = {scale: triton.heuristics({"BLOCK": lambda args: 256})(K.scaled_copy_made_for(scale))
               for scale in (2.0, 3.0)}
    theirs = {}
    for scale, kernel in kernels.items():
        theirs[scale] = torch.empty_like(x)
        kernel[(4, )](x, theirs[scale], x.numel())
    torch.cuda.synchronize()
    launches_by_triton[0] = 0
    rt.install()
    try:
        for scale, kernel in kernels.items():
            ours = torch.zeros_like(x)
            kernel[(4, )](x, ours, x.numel())
            torch.cuda.synchronize()
            assert torch.equal(ours, theirs[scale]) and torch.equal(ours, x * scale)
    finally:
        rt.uninstall()
    assert launches_by_triton[0] == 0


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU")
def test_the_current_device_runs_the_launch(rt):
    # Back and forth, on each device's default stream and on a stream of its own: the launch
    # follows torch's current device and that device's current stream every time.
    for index in (1, 0, 1, 0):
        with torch.cuda.device(index):
            for stream in (torch.cuda.current_stream(), torch.cuda.Stream()):
                with torch.cuda.stream(stream):
                    x = torch.randn(3000, device=f"cuda:{index}")
                    y = torch.randn(3000, device=f"cuda:{index}")
                    out = add(rt, x, y)
                stream.synchronize()
                assert out.device.index == index and torch.equal(out, x + y)


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU")
def test_one_process_under_install_launches_on_both_devices(rt, launches_by_triton):
    """install() in a process using two devices: each launch on the current device, autotuned
    and heuristics stacks tuned per device, nothing through Triton's launcher."""
    liger_rms_norm = library("liger_kernel.ops.rms_norm").LigerRMSNormFunction
    liger_dyt = library("liger_kernel.ops.dyt").LigerDyTFunction
    rt.install()
    try:
        for index in (0, 1, 0, 1):
            with torch.cuda.device(index):
                x, w = torch.randn(64, 1024, device="cuda"), torch.randn(1024, device="cuda")
                alpha, beta = torch.ones(1, device="cuda"), torch.randn(1024, device="cuda")
                normed = liger_rms_norm.apply(x, w, 1e-6)
                expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
                assert normed.device.index == index and torch.allclose(normed, expected, atol=1e-4, rtol=1e-4)
                dyt = liger_dyt.apply(x, alpha, w, beta)
                assert dyt.device.index == index and torch.allclose(dyt, torch.tanh(x) * w + beta, atol=1e-5)
    finally:
        rt.uninstall()
    assert launches_by_triton[0] == 0


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="one GPU")
def test_a_process_per_device_under_install_share_the_caches(rt, tmp_path):
    """Two processes at once, one per device (as data-parallel training runs them), under
    TRITONRT_INSTALL=1 with one Triton cache and one tritonrt index: both compile, tune and
    launch through tritonrt, and get torch's results."""
    import subprocess
    import textwrap
    library("liger_kernel")  # the processes below import it
    code = textwrap.dedent("""
        import sys, torch, tritonrt
        from triton.backends.nvidia.driver import CudaLauncher
        CudaLauncher.__call__ = lambda *a, **k: sys.exit("a launch went through Triton's launcher")
        tritonrt.install()
        torch.cuda.set_device(int(sys.argv[1]))
        from liger_kernel.ops.dyt import LigerDyTFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        for rows in (8, 64, 300):
            x, w = torch.randn(rows, 2048, device="cuda"), torch.randn(2048, device="cuda")
            alpha, beta = torch.ones(1, device="cuda"), torch.randn(2048, device="cuda")
            normed = LigerRMSNormFunction.apply(x, w, 1e-6)
            expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
            assert torch.allclose(normed, expected, atol=1e-4, rtol=1e-4)
            assert torch.allclose(LigerDyTFunction.apply(x, alpha, w, beta), torch.tanh(x) * w + beta, atol=1e-5)
        print("ok", torch.cuda.current_device())
    """)
    env = {**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "triton"), "TRITONRT_CACHE_DIR": str(tmp_path / "index")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(rt.__file__).parents[1]), env.get("PYTHONPATH")]))
    workers = [subprocess.Popen([sys.executable, "-c", code, str(rank)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for rank in (0, 1)]
    for rank, worker in enumerate(workers):
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err[-2000:]
        assert out.split() == ["ok", str(rank)]
