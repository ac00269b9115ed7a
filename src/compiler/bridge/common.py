"""What every part of the bridge shares: the exceptions the C++ side maps to its own error
types, text helpers, and whether tritonrt started this interpreter itself."""

import collections
import json

# What the package offers C++.
__all__ = ["KernelSourceError", "KernelNotFoundError", "TargetError", "CompileFailure", "CacheEntryError", "one_line"]


class KernelSourceError(Exception):
    """The kernel's file or module cannot be found or does not import."""


class KernelNotFoundError(Exception):
    """The module has no such name, or it is not a @triton.jit function."""


class TargetError(Exception):
    """The target string names no backend or architecture Triton can compile for."""


class CompileFailure(Exception):
    """Triton rejected the kernel for this specialization; the message is Triton's. args[1],
    when present, is what the compiler printed while it failed."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class CacheEntryError(Exception):
    """Triton's cache entry for this compile could not be read; args: (folder, reason)."""


embedded = False  # set by tritonrt when it started this interpreter itself


class DType(collections.namedtuple("DType", "language torch size")):
    """One of tritonrt's element types: its triton.language and torch names ("" where torch has
    none) and its size in bytes."""


dtypes = {}  # Triton's type name -> DType: tritonrt's one table (src/common/dtype.cpp), set by C++ first


def one_line(exc):
    """An exception as Python's own one-line text, `Type: message`, as UTF-8 bytes; never
    raises (a __str__ that fails, or text that is not encodable, still gives a line)."""
    try:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    except BaseException:
        text = f"{type(exc).__name__} (its message could not be read)"
    return " ".join(text.split()).encode("utf-8", "backslashreplace")


def printable(text):
    """Text from file names, which may hold bytes that are not UTF-8, as valid text (those bytes escaped)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def as_json(answer):
    """JSON text for C++: strict (no NaN), and text that is not UTF-8 escaped, not fatal."""
    return json.dumps(answer, allow_nan=False, ensure_ascii=True).encode("ascii")
