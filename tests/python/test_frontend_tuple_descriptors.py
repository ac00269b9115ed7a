"""Triton's TensorDescriptor inside tuple arguments, from Python (tritonrt.launcher) on the
stand-in driver, against Triton's own launch of the same call (triton_reference's recording
driver): the same kernel, and the parameter bytes tritonrt's launch passed against those
Triton's launcher passes (its own descriptor expansion, triton_reference.launch_parameters).
Where the installed Triton's launcher cannot launch such a kernel (3.6), tritonrt says so.

CTest runs this file as `pytest_frontend_tuples` (with the pinned and the newest Triton), with
the stand-in libcuda first on the library path; the plain pytest run skips it.
"""
import logging
import os
import sys
from pathlib import Path

import pytest

if not os.environ.get("TRITONRT_TEST_FAKE_CUDA"):
    pytest.skip("run by ctest's pytest_frontend_tuples, which puts the stand-in libcuda first on the library path",
                allow_module_level=True)

from triton.runtime.driver import driver  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

from triton_reference import (HostPointer, RecordingDriver, launch_parameters, parameter_mismatches,  # noqa: E402
                              parse_target)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "kernels"))
import tuple_kernels as T  # noqa: E402

import stand_in_driver  # noqa: E402


def last_launch():
    """(launches so far, the last one's parameters as bytes each) on the stand-in driver."""
    launch = stand_in_driver.last_launch()
    return launch.sequence, launch.parameters()


@pytest.fixture(scope="module")
def recording():
    """Triton's driver for the module: launches recorded, never run."""
    previous = driver._active
    driver.set_active(RecordingDriver(parse_target("cuda:90")))
    yield driver._active
    driver._active = previous


def matrix(address, block_m, padding="zero"):
    """Triton's descriptor of a 64 x 128 fp16 matrix, loaded block_m x 64 at a time (its padding
    set after construction: Triton's check of NaN padding asks a torch dtype)."""
    desc = TensorDescriptor(HostPointer(address, "float16"), [64, 128], [128, 1], [block_m, 64])
    desc.padding = padding
    return desc


TRITON_LAUNCHES_THEM = launch_parameters((), [], ()) is not None  # Triton 3.9's launcher; not 3.6's

CALLS = {
    "a descriptor and an integer": (T.tuple_descriptor_scale, (2, 2), lambda: (
        ((matrix(0x10000, 32, "nan"), 3), matrix(0x20000, 32)), dict(BLOCK_M=32, BLOCK_N=64))),
    "another block shape": (T.tuple_descriptor_scale, (2, 2), lambda: (
        ((matrix(0x30000, 16), 5), matrix(0x20000, 32)), dict(BLOCK_M=32, BLOCK_N=64))),
    "two, one nested": (T.tuple_descriptors_nested, (2, 2), lambda: (
        ((matrix(0x10000, 32), (2.5, matrix(0x20000, 16, "nan"))), 48), dict(BLOCK_M=32, BLOCK_N=64))),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_descriptor_inside_a_tuple_launches_with_tritons_parameters(tritonrt_package, recording, caplog, name):
    kernel, grid, make = CALLS[name]
    args, kwargs = make()
    before, _ = last_launch()
    theirs = kernel[grid](*args, **kwargs)
    if not TRITON_LAUNCHES_THEM:
        # Triton 3.6 compiles the kernel, but its own launcher fails an assertion expanding it;
        # tritonrt launches nothing and leaves the call to Triton's path, saying why.
        from triton.backends.nvidia.driver import make_launcher
        from triton.runtime.jit import JITFunction
        from tritonrt import _wiring, frontend
        with pytest.raises(AssertionError):
            make_launcher({}, theirs.src.signature, theirs.metadata.tensordesc_meta)
        frontend._setup()  # as a first launcher would: this file may run alone
        fresh = _wiring._new_kernel(kernel, JITFunction.run, strict=True)  # logs its first fallback
        recorded = len(recording.launches)
        with caplog.at_level(logging.WARNING, logger="tritonrt"):
            fresh.bind(grid)(*args, **kwargs)
        assert last_launch()[0] == before and len(recording.launches) == recorded + 1
        messages = [r.getMessage() for r in caplog.records]
        assert any("inside a tuple, which Triton 3.6" in m and "launcher cannot launch" in m for m in messages), messages
        return
    ours = tritonrt_package.launcher(kernel)[grid](*args, **kwargs)
    assert ours.hash == theirs.hash
    assert ours.metadata == theirs.metadata
    count, params = last_launch()
    assert count == before + 1
    expected = launch_parameters(tuple(theirs.src.signature.values()), theirs.metadata.tensordesc_meta,
                                 recording.launches[-1][3])
    assert parameter_mismatches(expected, params[:-2]) == []
    assert params[-2:] == [bytes(8), bytes(8)]  # no scratch


def test_a_config_pre_hook_reshaping_a_descriptor_inside_a_tuple_goes_to_triton(tritonrt_package, recording, caplog):
    """tritonrt applies a hook's block shapes to descriptor parameters only: a call whose hook
    reshapes a descriptor inside a tuple is left to Triton's own path, saying why (from C++ it
    is an error), never launched with the block shape the hook replaced."""
    before, _ = last_launch()
    given = (matrix(0x10000, 8), 3)
    with caplog.at_level(logging.WARNING, logger="tritonrt"):
        tritonrt_package.launcher(T.tuple_descriptor_hooked)[(2, 2)](given, matrix(0x20000, 32))
    assert last_launch()[0] == before
    assert any("the hook set the block_shape of a tensor descriptor inside tuple 'src'" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert given[0].block_shape == [32, 64]  # as Triton's hook leaves it
    assert recording.launches[-1][0] == "tuple_descriptor_hooked"
