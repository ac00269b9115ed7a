"""A kernel file whose import blocks until the test that imports it says so: a stand-in for a
slow kernel file (tests/cpu/test_bad_input.cpp). It marks when its import has started."""
import os
import pathlib
import time

import triton
import triton.language as tl

# Paths from the importing process's id: the embedded interpreter read its environment at start.
_gate = pathlib.Path(f"/tmp/tritonrt-gated-import-{os.getpid()}")
_gate.with_suffix(".started").touch()
_deadline = time.monotonic() + 120  # never hang a test run forever
while not _gate.exists() and time.monotonic() < _deadline:
    time.sleep(0.01)


@triton.jit
def gated(p):
    tl.store(p, 1.0)
