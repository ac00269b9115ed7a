"""my_ops: a Triton kernel as a torch operator, through tritonrt. Importing the package
registers torch.ops.my_ops.scaled_silu (forward in C++, libmy_ops.so; backward below)."""
import os

import torch

torch.ops.load_library(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libmy_ops.so"))


# The derivative, from torch's own ops: d/dx [s * x * sigmoid(x)] = s * sig * (1 + x * (1 - sig)).
def _setup_context(ctx, inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale


def _backward(ctx, grad):
    (x, ) = ctx.saved_tensors
    sig = torch.sigmoid(x.float())
    return (grad * ctx.scale * sig * (1 + x.float() * (1 - sig))).to(x.dtype), None


torch.library.register_autograd("my_ops::scaled_silu", _backward, setup_context=_setup_context)
