"""Kernels the Python front end's tests launch (tests/python/test_frontend*.py)."""
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr = 128):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit(do_not_specialize=["n"])
def mixed_kernel(x_ptr, out_ptr, n, scale, flag, offset: tl.int64, maybe, MODE: tl.constexpr, DTYPE: tl.constexpr,
                 BLOCK: tl.constexpr = 64):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(DTYPE)
    if MODE == "twice":
        x = x * 2
    if flag:
        x = (x * scale).to(DTYPE)
    tl.store(out_ptr + offsets + offset, x, mask=mask)


@triton.heuristics({"BLOCK": lambda args: max(16, triton.next_power_of_2(args["n"]) // 4),
                    "num_warps": lambda args: 8 if args["n"] > 4096 else 4})
@triton.jit
def heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2),
                          triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


# What the heuristic of tuned_heuristic_kernel was asked, call by call.
heuristic_calls = []


@triton.autotune(configs=[triton.Config({"BLOCK": 64}, num_warps=2),
                          triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: heuristic_calls.append(args["n"]) or args["n"] % 2 == 0})
@triton.jit
def tuned_heuristic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    if EVEN:
        x = x * 2
    tl.store(out_ptr + offsets, x, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=1),
                          triton.Config({"BLOCK": 2048}, num_warps=4)], key=["n"])
@triton.jit
def lopsided_tuned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Two configs far apart on a long vector (16 elements a program against 2048): every
    tuner, Triton's or tritonrt's, chooses the second."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


class CountingTuner(Autotuner):
    """An Autotuner subclass with a run of its own (as libraries' tuners have): counted, then
    Triton's."""
    runs = 0

    def run(self, *args, **kwargs):
        CountingTuner.runs += 1
        return super().run(*args, **kwargs)


counted_kernel = CountingTuner(tuned_kernel.fn, tuned_kernel.fn.arg_names, [triton.Config({"BLOCK": 32})], ["n"],
                               None, None)


class TimingTuner(CountingTuner):
    """A CountingTuner that times its configs its own way too: Autotuner.run, which it calls,
    would run this _bench."""

    def _bench(self, *args, config, **meta):
        return super()._bench(*args, config=config, **meta)


timing_kernel = TimingTuner(tuned_kernel.fn, tuned_kernel.fn.arg_names, [triton.Config({"BLOCK": 32})], ["n"], None,
                            None)


class StoreTuner(Autotuner):
    """An Autotuner subclass that looks a call's key up in a store of its own first and puts
    what it finds into the tuner's cache, then calls Autotuner.run (as fla's CachedAutotuner
    does with its config files)."""
    store = {}  # n -> triton.Config

    def run(self, *args, **kwargs):
        values = {**dict(zip(self.arg_names, args)), **kwargs}
        key = tuple([values[name] for name in self.keys if name in values] +
                    [str(value.dtype) for value in values.values() if hasattr(value, "dtype")])
        if values["n"] in StoreTuner.store:
            self.cache[key] = StoreTuner.store[values["n"]]
        return super().run(*args, **kwargs)


stored_kernel = StoreTuner(tuned_kernel.fn, tuned_kernel.fn.arg_names,
                           [triton.Config({"BLOCK": 32}, num_warps=1),
                            triton.Config({"BLOCK": 64}, num_warps=2)], ["n"], None, None)


class Holder:
    """A kernel held by a class, found by its qualified name."""

    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def tripled(x):
    """A scalar function a generated kernel calls without importing it (see
    test_frontend.py's kernel of a module kept out of sys.modules)."""
    return x * 3


def scaled_copy_made_for(scale):
    """A kernel made inside a function, as a factory makes one per value: its module cannot name
    it, and each has its own closure constant."""
    SCALE = tl.constexpr(scale)

    @triton.jit
    def scaled_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * SCALE, mask=mask)

    return scaled_copy
