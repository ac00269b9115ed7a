"""tritonrt: run @triton.jit kernels from C++ with Triton's semantics and the host cost of a
bare cuLaunchKernel. This package holds the C++ library, its headers and CMake package, the
`tritonrt` command-line tool and, where built with torch, the operator library:

    import tritonrt
    tritonrt.__version__
    tritonrt.cmake_prefix_path   # cmake -DCMAKE_PREFIX_PATH=... for find_package(tritonrt)
    import tritonrt.ops          # registers torch.ops.tritonrt.*

and launches Triton kernels from Python through tritonrt (tritonrt.frontend):

    tritonrt.launcher(kernel)[grid](*args, **kwargs)   # one kernel, called as Triton's
    tritonrt.install()                                  # every @triton.jit launch of the process
"""
import os

from . import _build_info
from ._observe import observer as _observer


def _switch(variable, fallback):
    """A yes/no setting of the environment, read as the C++ side reads it (environment_switch):
    1, true, yes, on or 0, false, no, off in any case; unset or empty gives `fallback`, anything
    else too, with a warning."""
    value = os.environ.get(variable, "").strip().lower()
    if not value:
        return fallback
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    import warnings
    warnings.warn(f"{variable}={os.environ[variable]!r} is not a switch tritonrt reads (1, true, yes, on or 0, false, "
                  f"no, off); taken as {'on' if fallback else 'off'}", stacklevel=2)
    return fallback


# What kernel modules imported from now on are made from, for tritonrt's index to record
# (src/python_compiler/bridge/observe.py); a module imported earlier is compiled but not recorded.
if _switch("TRITONRT_INDEX", True):
    _observer()

__all__ = ["__version__", "cmake_prefix_path", "include_dir", "library_dir", "cli_path", "torch_version", "launcher",
           "install", "uninstall", "installed"]
_FRONTEND = ("launcher", "Launcher", "CompiledKernel", "install", "uninstall", "installed")


def __dir__():
    # The front end's names too, though it is imported only when one is used.
    return sorted({*globals(), *__all__, *_FRONTEND})


def __getattr__(name):
    # The front end imports triton (and torch) only when it is used.
    if name in _FRONTEND:
        from . import frontend
        return getattr(frontend, name)
    raise AttributeError(f"module 'tritonrt' has no attribute '{name}'")


def _here(relative):
    """`relative` (a path relative to this package's folder, or None) made absolute."""
    if relative is None:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), relative))


__version__ = _build_info.VERSION
#: The folder to put on CMAKE_PREFIX_PATH for find_package(tritonrt COMPONENTS core|torch)
#: (None in a build tree, which has no CMake package).
cmake_prefix_path = _here(_build_info.CMAKE_DIR)
#: The folder holding tritonrt/tritonrt.h (None in a build tree).
include_dir = _here(_build_info.INCLUDE_DIR)
#: The folder holding libtritonrt.so.
library_dir = _here(_build_info.LIBRARY_DIR)
#: The `tritonrt` command-line program (None where it was not built).
cli_path = _here(_build_info.CLI)
#: The torch version tritonrt.ops was built against (None: built without torch).
torch_version = _build_info.TORCH_VERSION
