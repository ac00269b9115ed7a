"""torch.ops.tritonrt.* from Python, against torch's own operators.

The operator library is imported as tritonrt.ops, from the build's Python package
($TRITONRT_BUILD_DIR/python, default <repo>/build) or, with TRITONRT_TEST_INSTALLED=1, the
installed one (conftest.py). Tests that need no GPU
(schemas, Meta kernels, fake tensors, torch.compile tracing, CPU errors, Triton's types for
torch dtypes) run everywhere torch is installed; the others skip without CUDA.
"""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="the torch adapter and ops need torch")

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


@pytest.fixture(scope="module", autouse=True)
def ops(tritonrt_package):
    import tritonrt.ops  # noqa: F401  (registers torch.ops.tritonrt)
    return torch.ops.tritonrt


def meta(*sizes, dtype=torch.float32):
    return torch.empty(*sizes, device="meta", dtype=dtype)


# --- no GPU needed ------------------------------------------------------------------------------

SCHEMAS = {
    "add": "tritonrt::add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sum": "tritonrt::sum(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "softmax": "tritonrt::softmax(Tensor self, int dim=-1) -> Tensor",
    "axpy": "tritonrt::axpy(Tensor x, Tensor? y=None, Scalar? alpha=None) -> Tensor",
    "layer_norm": "tritonrt::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, "
                  "Tensor? bias=None, float eps=1.0000000000000001e-05) -> Tensor",
    "matmul": "tritonrt::matmul(Tensor a, Tensor b) -> Tensor",
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_registered(ops, name):
    assert str(getattr(ops, name).default._schema) == SCHEMAS[name]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_ops_are_tagged_pt2_compliant(ops, name):
    """torch.compile trusts an op so tagged; the opcheck tests below are what earns the tag."""
    assert torch.Tag.pt2_compliant_tag in getattr(ops, name).default.tags


# (tritonrt call, aten call) on meta tensors: same shape and dtype.
META_CASES = {
    "add broadcast promote": (lambda o: o.add(meta(3, 1), meta(1, 4, dtype=torch.float16), alpha=2),
                              lambda: torch.add(meta(3, 1), meta(1, 4, dtype=torch.float16), alpha=2)),
    "add int and 0-dim double": (lambda o: o.add(meta(5, dtype=torch.int32), meta((), dtype=torch.float64)),
                                 lambda: torch.add(meta(5, dtype=torch.int32), meta((), dtype=torch.float64))),
    "add bool and int8": (lambda o: o.add(meta(2, 3, dtype=torch.bool), meta(3, dtype=torch.int8)),
                          lambda: torch.add(meta(2, 3, dtype=torch.bool), meta(3, dtype=torch.int8))),
    "add empty": (lambda o: o.add(meta(0, 3), meta(3)), lambda: torch.add(meta(0, 3), meta(3))),
    "sum keepdim": (lambda o: o.sum(meta(3, 4, 5), 1, True), lambda: torch.sum(meta(3, 4, 5), 1, True)),
    "sum int8 to int64": (lambda o: o.sum(meta(3, 4, dtype=torch.int8), -1),
                          lambda: torch.sum(meta(3, 4, dtype=torch.int8), -1)),
    "sum dtype": (lambda o: o.sum(meta(3, 4, dtype=torch.float16), 0, dtype=torch.float32),
                  lambda: torch.sum(meta(3, 4, dtype=torch.float16), 0, dtype=torch.float32)),
    "sum 0-dim": (lambda o: o.sum(meta(()), 0), lambda: torch.sum(meta(()), 0)),
    "softmax dim 0": (lambda o: o.softmax(meta(2, 7, dtype=torch.bfloat16), 0),
                      lambda: torch.softmax(meta(2, 7, dtype=torch.bfloat16), 0)),
    "axpy with y": (lambda o: o.axpy(meta(3, 4), meta(4, dtype=torch.float64), 2),
                    lambda: torch.add(meta(4, dtype=torch.float64), meta(3, 4), alpha=2)),
    "axpy without y": (lambda o: o.axpy(meta(3, 4, dtype=torch.float16)), lambda: meta(3, 4, dtype=torch.float16)),
    "layer_norm": (lambda o: o.layer_norm(meta(2, 3, 4), [3, 4], meta(3, 4)),
                   lambda: torch.nn.functional.layer_norm(meta(2, 3, 4), [3, 4], meta(3, 4))),
    "matmul": (lambda o: o.matmul(meta(3, 4, dtype=torch.float16), meta(4, 5, dtype=torch.float16)),
               lambda: torch.matmul(meta(3, 4, dtype=torch.float16), meta(4, 5, dtype=torch.float16))),
}


@pytest.mark.parametrize("case", sorted(META_CASES))
def test_meta_kernel_matches_aten(ops, case):
    ours, theirs = META_CASES[case]
    got, want = ours(ops), theirs()
    assert got.device.type == "meta"
    assert (got.shape, got.dtype) == (want.shape, want.dtype)


OPCHECK_CASES = {
    "add": (lambda o: o.add.default, (meta(3, 1), meta(4)), {"alpha": 2}),
    "sum": (lambda o: o.sum.default, (meta(3, 4), 1), {"keepdim": True, "dtype": torch.float64}),
    "softmax": (lambda o: o.softmax.default, (meta(3, 4),), {}),
    "axpy": (lambda o: o.axpy.default, (meta(3, 4), None, 2.0), {}),
    "layer_norm": (lambda o: o.layer_norm.default, (meta(2, 8), [8], meta(8), None), {}),
    "matmul": (lambda o: o.matmul.default, (meta(3, 4, dtype=torch.bfloat16), meta(4, 5, dtype=torch.bfloat16)), {}),
}


@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
def test_opcheck_on_meta_tensors(ops, name):
    """torch.library.opcheck: schema, fake-tensor and AOT-dispatch (dynamic shapes) checks."""
    op, args, kwargs = OPCHECK_CASES[name]
    assert set(torch.library.opcheck(op(ops), args, kwargs).values()) == {"SUCCESS"}


META_ERRORS = {
    "broadcast": (lambda o: o.add(meta(3), meta(4)), "The size of tensor a"),
    "float alpha for ints": (lambda o: o.add(meta(3, dtype=torch.int32), meta(3, dtype=torch.int32), alpha=0.5),
                             "alpha must not be a floating point number"),
    "complex": (lambda o: o.add(meta(3, dtype=torch.complex64), meta(3)),
                "argument 'self' has dtype ComplexFloat, which Triton has no type for"),
    "softmax of ints": (lambda o: o.softmax(meta(3, dtype=torch.int64)), "must be a floating-point tensor"),
    "layer_norm shape": (lambda o: o.layer_norm(meta(2, 3), [4]), "must equal the trailing dims of input"),
    "layer_norm weight": (lambda o: o.layer_norm(meta(2, 3), [3], meta(4)), "argument 'weight' has shape"),
    "matmul shapes": (lambda o: o.matmul(meta(3, 4, dtype=torch.float16), meta(3, 4, dtype=torch.float16)),
                      "cannot be multiplied"),
    "matmul dtype": (lambda o: o.matmul(meta(3, 4), meta(4, 3)), "takes Half or BFloat16"),
    # A CPU tensor beside a meta one: the dispatcher picks the Meta kernel, which must refuse
    # it as the CUDA kernel would (aten's add refuses it too), not answer a meta tensor.
    "add meta and cpu": (lambda o: o.add(meta(3), torch.ones(3)),
                         "argument 'other' is a CPU tensor; tritonrt launches kernels on CUDA tensors only"),
    "add cpu 0-dim": (lambda o: o.add(meta(3), torch.tensor(2.0)), "argument 'other' is a CPU tensor"),
    "axpy cpu y": (lambda o: o.axpy(meta(3), torch.ones(3)), "argument 'y' is a CPU tensor"),
    "layer_norm cpu bias": (lambda o: o.layer_norm(meta(2, 3), [3], meta(3), torch.ones(3)),
                            "argument 'bias' is a CPU tensor"),
    "matmul cpu b": (lambda o: o.matmul(meta(3, 4, dtype=torch.float16), torch.ones(4, 3, dtype=torch.float16)),
                     "argument 'b' is a CPU tensor"),
}


@pytest.mark.parametrize("case", sorted(META_ERRORS))
def test_meta_kernel_rejects_like_the_cuda_kernel(ops, case):
    call, message = META_ERRORS[case]
    with pytest.raises(RuntimeError, match=message):
        call(ops)


def test_sum_dim_out_of_range_is_an_index_error(ops):
    with pytest.raises(IndexError, match="Dimension out of range"):
        ops.sum(meta(3), 1)


CPU_CALLS = {
    "add": (lambda o, t: o.add(t, t), "tritonrt::add: argument 'self'"),
    "sum": (lambda o, t: o.sum(t, 0), "tritonrt::sum: argument 'self'"),
    "softmax": (lambda o, t: o.softmax(t), "tritonrt::softmax: argument 'self'"),
    "axpy": (lambda o, t: o.axpy(t, None, 2), "tritonrt::axpy: argument 'x'"),
    "layer_norm": (lambda o, t: o.layer_norm(t, [3]), "tritonrt::layer_norm: argument 'input'"),
    "matmul": (lambda o, t: o.matmul(t.view(1, 3), t.view(3, 1)), "tritonrt::matmul: argument 'a'"),
}


@pytest.mark.parametrize("name", sorted(CPU_CALLS))
def test_cpu_tensors_are_rejected_naming_the_argument(ops, name):
    call, prefix = CPU_CALLS[name]
    with pytest.raises(RuntimeError, match=f"^{prefix} is a CPU tensor; tritonrt launches kernels on CUDA tensors only"):
        call(ops, torch.ones(3))


def test_fake_cuda_tensors_trace_without_a_gpu(ops):
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(4, 8, device="cuda", dtype=torch.float16)
        out = ops.layer_norm(ops.add(x, x, alpha=2), [8])
        assert (out.shape, out.dtype, out.device.type) == ((4, 8), torch.float16, "cuda")


# One call per op on a 3-element float tensor x (the one that may require grad); the other
# inputs are made on x's device.
GRAD_CALLS = {
    "add": lambda o, x: o.add(x, torch.ones_like(x)),
    "sum": lambda o, x: o.sum(x, 0),
    "softmax": lambda o, x: o.softmax(x),
    "axpy": lambda o, x: o.axpy(x, None, 2.0),
    "layer_norm": lambda o, x: o.layer_norm(x, [3]),
    "matmul": lambda o, x: o.matmul(x.to(torch.float16).reshape(1, 3),
                                    torch.ones(3, 2, dtype=torch.float16, device=x.device)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_backward_through_an_op_is_an_error(ops, name):
    """The ops have no derivatives: backward says so, as for aten's non-differentiable ops."""
    x = meta(3).requires_grad_()
    out = GRAD_CALLS[name](ops, x)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match=f"derivative for tritonrt::{name} is not implemented"):
        out.sum().backward()
    with torch.no_grad():
        assert not GRAD_CALLS[name](ops, x).requires_grad
    assert not GRAD_CALLS[name](ops, meta(3)).requires_grad


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")  # inside torch's forward AD
@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_forward_mode_ad_through_an_op_is_an_error(ops, name):
    """A dual tensor input is refused at the call, as aten refuses it for ops without a
    forward derivative, rather than giving a result that silently lacks a tangent."""
    import torch.autograd.forward_ad as fwad
    with fwad.dual_level():
        x = fwad.make_dual(meta(3), meta(3))
        with pytest.raises(NotImplementedError, match=f"tritonrt::{name}: forward-mode AD is not implemented"):
            GRAD_CALLS[name](ops, x)


def pipeline(ops, x, y, w):
    h = ops.add(x, y, alpha=2)
    h = ops.layer_norm(h, [h.shape[-1]], w, None)
    h = ops.softmax(h * 2)
    return ops.sum(h, 0, dtype=torch.float32)


def test_torch_compile_traces_the_ops(ops):
    """Dynamo and AOTAutograd trace through the Meta kernels, also with dynamic shapes."""
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    compiled = torch.compile(lambda x, y, w: pipeline(ops, x, y, w), backend=capture, fullgraph=True)
    out = compiled(meta(4, 8), meta(8), meta(8))
    assert (out.shape, out.dtype) == ((8,), torch.float32)
    code = graphs[0].code
    for name in ("add", "layer_norm", "softmax", "sum"):
        assert f"torch.ops.tritonrt.{name}" in code
    aot = torch.compile(lambda x, y, w: pipeline(ops, x, y, w), backend="aot_eager", fullgraph=True, dynamic=True)
    for rows in (4, 5, 6):
        assert aot(meta(rows, 8), meta(8), meta(8)).shape == (8,)


# Triton's pointer type for a tensor of each torch dtype, as tritonrt::torch::to_dtype maps it
# (tests/torch/test_torch.cpp checks the C++ side against the same table).
TRITON_TYPES = {
    torch.bool: "*u1", torch.int8: "*i8", torch.int16: "*i16", torch.int32: "*i32", torch.int64: "*i64",
    torch.uint8: "*u8", torch.uint16: "*u16", torch.uint32: "*u32", torch.uint64: "*u64",
    torch.float16: "*fp16", torch.bfloat16: "*bf16", torch.float32: "*fp32", torch.float64: "*fp64",
    torch.float8_e4m3fn: "*fp8e4nv", torch.float8_e5m2: "*fp8e5", torch.float8_e4m3fnuz: "*fp8e4b8",
    torch.float8_e5m2fnuz: "*fp8e5b16",
}


@pytest.mark.parametrize("dtype", list(TRITON_TYPES), ids=str)
def test_triton_types_torch_dtypes_as_the_adapter_does(dtype):
    from triton._C.libtriton import native_specialize_impl
    from triton.backends import BaseBackend
    kind, _ = native_specialize_impl(BaseBackend, torch.empty(4, dtype=dtype), False, True, True)
    assert kind == TRITON_TYPES[dtype]


# --- on a GPU -----------------------------------------------------------------------------------

# Tolerances per result dtype: orders of summation differ from aten's, and 16-bit results are
# rounded from fp32 values that may differ in their last bits.
FLOAT_TOLERANCE = {torch.float16: (2e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2), torch.float64: (1e-9, 1e-12)}


def tolerance(dtype, fp32):
    if not dtype.is_floating_point:
        return 0, 0  # integers and bool: exact
    if dtype == torch.float32:
        return fp32
    rtol, atol = FLOAT_TOLERANCE[dtype]
    return (rtol, atol) if dtype == torch.float64 else (max(rtol, fp32[0]), max(atol, fp32[1]))


def assert_matches(got, want, rtol, atol):
    assert got.device.type == "cuda"
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)


def random(shape, dtype):
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device="cuda").bool()
    if not dtype.is_floating_point:
        return torch.randint(0 if dtype == torch.uint8 else -50, 50, shape, device="cuda").to(dtype)
    return torch.randn(shape, device="cuda").to(dtype)


@pytest.fixture
def seed():
    value = int.from_bytes(os.urandom(4), "little")
    torch.manual_seed(value)
    return value


ADD_SHAPES = [((0,), (0,)), ((1,), (1,)), ((1000003,), (1000003,)), ((17, 33), (17, 33)), ((3, 1, 5), (4, 1)),
              ((), (7,)), ((8, 0, 3), (3,)), ((2, 3, 4, 5, 6), (5, 1)), ((2, 1, 2, 1, 2, 1), (1, 2, 1, 2, 1, 2))]
ADD_DTYPES = [(torch.float32, torch.float32), (torch.float16, torch.float16), (torch.bfloat16, torch.bfloat16),
              (torch.float64, torch.float64), (torch.float16, torch.float32), (torch.int32, torch.float16),
              (torch.int32, torch.int32), (torch.int64, torch.int8), (torch.uint8, torch.uint8),
              (torch.bool, torch.bool), (torch.bool, torch.int8)]


@cuda
@pytest.mark.parametrize("shapes", ADD_SHAPES, ids=str)
@pytest.mark.parametrize("dtypes", ADD_DTYPES, ids=str)
def test_add_matches_torch(ops, seed, shapes, dtypes):
    a, b = random(shapes[0], dtypes[0]), random(shapes[1], dtypes[1])
    result = torch.result_type(a, b)
    alphas = [1, -0.5, 3] if result.is_floating_point else [1] if result == torch.bool else [1, 3, -2]
    for alpha in alphas:
        assert_matches(ops.add(a, b, alpha=alpha), torch.add(a, b, alpha=alpha), *tolerance(result, (1.3e-6, 1e-5)))


@cuda
def test_add_reads_non_contiguous_inputs(ops, seed):
    base = random((40, 66), torch.float32)
    transposed = random((33, 40), torch.float32).t()
    stepped = base[:, ::2]
    expanded = random((1, 33), torch.float16).expand(40, 33)
    for a, b in [(transposed, stepped), (stepped, expanded), (expanded, transposed), (base[1:, 3:36], stepped[:39]),
                 (random((4, 6, 8), torch.float32).permute(2, 0, 1), random((8, 4, 6), torch.float32))]:
        assert_matches(ops.add(a, b, alpha=2), torch.add(a, b, alpha=2), 1.3e-6, 1e-5)


SUM_CASES = [((0,), 0, False), ((5, 0), 1, False), ((0, 5), 1, True), ((1000003,), 0, False), ((17, 33), 0, False),
             ((17, 33), -1, True), ((3, 4, 5), 1, True), ((), 0, False), ((64, 4097), 1, False), ((2049, 3), 0, False)]
SUM_DTYPES = [(torch.float32, None), (torch.float16, None), (torch.bfloat16, None), (torch.float64, None),
              (torch.int32, None), (torch.bool, None), (torch.float16, torch.float32), (torch.float32, torch.float16),
              (torch.int8, torch.int32)]


@cuda
@pytest.mark.parametrize("case", SUM_CASES, ids=str)
@pytest.mark.parametrize("dtypes", SUM_DTYPES, ids=str)
def test_sum_matches_torch(ops, seed, case, dtypes):
    shape, dim, keepdim = case
    x = random(shape, dtypes[0])
    want = torch.sum(x, dim, keepdim, dtype=dtypes[1])
    assert_matches(ops.sum(x, dim, keepdim, dtype=dtypes[1]), want, *tolerance(want.dtype, (1e-5, 1e-4)))


@cuda
def test_sum_reads_non_contiguous_inputs(ops, seed):
    for x in [random((33, 17), torch.float32).t(), random((4, 6, 8), torch.float32)[:, ::2],
              random((4, 6, 8), torch.float32).permute(1, 2, 0), random((1, 300), torch.float16).expand(5, 300)]:
        for dim in range(x.dim()):
            want = torch.sum(x, dim)
            assert_matches(ops.sum(x, dim), want, *tolerance(want.dtype, (1e-5, 1e-4)))


SOFTMAX_CASES = [((0, 5), -1), ((1, 1), -1), ((7, 1000), -1), ((3, 5000), 1), ((4, 3, 5), 1), ((4, 3, 5), 0),
                 ((2049,), 0), ((), 0), ((300, 7), -1)]


@cuda
@pytest.mark.parametrize("case", SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64], ids=str)
def test_softmax_matches_torch(ops, seed, case, dtype):
    shape, dim = case
    x = random(shape, dtype) * 3
    assert_matches(ops.softmax(x, dim), torch.softmax(x, dim), *tolerance(dtype, (1e-5, 1e-6)))


@cuda
def test_softmax_handles_infinities_and_strides(ops, seed):
    x = random((6, 3000), torch.float32)
    x[:, :1500] = float("-inf")  # a first chunk of only -inf must not poison the row
    x[2] = float("-inf")         # an all -inf row is NaN, as in torch
    x[3, 7] = float("inf")
    assert_matches(ops.softmax(x), torch.softmax(x, -1), 1e-5, 1e-6)
    t = random((50, 40), torch.float32).t()
    assert_matches(ops.softmax(t), torch.softmax(t, -1), 1e-5, 1e-6)
    assert_matches(ops.softmax(t, 0), torch.softmax(t, 0), 1e-5, 1e-6)


@cuda
def test_axpy_optional_arguments(ops, seed):
    x, y = random((3, 4), torch.float32), random((4,), torch.float32)
    assert_matches(ops.axpy(x), x, 0, 0)
    assert_matches(ops.axpy(x, y), torch.add(y, x), 1.3e-6, 1e-5)
    assert_matches(ops.axpy(x, y, 2.5), torch.add(y, x, alpha=2.5), 1.3e-6, 1e-5)
    assert_matches(ops.axpy(x, alpha=-3), torch.mul(x, -3), 1.3e-6, 1e-5)
    h, hy = random((1000, 3), torch.float16), random((1000, 1), torch.float64)
    assert_matches(ops.axpy(h, hy, 0.25), torch.add(hy, h, alpha=0.25), 1e-9, 1e-12)
    i = random((5, 0), torch.int32)
    assert_matches(ops.axpy(i, None, 2), torch.mul(i, 2), 0, 0)
    n = random((7,), torch.int64)
    assert_matches(ops.axpy(n, n, 3), torch.add(n, n, alpha=3), 0, 0)


LAYER_NORM_TOLERANCE = {torch.float32: (1e-4, 1e-4), torch.float16: (1e-2, 1e-2), torch.bfloat16: (5e-2, 5e-2),
                        torch.float64: (1e-9, 1e-12)}


@cuda
@pytest.mark.parametrize("case", [((4, 8), (8,)), ((3, 5, 7), (5, 7)), ((2, 4097), (4097,)), ((0, 8), (8,)),
                                  ((5, 1), (1,)), ((9, 100), (9, 100))], ids=str)
@pytest.mark.parametrize("dtype", list(LAYER_NORM_TOLERANCE), ids=str)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_matches_torch(ops, seed, case, dtype, affine):
    shape, normalized = case
    x = random(shape, dtype) * 2 + 0.5
    w = random(normalized, dtype) if affine else None
    b = random(normalized, dtype) if affine else None
    for eps in (1e-5, 1e-3):
        want = torch.nn.functional.layer_norm(x, normalized, w, b, eps)
        assert_matches(ops.layer_norm(x, list(normalized), w, b, eps), want, *LAYER_NORM_TOLERANCE[dtype])


@cuda
def test_layer_norm_non_contiguous_input(ops, seed):
    t = random((64, 48), torch.float32).t()
    assert_matches(ops.layer_norm(t, [64]), torch.nn.functional.layer_norm(t, [64]), 1e-4, 1e-4)


@cuda
@pytest.mark.parametrize("mkn", [(1, 1, 1), (17, 65, 33), (128, 64, 256), (300, 200, 129), (0, 5, 7), (5, 0, 7),
                                 (5, 7, 0), (1024, 512, 768)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("transposed", [False, True])
def test_matmul_matches_torch_in_fp32(ops, seed, mkn, dtype, transposed):
    m, k, n = mkn
    a = random((k, m), dtype).t() if transposed else random((m, k), dtype)
    b = random((n, k), dtype).t() if transposed else random((k, n), dtype)
    got = ops.matmul(a, b)
    assert got.dtype == dtype
    tol = 1e-2 if dtype == torch.float16 else 2e-2
    assert_matches(got.float(), a.float() @ b.float(), tol, tol)


@cuda
def test_errors_name_the_argument(ops):
    g = torch.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="^tritonrt::add: argument 'other' is a CPU tensor"):
        ops.add(g, torch.ones(3))
    with pytest.raises(RuntimeError, match="^tritonrt::add: argument 'other' has dtype ComplexFloat, which Triton"):
        ops.add(g, torch.zeros(3, device="cuda", dtype=torch.complex64))
    with pytest.raises(RuntimeError, match="^tritonrt::layer_norm: argument 'weight' is a CPU tensor"):
        ops.layer_norm(g, [3], torch.ones(3))
    if torch.cuda.device_count() < 2:
        pytest.skip("tensors on two GPUs need a second GPU")
    with pytest.raises(RuntimeError, match="argument 'other' is on cuda:1 but the tensor arguments before it are on cuda:0"):
        ops.add(g, torch.ones(3, device="cuda:1"))


@cuda
def test_ops_run_in_this_interpreter(ops):
    """Called through torch.ops, tritonrt compiles in the host's interpreter, not one of its own."""
    ops.add(torch.ones(5, device="cuda"), torch.ones(5, device="cuda"))
    assert "_tritonrt_bridge" in sys.modules


@cuda
@pytest.mark.parametrize("name", sorted(OPCHECK_CASES))
def test_opcheck_on_cuda_tensors(ops, name):
    op, args, kwargs = OPCHECK_CASES[name]
    to_cuda = [torch.randn(a.shape, dtype=a.dtype, device="cuda") if isinstance(a, torch.Tensor) else a for a in args]
    assert set(torch.library.opcheck(op(ops), tuple(to_cuda), kwargs).values()) == {"SUCCESS"}


@cuda
def test_torch_compile_with_inductor(ops, seed):
    x, y, w = random((64, 128), torch.float32), random((128,), torch.float32), random((128,), torch.float32)
    compiled = torch.compile(lambda x, y, w: pipeline(ops, x, y, w), fullgraph=True)
    torch.testing.assert_close(compiled(x, y, w), pipeline(ops, x, y, w), rtol=1e-5, atol=1e-5)


@cuda
def test_cuda_graph_replays_the_ops(ops, seed):
    """Capture records only work on the capturing stream, so this also shows the ops launch on
    torch's current stream."""
    x, y = random((4097,), torch.float32), random((4097,), torch.float32)
    ops.sum(ops.add(x, y), 0)  # compile and load outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = ops.sum(ops.add(x, y, alpha=2), 0)
    for _ in range(3):
        x.copy_(random((4097,), torch.float32))
        graph.replay()
        torch.testing.assert_close(out, torch.sum(torch.add(x, y, alpha=2), 0), rtol=1e-5, atol=1e-3)


@cuda
def test_ops_run_on_the_current_stream(ops, seed):
    x = random((1 << 20,), torch.float32)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = ops.softmax(ops.add(x, x))
    side.synchronize()
    torch.testing.assert_close(out, torch.softmax(x + x, -1), rtol=1e-5, atol=1e-6)


@cuda
@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_inputs_that_require_grad_on_cuda(ops, name):
    """Same values whether an input requires grad or not; with one, backward is the error."""
    x = torch.randn(3, device="cuda")
    want = GRAD_CALLS[name](ops, x)
    assert not want.requires_grad
    out = GRAD_CALLS[name](ops, x.clone().requires_grad_())
    assert out.requires_grad
    torch.testing.assert_close(out.detach(), want, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match=f"derivative for tritonrt::{name} is not implemented"):
        out.sum().backward()


@cuda
@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")  # inside torch's forward AD
@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_forward_mode_ad_on_cuda_is_an_error(ops, name):
    import torch.autograd.forward_ad as fwad
    x = torch.randn(3, device="cuda")
    with fwad.dual_level():
        dual = fwad.make_dual(x, torch.ones_like(x))
        with pytest.raises(NotImplementedError, match=f"tritonrt::{name}: forward-mode AD is not implemented"):
            GRAD_CALLS[name](ops, dual)


@cuda
@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_lazily_negated_inputs_are_read_negated(ops, name):
    """A tensor with torch's lazy negation bit (a view of x that reads as -x) is read as -x."""
    x = torch.randn(3, device="cuda")
    lazy = torch._neg_view(x)
    assert lazy.is_neg()
    torch.testing.assert_close(GRAD_CALLS[name](ops, lazy), GRAD_CALLS[name](ops, -x), rtol=0, atol=0)
