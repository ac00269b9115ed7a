"""The installed Triton's rules, asked once: how it specializes values (C++ applies them to
each call) and which targets it compiles for."""

import importlib
import re
import subprocess
import sys
import types

from _tritonrt_bridge import common
from _tritonrt_bridge.common import TargetError, as_json

# What the package offers C++.
__all__ = ["import_triton", "specialization_rules"]


class _HostPointer:
    """Stands in for a tensor when asking Triton how it specializes an address."""

    def __init__(self, address, dtype):
        self._address = address
        self.dtype = dtype

    def data_ptr(self):
        return self._address


# What the first call of Triton's native specializer imports besides torch (its C++ init),
# imported ahead so that only torch is held back from it (see _native_specializer).
_SPECIALIZER_IMPORTS = ("triton._utils", "triton.runtime.jit", "triton.tools.tensor_descriptor",
                        "triton.experimental.gluon.nvidia.hopper", "triton.language")


class _TorchStandIn(types.ModuleType):
    """What Triton's specializer finds for `import torch` while it initializes in tritonrt's
    interpreter: every type it asks for (Triton 3.6 to 3.9 ask for Tensor) is a class of its
    own that no value is an instance of. (None in sys.modules made 3.6 go on without torch,
    but 3.9 reads the attribute from it and fails.)"""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)  # not a package: `import torch.x` fails as for a missing torch
        kind = type(name, (), {})
        setattr(self, name, kind)
        return kind


def import_triton():
    """Imports what compiling needs of Triton (not torch, which Triton's specializer would
    import on its first call: seconds, for a type only tensors passed from Python need; in
    tritonrt's own interpreter C++ specializes every call). Answers JSON: how many modules the
    interpreter holds, and whether torch is among them."""
    import triton
    from triton.backends import BaseBackend
    from triton._C.libtriton import native_specialize_impl

    if common.embedded and "torch" not in sys.modules:
        for name in _SPECIALIZER_IMPORTS:
            try:
                importlib.import_module(name)
            except ImportError:
                pass  # another Triton version: its init imports what it imports
        sys.modules["torch"] = _TorchStandIn("torch")
        try:
            native_specialize_impl(BaseBackend, 0, False, True, True)
        finally:
            del sys.modules["torch"]
    return as_json({"triton": triton.__version__, "modules": len(sys.modules), "torch": "torch" in sys.modules})


def _descriptor_flags():
    """How many i1 flags Triton's launcher passes after a tensor descriptor's strides when the
    kernel takes it without TMA (base, shape, strides, flags, shape, strides): NaN padding, and
    from the Triton that added TensorDescriptor.round_f32_to_tf32, that too. Read from the
    backend's own expansion where it has one (3.9); Triton 3.6 expands inside make_launcher,
    which passes one."""
    try:
        from triton.backends.driver import _expand_descriptor
    except ImportError:
        return 1
    return _expand_descriptor("tensordesc<fp16[16, 16]>", False, "nvTmaDesc").count("i1")


def _descriptors_in_tuples():
    """Whether Triton's launcher expands a tensor descriptor inside a tuple, for a kernel that
    takes it as a TMA map and for one that takes its base address: read from the backend's
    own expansion where it has one (3.9); Triton 3.6 expands inside make_launcher, and only
    descriptor parameters."""
    try:
        from triton.backends.driver import expand_signature
    except ImportError:
        return False

    def flat(types):
        return [leaf for t in types for leaf in (flat(t) if isinstance(t, tuple) else [t])]

    signature = [("tensordesc<fp16[16]>", "i32")]
    return all(not any(t.startswith("tensordesc") for t in flat(expand_signature(signature, meta, "nvTmaDesc")))
               for meta in ([{}], []))


def _nvmma_layout(spec):
    """How a Gluon host descriptor's type names its layout ("tensordesc<fp16[64, 32],
    NVMMASharedLayout(...)>"): the layout class and its fields in order, each with the text of
    its default where tritonrt does not fill it (None where it does); None where this Triton
    has no Gluon or prints the layout otherwise."""
    try:
        import dataclasses
        import triton.language as tl
        from triton.experimental.gluon.language._layouts import NVMMASharedLayout
        from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    except Exception:
        return None
    filled = {"swizzle_byte_width": "64", "element_bitwidth": "16", "rank": "2", "transposed": "True",
              "fp4_padded": "False"}
    fields = []
    for field in dataclasses.fields(NVMMASharedLayout):
        if field.name in filled:
            fields.append([field.name, None])
        elif field.default is not dataclasses.MISSING:
            fields.append([field.name, repr(field.default)])
        elif field.default_factory is not dataclasses.MISSING:
            fields.append([field.name, repr(field.default_factory())])
        else:
            return None
    layout = NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, rank=2, transposed=True, fp4_padded=False)
    desc = TensorDescriptor.__new__(TensorDescriptor)  # Gluon's checks want a real tensor
    for field in dataclasses.fields(TensorDescriptor):
        if field.default is not dataclasses.MISSING:
            setattr(desc, field.name, field.default)
    desc.base, desc.shape, desc.strides, desc.block_shape = _HostPointer(4096, tl.float16), [64, 64], [64, 1], [64, 32]
    desc.layout, desc.padding = layout, "zero"
    name = type(layout).__name__
    text = f"{name}(" + ", ".join(f"{n}={filled[n] if d is None else d}" for n, d in fields) + ")"
    try:
        typed = spec(desc)[0]
    except Exception:
        return None
    return {"name": name, "fields": fields} if typed == f"tensordesc<fp16[64, 32],{text}>" else None


def specialization_rules():
    """Ask the installed Triton how it specializes values; C++ applies the answers per call.
    The answer gives the pointer type Triton names for each of tritonrt's types, in the
    order of its table (common.dtypes)."""
    import triton
    import triton.language as tl
    from triton.backends import BaseBackend
    from triton._C.libtriton import native_specialize_impl

    def spec(value, specialize=True, align=True, is_const=False):
        return native_specialize_impl(BaseBackend, value, is_const, specialize, align)

    def divisibility_of(make):
        # Powers of two only: tritonrt tests divisibility with a mask.
        found = next((p for p in (2**k for k in range(1, 13)) if spec(make(p))[1] == "D"), 0)
        if found == 0 or spec(make(found // 2))[1] == "D" or spec(make(3 * found))[1] != "D":
            raise RuntimeError("could not determine Triton's divisibility rule")
        return found

    int_divisibility = divisibility_of(lambda v: v)
    pointer_divisibility = divisibility_of(lambda v: _HostPointer(v, tl.float32))
    int_types = [spec(v, False)[0] for v in (2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63 - 1, 2**63)]
    if int_types != ["i32", "i64", "i32", "i64", "i64", "u64"]:
        raise RuntimeError(f"unsupported Triton integer typing rule: {int_types}")
    keys = [spec(int_divisibility)[1], spec(int_divisibility + 1)[1], spec(int_divisibility, True, False)[1],
            spec(int_divisibility, False)[1]]
    if keys != ["D", "", "", None]:
        raise RuntimeError(f"unsupported Triton specialization keys: {keys}")
    pointer_types = []
    for name in (dtype.language for dtype in common.dtypes.values()):
        ty = spec(_HostPointer(pointer_divisibility, getattr(tl, name)))[0]
        const_ty = spec(_HostPointer(pointer_divisibility, getattr(tl, name)), is_const=True)[0]
        pointer_types.append([ty, const_ty])
    return as_json({
        "triton_version": triton.__version__,
        "bool_type": spec(True)[0],
        "float_type": spec(1.5)[0],
        "int_one_is_constexpr": spec(1)[0] == "constexpr",
        "int_divisibility": int_divisibility,
        "pointer_divisibility": pointer_divisibility,
        "pointer_types": pointer_types,
        "descriptor_flags": _descriptor_flags(),
        "descriptors_in_tuples": _descriptors_in_tuples(),
        "nvmma_layout": _nvmma_layout(spec),
    })


_gpu_names = None


def _ptxas_gpu_names():
    """Architectures the ptxas Triton compiles with accepts, read from its own help text."""
    global _gpu_names
    if _gpu_names is None:
        from triton import knobs
        try:
            ptxas = knobs.nvidia.ptxas.path
            text = subprocess.run([ptxas, "--help"], capture_output=True, text=True, check=False).stdout
            section = text[text.index("--gpu-name"):]
            section = section[:section.index("Default value")]
            _gpu_names = set(re.findall(r"sm_(\d+)[a-z]?", section))
        except Exception:
            _gpu_names = set()
    return _gpu_names


def make_target(backend_name, arch, warp_size):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    if backend_name == "cuda":
        if not arch.isdigit():
            raise TargetError(f"cuda architecture must be a compute capability like 90, got '{arch}'")
        names = _ptxas_gpu_names()
        if names and arch not in names:
            raise TargetError(f"cuda architecture {arch} is not supported by Triton's ptxas "
                              f"(supported: {', '.join(sorted(names, key=int))})")
        target = GPUTarget(backend_name, int(arch), warp_size)
    else:
        target = GPUTarget(backend_name, arch, warp_size)
    try:
        make_backend(target)
    except Exception as e:
        raise TargetError(f"the installed Triton has no backend for {backend_name}:{arch}: {e}") from None
    return target
