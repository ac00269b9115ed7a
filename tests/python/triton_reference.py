"""Triton's own answer for a call, used as the reference in parity tests.

`warmup()` is Triton's JITFunction.run with launching skipped: it specializes the call with
Triton's binder and compiles through Triton's pipeline. A stand-in driver answers the three
questions run() asks (device, stream, target), so this works on a machine without a GPU.
"""
import struct

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


class RecordingDriver(StandInDriver):
    """Triton's whole launch path (kernel[grid] to its launcher) on a machine without a GPU:
    modules "load" and each launch is recorded here, as (kernel name, grid, stream, the
    arguments Triton's launcher receives), instead of reaching a device. Autotuners are given
    equal timings for every config, so Triton keeps the first."""

    def __init__(self, target):
        super().__init__(target)
        self.launches = []
        recorded = self.launches

        class Utils:

            @staticmethod
            def get_device_properties(device):
                return {"max_shared_mem": 232448, "multiprocessor_count": 132, "max_num_regs": 65536,
                        "warpSize": 32, "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120}

            @staticmethod
            def load_binary(name, binary, shared, device):
                return 1, 2, 32, 0, 1024

        class Launcher:

            def __init__(self, src, metadata):
                self.name = metadata.name

            def __call__(self, gx, gy, gz, stream, function, packed_metadata, launch_metadata, enter, exit, *args):
                recorded.append((self.name, (gx, gy, gz), stream, args))

        self.utils = Utils()
        self.launcher_cls = Launcher

    def get_benchmarker(self):
        return lambda fn, quantiles=None, **kwargs: [1.0, 1.0, 1.0]


def launch_parameters(types, tensordesc_meta, args):
    """What Triton's launcher passes cuLaunchKernel for `args` (as its launcher receives them)
    of a kernel with parameter `types` (the specialization's; a tuple's as a tuple) and its
    metadata's `tensordesc_meta`: (type, value) per kernel parameter, scratch left out. Tensor
    descriptors are expanded by Triton's own code, a TMA map given as the arguments Triton
    encodes it from (base, swizzle, element size, host element type, box, shape, strides,
    padding); tuples flattened and constexprs dropped, as its C launcher does. None where the
    installed Triton has no expand_signature (3.6 expands descriptor parameters only)."""
    try:
        from triton.backends.driver import expand_signature, wrap_handle_tensordesc_impl
    except ImportError:
        return None
    from triton.backends.nvidia.driver import make_tensordesc_arg

    class Encoding(StandInDriver):

        class utils:

            @staticmethod
            def fill_tma_descriptor_tiled(*fields):
                return fields

    signature = dict(enumerate(types))
    passed = []
    launch = wrap_handle_tensordesc_impl(lambda *given: passed.append(given[-1]), signature, tensordesc_meta,
                                         make_tensordesc_arg)
    previous = driver._active
    driver.set_active(Encoding(GPUTarget("cuda", 90, 32)))
    try:
        launch(tuple(args))
    finally:
        driver._active = previous
    out = []

    def flatten(ty, value):
        if isinstance(ty, tuple):
            for t, v in zip(ty, value, strict=True):
                flatten(t, v)
        elif ty != "constexpr":
            out.append((ty, value.data_ptr() if hasattr(value, "data_ptr") else value))

    flatten(tuple(expand_signature(signature.values(), tensordesc_meta, "nvTmaDesc")), tuple(passed[0]))
    return out


# A CUtensorMap as the stand-in driver encodes it (tests/support/fake_cuda/fake_cuda.h).
_TENSOR_MAP = struct.Struct("<IBBBBBB5BBQ5Q4Q5I")
# Scalars as Triton's launcher passes them (its ty_to_cpp; fp16 in its storage type).
_SCALARS = {"i1": "<B", "i8": "<b", "i16": "<h", "i32": "<i", "i64": "<q", "u1": "<B", "u8": "<B", "u16": "<H",
            "u32": "<I", "u64": "<Q", "fp16": "<e", "fp32": "<f", "fp64": "<d"}


def parameter_mismatches(expected, params):
    """How a launch's parameters (each its bytes, as the stand-in driver recorded them) differ
    from launch_parameters' `expected`: one line per difference, none when they agree."""
    if len(params) != len(expected):
        return [f"{len(params)} parameters, Triton's launcher passes {len(expected)}: {[t for t, _ in expected]}"]
    wrong = []
    for i, ((ty, value), given) in enumerate(zip(expected, params)):
        if ty == "nvTmaDesc":
            base, swizzle, size, host_type, box, shape, strides, padding = value
            rank = len(shape)
            # Triton's encoding: dimensions innermost first, strides in bytes, no interleave,
            # L2 promotion of 128 bytes (2), element strides of 1, NaN fill for padding 1.
            want = (base, host_type, rank, swizzle, padding, 0, 2, [1] * rank, list(reversed(shape)),
                    [size * s for s in reversed(strides[:-1])], list(reversed(box)))
            if len(given) != 128:
                wrong.append(f"parameter {i}: {len(given)} bytes for a CUtensorMap")
                continue
            f = _TENSOR_MAP.unpack_from(given)
            got = (f[13], f[1], f[2], f[3], f[4], f[5], f[6], list(f[7:7 + rank]), list(f[14:14 + rank]),
                   list(f[19:19 + rank - 1]), list(f[23:23 + rank]))
            if got != want:
                wrong.append(f"parameter {i}: a CUtensorMap of {got}, Triton encodes {want}")
            continue
        fmt = "<Q" if ty.startswith("*") else _SCALARS[ty]
        packed = struct.pack(fmt, value)
        if bytes(given) != packed:
            wrong.append(f"parameter {i} ({ty}): {bytes(given).hex()}, Triton passes {value!r} ({packed.hex()})")
    return wrong


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


def jit_function(obj):
    """The JITFunction under a stack of decorators (each holds the next in `.fn`)."""
    from triton.runtime.jit import JITFunction
    while not isinstance(obj, JITFunction):
        obj = obj.fn
    return obj


def decorated_run(obj, args, target="cuda:90", fastest=None, kwargs=None):
    """Triton's own run of a decorated kernel in warm-up mode (compile, no launch): its
    heuristics, its autotuners (a GPU's timings replaced: every config takes 2 ms, the one at
    index `fastest` 1 ms; Triton's choice, pruning and disk cache are its own) and
    JITFunction.run. Returns (the compiled kernel, the configs benchmarked, the configs its
    pruning kept), configs as str(config)."""
    from triton.runtime.autotuner import Autotuner
    benchmarked, kept = [], []

    def bench(self, *_args, config, **_meta):
        benchmarked.append(str(config))
        t = 1.0 if fastest is not None and config is self.configs[fastest] else 2.0
        return [t, t, t]

    def recording(prune):

        def prune_and_record(*prune_args, **prune_kwargs):
            pruned = prune(*prune_args, **prune_kwargs)
            kept.extend(str(config) for config in pruned)
            return pruned

        return prune_and_record

    # Each tuner's own prune_configs (a subclass's override included) is shadowed on the
    # instance, so that what run() gets is recorded, not what an override's super() returns.
    tuners = []
    node = obj
    while hasattr(node, "fn"):
        if isinstance(node, Autotuner):
            tuners.append(node)
            node.prune_configs = recording(node.prune_configs)
        node = node.fn
    original = Autotuner._bench
    Autotuner._bench = bench
    try:
        kernel = _with_target(jit_function(obj), target,
                              lambda: obj.run(*args, grid=(1, ), warmup=True, **(kwargs or {})))
    finally:
        Autotuner._bench = original
        for tuner in tuners:
            del tuner.prune_configs
        # Choices made on made-up timings are no process's: tritonrt takes a tuner's remembered
        # choice as Triton does, and would take these.
        forget_tuning(obj)
    return kernel, benchmarked, kept


def forget_tuning(obj):
    """Clears what the Autotuners of a decorated kernel remember, so the next run tunes again."""
    from triton.runtime.autotuner import Autotuner
    while hasattr(obj, "fn"):
        if isinstance(obj, Autotuner):
            obj.cache.clear()
        obj = obj.fn


def triton_tune(obj, args, grid, **kwargs):
    """Triton's own tuning of a decorated kernel on the GPU, its disk cache off (so that it
    measures): ({str(config): median ms}, str(the config it chose))."""
    from triton.runtime.autotuner import Autotuner
    tuners = []
    node = obj
    while hasattr(node, "fn"):
        if isinstance(node, Autotuner):
            tuners.append((node, node.cache_results))
            node.cache_results = False
            node.cache.clear()
        node = node.fn
    try:
        obj[grid](*args, **kwargs)
    finally:
        for tuner, persist in tuners:
            tuner.cache_results = persist
    tuner = tuners[0][0]
    return {str(c): t[0] for c, t in tuner.configs_timings.items()}, str(tuner.best_config)
