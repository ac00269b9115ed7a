"""What every part of the bridge shares: the exceptions the C++ side maps to its own error
types, text helpers, and whether tritonrt started this interpreter itself."""

import collections
import json
import re
import traceback
import types

# What the package offers C++.
__all__ = ["KernelSourceError", "KernelNotFoundError", "TargetError", "CompileFailure", "CacheEntryError", "one_line",
           "with_details", "summary_and_text", "user_traceback"]


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


def with_details(error, details):
    """`error` (one of the exceptions above) carrying `details`: text C++ shows as it is, on the
    lines after tritonrt's one-line summary (Triton's message with its caret line, a kernel
    module's traceback). Text that is not UTF-8 is escaped."""
    text = (details or "").rstrip("\n")
    error.details = text.encode("utf-8", "backslashreplace").decode("utf-8") if text.strip() else ""
    return error


def summary_and_text(exc):
    """(`Type: message` on one line, the message as written when it spans lines, else "").
    A message of several lines is summed up by its first and the lines after it that report
    an error ("error   : ..." from ptxas, "file:line:col: error: ..." from MLIR), at most five."""
    try:
        text = str(exc)
    except BaseException:
        text = ""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return one_line(exc).decode(), ""
    said = [line.strip() for line in lines[1:] if re.search(r"\berror\s*:", line, re.IGNORECASE)][:5]
    summary = f"{type(exc).__name__}: {lines[0]}" + ("; its errors: " + " / ".join(said) if said else "")
    return " ".join(summary.split()), text


def _is_bridge_or_import_frame(frame):
    """Whether a traceback frame is the bridge's or the import system's, not the user's."""
    name = frame.f_globals.get("__name__") or ""
    return name.startswith("_tritonrt_bridge") or frame.f_code.co_filename.startswith("<frozen importlib")


def user_traceback(exc):
    """Python's own report of `exc`, as an uncaught exception prints it, less the frames of
    tritonrt's bridge and of the import system: what the user's code did. Never raises."""
    try:
        kept = []
        tb = exc.__traceback__
        while tb is not None:
            if not _is_bridge_or_import_frame(tb.tb_frame):
                kept.append(tb)
            tb = tb.tb_next
        rebuilt = None
        for tb in reversed(kept):
            rebuilt = types.TracebackType(rebuilt, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
        return "".join(traceback.format_exception(type(exc), exc, rebuilt))
    except BaseException:
        return ""


def printable(text):
    """Text from file names, which may hold bytes that are not UTF-8, as valid text (those bytes escaped)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def as_json(answer):
    """JSON text for C++: strict (no NaN), and text that is not UTF-8 escaped, not fatal."""
    return json.dumps(answer, allow_nan=False, ensure_ascii=True).encode("ascii")
