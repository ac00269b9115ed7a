"""tritonrt's operator library: importing this package registers torch.ops.tritonrt.*

    import torch, tritonrt_ops
    out = torch.ops.tritonrt.add(x, y, alpha=2)

The library is found next to this file, or at $TRITONRT_OPS_LIBRARY.
"""
import os

import torch

LIBRARY = os.environ.get("TRITONRT_OPS_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                  "libtritonrt_ops.so")
torch.ops.load_library(LIBRARY)
