"""Triton's own answer for a call, used as the reference in parity tests.

`warmup()` is Triton's JITFunction.run with launching skipped: it specializes the call with
Triton's binder and compiles through Triton's pipeline. A stand-in driver answers the three
questions run() asks (device, stream, target), so this works on a machine without a GPU.
"""
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver


class HostPointer:
    """A host object standing in for a tensor: Triton reads only data_ptr() and dtype."""

    def __init__(self, address, dtype):
        self.address = address
        self.dtype = getattr(tl, dtype) if isinstance(dtype, str) else dtype

    def data_ptr(self):
        return self.address


class StandInDriver:

    def __init__(self, target):
        self.target = target

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0

    def get_current_target(self):
        return self.target


def parse_target(text):
    backend, arch = text.split(":")
    if backend == "cuda":
        return GPUTarget("cuda", int(arch), 32)
    return GPUTarget(backend, arch, 64 if arch.startswith("gfx9") else 32)


def _with_target(fn, target, action):
    previous = driver._active  # reading driver.active would create a real driver (and need a GPU)
    driver.set_active(StandInDriver(parse_target(target)))
    fn.device_caches.clear()
    try:
        return action()
    finally:
        fn.device_caches.clear()
        driver._active = previous


def specialization(fn, args, target="cuda:90"):
    """repr() of the specialization list Triton's binder builds for `args`."""

    def run():
        binder = fn.device_caches[0][4]
        return repr(binder(*args)[1])

    return _with_target(fn, target, run)


def compiled_hash(fn, args, target="cuda:90", **options):
    """Triton's cache hash for the kernel `fn[grid](*args, **options)` would compile."""
    return _with_target(fn, target, lambda: fn.warmup(*args, grid=(1, ), **options).hash)
