"""my_ops as its users call it: torch.ops.my_ops.scaled_silu from Python, eager and under
torch.compile. MY_OPS_DIR is the folder CMake built (it holds the my_ops package). The tests
that need no GPU run everywhere; the others skip without CUDA."""
import json
import os
import subprocess
import sys

import pytest
import torch

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (torch.cuda.is_available() is False)")


@pytest.fixture(scope="module", autouse=True)
def op():
    folder = os.environ.get("MY_OPS_DIR")
    if not folder or not os.path.isfile(os.path.join(folder, "my_ops", "libmy_ops.so")):
        pytest.fail(f"MY_OPS_DIR ({folder}) must name the folder this example was built in")
    sys.path.insert(0, folder)
    import my_ops  # noqa: F401  (registers torch.ops.my_ops)
    return torch.ops.my_ops.scaled_silu


def reference(x, scale=1.0):
    return (scale * torch.nn.functional.silu(x.float())).to(x.dtype)


def test_registered_with_its_schema_and_the_pt2_tag(op):
    assert str(op.default._schema) == "my_ops::scaled_silu(Tensor x, float scale=1.) -> Tensor"
    assert torch.Tag.pt2_compliant_tag in op.default.tags


def test_meta_kernel_gives_shape_and_dtype(op):
    x = torch.empty(3, 5, device="meta", dtype=torch.bfloat16).t()
    out = op(x, 2.0)
    assert out.shape == (5, 3) and out.dtype == torch.bfloat16 and out.is_contiguous()


def test_meta_kernel_rejects_integers_like_the_cuda_kernel(op):
    with pytest.raises(RuntimeError, match="my_ops::scaled_silu: x must be a floating-point tensor"):
        op(torch.empty(4, device="meta", dtype=torch.int32))


def test_opcheck_on_meta_tensors(op):
    x = torch.empty(8, 16, device="meta")
    assert set(torch.library.opcheck(op.default, (x, 0.5)).values()) == {"SUCCESS"}


@pytest.mark.parametrize("signature, block, warps", [("*fp16,*fp16,4096,1.5", 2048, 4),
                                                     ("*fp32,*fp32,4096,1.5", 1024, 4),
                                                     ("*bf16,*bf16,2097152,1.5", 2048, 8)])
def test_heuristics_choose_by_dtype_and_length_without_a_gpu(signature, block, warps):
    """The kernel compiled for Hopper by the tritonrt program, as the op's first call would."""
    import tritonrt
    kernels = os.path.join(os.environ["MY_OPS_DIR"], "my_ops", "kernels.py")
    result = subprocess.run([tritonrt.cli_path, "compile", f"{kernels}:scaled_silu_kernel", "--target", "cuda:90",
                             "--signature", signature, "--json"], capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, TRITONRT_PYTHON=sys.executable))
    assert result.returncode == 0, result.stderr
    compiled = json.loads(result.stdout)
    assert compiled["num_warps"] == warps
    assert [p["value"] for p in compiled["parameters"] if p["name"] == "BLOCK"] == [str(block)]


def test_torch_compile_traces_it_without_a_graph_break(op):
    compiled = torch.compile(lambda x: op(x, 3.0) + 1, backend="aot_eager", fullgraph=True, dynamic=True)
    out = compiled(torch.empty(7, 9, device="meta"))
    assert out.shape == (7, 9)


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("n", [0, 1, 1000, 4096, (1 << 20) + 3])
def test_matches_torch(op, dtype, n):
    x = torch.randn(n, device="cuda", dtype=dtype)
    tolerance = {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {"rtol": 1e-2, "atol": 1e-2}
    torch.testing.assert_close(op(x, 1.5), reference(x, 1.5), **tolerance)


@cuda
def test_reads_non_contiguous_input(op):
    x = torch.randn(64, 48, device="cuda").t()
    torch.testing.assert_close(op(x), reference(x), rtol=1e-5, atol=1e-5)


@cuda
def test_gradient_through_the_registered_backward(op):
    x = torch.randn(300, device="cuda", requires_grad=True)
    op(x, 2.0).sum().backward()
    x_ref = x.detach().requires_grad_()
    reference(x_ref, 2.0).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad, rtol=1e-5, atol=1e-5)


@cuda
def test_opcheck_on_cuda_tensors_with_autograd(op):
    x = torch.randn(33, 17, device="cuda", requires_grad=True)
    assert set(torch.library.opcheck(op.default, (x, 0.25)).values()) == {"SUCCESS"}


@cuda
def test_torch_compile_with_inductor(op):
    x = torch.randn(128, 256, device="cuda")
    compiled = torch.compile(lambda x: op(x, 0.5) * 2, fullgraph=True)
    torch.testing.assert_close(compiled(x), reference(x, 0.5) * 2, rtol=1e-5, atol=1e-5)
