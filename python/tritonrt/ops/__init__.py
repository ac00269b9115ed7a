"""tritonrt's operator library: importing this package registers torch.ops.tritonrt.*

    import torch, tritonrt.ops
    out = torch.ops.tritonrt.add(x, y, alpha=2)

The library is found next to this file, or at $TRITONRT_OPS_LIBRARY. It is C++ built against
one torch version: importing it under another one is refused here, with both versions named,
instead of failing later on a missing symbol.
"""
import os

from .. import _build_info

if _build_info.TORCH_VERSION is None:
    raise ImportError("tritonrt was built without torch, so it has no operator library: install it with its "
                      "torch parts (TRITONRT_BUILD_TORCH=ON pip install '.[torch]' in tritonrt's source tree, or "
                      "pip install --no-build-isolation . there, in an environment that has torch)")

import torch  # noqa: E402  (after the check above: without torch, that check explains why)


def _release(version):
    """'2.11.0+cu130' -> (2, 11): versions that share these share torch's C++ ABI."""
    return tuple(int(part) for part in version.split("+")[0].split(".")[:2])


if _release(torch.__version__) != _release(_build_info.TORCH_VERSION):
    raise ImportError(f"tritonrt.ops was built against torch {_build_info.TORCH_VERSION}, and this is torch "
                      f"{torch.__version__}: reinstall tritonrt against this torch "
                      "(pip install --no-build-isolation . in its source tree)")

LIBRARY = os.environ.get("TRITONRT_OPS_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                  "libtritonrt_ops.so")
torch.ops.load_library(LIBRARY)
