"""The stand-in libcuda's records (tests/support/fake_cuda/fake_cuda.h), read through ctypes by
the tests that run with it first on the library path."""
import ctypes


class FakeLaunch(ctypes.Structure):
    """A launch as the stand-in driver records it."""
    _fields_ = [("sequence", ctypes.c_uint64), ("function", ctypes.c_void_p), ("stream", ctypes.c_void_p),
                ("context", ctypes.c_void_p), ("name", ctypes.c_char * 128), ("grid", ctypes.c_uint32 * 3),
                ("block", ctypes.c_uint32 * 3), ("shared_bytes", ctypes.c_uint32), ("cluster", ctypes.c_uint32 * 3),
                ("pdl", ctypes.c_int32), ("cooperative", ctypes.c_int32), ("via_ex", ctypes.c_int32),
                ("from_graph", ctypes.c_int32), ("start_us", ctypes.c_double), ("end_us", ctypes.c_double),
                ("param_count", ctypes.c_uint32), ("param_bytes", ctypes.c_uint32),
                ("param_offset", ctypes.c_uint16 * 128), ("param_size", ctypes.c_uint16 * 128),
                ("params", ctypes.c_ubyte * 4096)]

    def parameters(self):
        """The launch's parameters, as bytes each."""
        return [bytes(self.params[self.param_offset[i]:self.param_offset[i] + self.param_size[i]])
                for i in range(self.param_count)]


def last_launch():
    """The most recent launch the stand-in driver recorded (sequence 0: none yet)."""
    lib = ctypes.CDLL("libcuda.so.1")
    lib.fake_cuda_last_launches.restype = ctypes.c_size_t
    launch = FakeLaunch()
    lib.fake_cuda_last_launches(ctypes.byref(launch), 1)
    return launch
