"""One specialization compiled through Triton's own pipeline (its cache first), with its
files read back for the C++ side to check."""

import contextlib
import dataclasses
import hashlib
import os
import sys
import threading

from _tritonrt_bridge import common
from _tritonrt_bridge.common import (CacheEntryError, CompileFailure, TargetError, one_line, summary_and_text,
                                     with_details)
from _tritonrt_bridge.describe import kernels
from _tritonrt_bridge.rules import make_target

# What the package offers C++.
__all__ = ["compile"]


def _constexpr_value(fn, index, encoded):
    kind = encoded[0]
    if kind == "value":
        return encoded[1]
    if kind == "dtype":
        import triton.language as tl
        return getattr(tl, encoded[1])
    if kind == "default":
        return fn.params[index].default
    if kind == "tuple":
        return tuple(_constexpr_value(fn, index, e) for e in encoded[1])
    raise ValueError(f"unknown constexpr encoding {encoded!r}")


def _specialized(fn, index, ty, key):
    """One entry of the specialization as Triton's binder makes it, (type, key), and the bound
    value _pack_args reads of it: a constexpr's value, None for a runtime value; a tuple's
    entry holds its elements' types, keys and values."""
    if isinstance(ty, tuple):
        entries = [_specialized(fn, index, t, k) for t, k in zip(ty, key)]
        return tuple(e[0] for e in entries), tuple(e[1] for e in entries), tuple(e[2] for e in entries)
    if ty == "constexpr":
        value = _constexpr_value(fn, index, key)
        return ty, value, value
    return ty, key, None


_swap_lock = threading.Lock()
_swapped = {}  # (owner's id, attribute) -> [compiles using it, the value before the first]


@contextlib.contextmanager
def _set_while_compiling(owner, attribute, value):
    """Sets a process-wide attribute (sys.stdout, say) for as long as any compile that asks for
    it runs. Compiles overlap (a tuning's configs compile on several threads): the first in
    saves the value it replaces, the last out puts it back, whatever order they finish in."""
    key = (id(owner), attribute)
    with _swap_lock:
        entry = _swapped.get(key)
        if entry is None:
            entry = _swapped[key] = [0, getattr(owner, attribute)]
            setattr(owner, attribute, value)
        entry[0] += 1
    try:
        yield
    finally:
        with _swap_lock:
            entry[0] -= 1
            if entry[0] == 0:
                setattr(owner, attribute, entry[1])
                del _swapped[key]


def _without_half_built_kernels(unraisable):
    """The unraisable hook while tritonrt compiles: see _quiet_half_built_kernels."""
    if getattr(unraisable.object, "__qualname__", "") == "CompiledKernel.__del__":
        return
    with _swap_lock:
        entry = _swapped.get((id(sys), "unraisablehook"))
    (entry[1] if entry is not None else sys.__unraisablehook__)(unraisable)


@contextlib.contextmanager
def _quiet_half_built_kernels():
    """Some Triton versions' CompiledKernel.__del__ fails on an object whose __init__ failed
    (reading a damaged cache entry): that cleanup noise is not the caller's; the entry's
    failure itself is reported. Other unraisable exceptions pass on to the hook that was set.
    The block appends to the list it is given when its compile failed: only then is there a
    half-built kernel to collect (a collection costs a quarter of a second in a process holding
    torch, more than many a compile)."""
    failed = []
    with _set_while_compiling(sys, "unraisablehook", _without_half_built_kernels):
        try:
            yield failed
        except BaseException:
            failed.append(True)
            raise
        finally:
            if failed:
                import gc
                gc.collect()  # the half-built kernel goes now, while the hook above is in place


_MAX_CACHE_FILE = 1 << 30  # what tritonrt lets Triton read of one cache file (store/files.h: kMaxBinaryBytes)


def _cache_entry_problem(folder):
    """Why Triton must not read the cache entry `folder` (a file in it that is not a regular
    file, which could block or never end, or one larger than any artifact), or None. Folders
    in it are left alone: Triton reads none, and writers put their files there first."""
    import stat
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"its folder cannot be listed: {one_line(e).decode()}"
    for name in names:
        try:
            info = os.stat(os.path.join(folder, name))  # what Triton would open, links followed
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            continue
        if not stat.S_ISREG(info.st_mode):
            return f"'{name}' in it is not a regular file"
        if info.st_size > _MAX_CACHE_FILE:
            return f"'{name}' in it is larger than any compiled kernel ({info.st_size} bytes)"
    return None


class _CompilerOutput:
    """What the compiler writes to file descriptor 2 while tritonrt's own interpreter compiles
    (MLIR's error lines, and the IR it dumps when a pass fails), kept aside: a failure is then
    told in a few lines (the whole text at TRITONRT_LOG=debug), and a success passes on
    whatever it printed. Compiles may overlap: the first one in redirects, the last one out
    restores, and each reads what was written while it ran. A host Python program's stderr is
    left alone."""
    _lock = threading.Lock()
    _users = 0
    _sink = None
    _saved = -1
    LIMIT = 1 << 20

    def __init__(self):
        self.text = b""

    def __enter__(self):
        if not common.embedded:
            return self
        import tempfile
        cls = type(self)
        with cls._lock:
            sys.stderr.flush()
            if cls._users == 0:
                cls._sink = tempfile.TemporaryFile()
                cls._saved = os.dup(2)
                os.dup2(cls._sink.fileno(), 2)
            cls._users += 1
            self._start = os.fstat(cls._sink.fileno()).st_size
        return self

    def __exit__(self, *exc):
        if not common.embedded:
            return False
        cls = type(self)
        with cls._lock:
            sys.stderr.flush()
            sink = cls._sink.fileno()
            end = os.fstat(sink).st_size
            self.text = os.pread(sink, min(end - self._start, self.LIMIT), self._start)
            if exc[0] is None and self.text:
                os.write(cls._saved, self.text)  # a success says what it said, where it would have
            cls._users -= 1
            if cls._users == 0:
                os.dup2(cls._saved, 2)
                os.close(cls._saved)
                cls._sink.close()
                cls._sink, cls._saved = None, -1
        return False

    def errors(self):
        """The compiler's error lines (MLIR's "file:line:col: error: ...", a failed assertion),
        without the pipeline's own boilerplate; at most five."""
        lines = self.text.decode("utf-8", "backslashreplace").splitlines()
        found = [line.strip() for line in lines
                 if (": error: " in line and "MLIR pass pipeline" not in line) or "Assertion `" in line]
        return found[:5]


def _cache_folder(source, backend, options):
    """The folder of Triton's cache that `triton.compile(source, options=options)` reads or
    writes, found as compile finds it (None where a cache manager has no folder)."""
    from triton.compiler import get_cache_key
    from triton.runtime.cache import get_cache_manager
    from triton._C.libtriton import get_cache_invalidating_env_vars

    parsed = backend.parse_options(dict(options, **source.parse_options()))
    key = get_cache_key(source, backend, parsed, env_vars=get_cache_invalidating_env_vars())
    return getattr(get_cache_manager(hashlib.sha256(key.encode("utf-8")).hexdigest()), "cache_dir", None)


def _is_compilation_error(error):
    try:
        from triton.compiler.errors import CompilationError
    except Exception:
        return False
    return isinstance(error, CompilationError)


def _compile_error_text(error):
    """(one line, Triton's text as Triton prints it) for an error `triton.compile` raised.

    Triton's CompilationError shows the kernel's source up to the failing line and a caret
    under the column; where the failure is inside a @triton.jit function the kernel calls, it
    is the cause of the caller's error, whose own text has no reason. The line tells where
    and why; the text, each error of the chain innermost first as Python prints a chain."""
    if not _is_compilation_error(error):
        return summary_and_text(error)
    chain = [error]
    while _is_compilation_error(chain[-1].__cause__) and len(chain) < 64:
        chain.append(chain[-1].__cause__)
    innermost = chain[-1]
    reason = getattr(innermost, "error_message", None)
    if not reason and innermost.__cause__ is not None:
        reason = one_line(innermost.__cause__).decode()
    node = getattr(error, "node", None)
    where = f"at {node.lineno}:{node.col_offset}" if len(chain) == 1 and hasattr(node, "lineno") else ""
    summary = ": ".join(part for part in (type(error).__name__, where, str(reason or "")) if part)
    try:
        texts = [str(e) for e in reversed(chain)]
    except Exception:
        return one_line(error).decode(), ""
    if len(texts) == 1 and len(texts[0].strip().splitlines()) < 2:
        return one_line(error).decode(), ""
    caused = "\n\nThe above exception was the direct cause of the following exception:\n\n"
    return " ".join(summary.split()), caused.join(texts)


def _with_output(error, output):
    """Triton's compile error as a CompileFailure: its one line, the compiler's error lines,
    and all it printed (args[1]: for TRITONRT_LOG=debug); Triton's text in full as details."""
    message, text = _compile_error_text(error)
    said = output.errors()
    if said:
        message += "; the compiler said: " + " / ".join(said)
    if output.text:
        message += " (its whole output: TRITONRT_LOG=debug)"
    return with_details(CompileFailure(message, output.text), text)


_triton_key_remembered = False


def _remember_triton_key():
    """In tritonrt's own interpreter, Triton's triton_key() (a hash of its compiler library,
    some 400 MB, and of its sources, in every cache key) is read from Triton's cache when a
    process computed it before for the same files (by size, modification time and inode);
    it took most of a short-lived compiling process's first compile. The same key, found
    sooner: a Python program's Triton computes it once per process as ever."""
    global _triton_key_remembered
    if _triton_key_remembered or not common.embedded:
        return
    _triton_key_remembered = True
    import triton
    from triton.runtime import autotuner, cache

    root = os.path.dirname(os.path.abspath(triton.__file__))
    stamp = hashlib.sha256(triton.__version__.encode())
    for folder in ("compiler", "backends", "language", "_C", "runtime"):
        for where, folders, files in os.walk(os.path.join(root, folder)):
            folders.sort()
            for name in sorted(files):
                try:
                    info = os.stat(os.path.join(where, name))
                except OSError:
                    continue
                stamp.update(f"{where[len(root):]}/{name}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}\n".encode())
    manager = cache.get_cache_manager(stamp.hexdigest())
    found = manager.get_file("triton_key.txt")
    key = None
    if found and os.path.isfile(found) and os.path.getsize(found) < (1 << 20):
        with open(found, encoding="utf-8", errors="replace") as f:
            checksum, _, text = f.read().partition("\n")
        key = text if hashlib.sha256(text.encode()).hexdigest() == checksum else None
    if key is None:
        key = cache.triton_key()
        manager.put(f"{hashlib.sha256(key.encode()).hexdigest()}\n{key}", "triton_key.txt", binary=False)
    cache.triton_key = autotuner.triton_key = lambda: key


def _source_class(fn):
    """The source class the kernel's own JIT compiles through: Triton's ASTSource, or for a
    @gluon.jit kernel Gluon's (which GluonJITFunction sets where it builds its binder)."""
    from triton.compiler import ASTSource
    if not getattr(fn, "is_gluon", lambda: False)():
        return ASTSource
    try:
        from triton.experimental.gluon._runtime import GluonASTSource
    except ImportError as e:
        raise CompileFailure(f"a Gluon kernel, but this Triton's Gluon runtime cannot be driven by tritonrt ({e})",
                             "") from None
    return GluonASTSource


def compile(handle, backend_name, arch, warp_size, specialization, options):
    """Compile kernel `handle` for one specialization.

    `specialization` has one entry per parameter, each a [type, key] pair exactly as Triton's
    binder builds it (a tuple's, tuples of its elements'), except that constexpr values come
    encoded as ["value", v], ["dtype", name], ["default"] or ["tuple", (encoded, ...)]. `options` holds only the options the caller set.
    Returns (metadata JSON, binary, "cubin" or "hsaco", cache folder, whether the folder held
    the kernel before), all bytes but the kind and the flag.
    """
    import triton
    from triton import knobs
    from triton.compiler import make_backend

    _remember_triton_key()
    fn = kernels[handle]
    target = make_target(backend_name, arch, warp_size)
    backend = make_backend(target)
    spec = []
    values = {}
    for index, (param, (ty, key)) in enumerate(zip(fn.params, specialization)):
        ty, key, values[param.name] = _specialized(fn, index, ty, key)
        spec.append((ty, key))
    kwargs = dict(options)
    # The same option sources Triton's JITFunction.run consults before compiling.
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    for field in dataclasses.fields(backend.parse_options({})):
        if hasattr(knobs.compilation, field.name) and field.name not in ("debug", ):
            kwargs[field.name] = getattr(knobs.compilation, field.name)
    folder = None
    try:
        parsed, signature, constexprs, attrs = fn._pack_args(backend, kwargs, values, spec, None)
        source = _source_class(fn)(fn, signature, constexprs, attrs)
        folder = _cache_folder(source, backend, parsed.__dict__)
        if folder is not None:
            problem = _cache_entry_problem(folder)
            if problem is not None:
                raise CacheEntryError(os.fsencode(folder), problem.encode("utf-8", "backslashreplace"))
        cached = folder is not None and os.path.exists(os.path.join(folder, f"__grp__{source.name[:150]}.json"))
        unreadable = None
        output = _CompilerOutput()
        with _quiet_half_built_kernels() as failed:
            try:
                # In tritonrt's own interpreter Triton's prints (ptxas failures, dumps) go to stderr:
                # the host program's stdout is its own.
                quiet = _set_while_compiling(sys, "stdout", sys.stderr) if common.embedded else contextlib.nullcontext()
                with output, quiet:
                    kernel = triton.compile(source, target=target, options=parsed.__dict__)
            except Exception as e:
                failed.append(True)
                # A cache hit compiles nothing: what fails there is reading the entry.
                if not cached or knobs.compilation.always_compile:
                    raise _with_output(e, output) from None
                unreadable = one_line(e)
        if unreadable is not None:
            raise CacheEntryError(os.fsencode(folder), unreadable)
    except (TargetError, CacheEntryError, CompileFailure):
        raise
    except Exception as e:
        message, text = summary_and_text(e)
        raise with_details(CompileFailure(message), text) from None
    binary_ext = "cubin" if backend_name == "cuda" else "hsaco"
    metadata_file = kernel.metadata_group.get(f"{kernel.name[:150]}.json")
    try:
        with open(metadata_file, "rb") as f:
            metadata = f.read()
        binary = kernel.asm[binary_ext]
    except Exception as e:
        raise CacheEntryError(os.fsencode(os.path.dirname(metadata_file or folder or "")), one_line(e)) from None
    return metadata, bytes(binary), binary_ext, os.fsencode(os.path.dirname(metadata_file)), cached

