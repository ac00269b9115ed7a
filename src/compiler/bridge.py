"""The Python half of tritonrt's compiler layer.

This file is compiled into libtritonrt as a string and executed once in the host or embedded
interpreter as module ``_tritonrt_bridge``. The C++ side computes each call's specialization
(the list Triton's binder would build); everything that turns that list into a binary is
delegated to the installed Triton, so the result is the one its own JIT would produce.
"""

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import threading


class KernelSourceError(Exception):
    """The kernel's file or module cannot be found or does not import."""


class KernelNotFoundError(Exception):
    """The module has no such name, or it is not a @triton.jit function."""


class TargetError(Exception):
    """The target string names no backend or architecture Triton can compile for."""


class CompileFailure(Exception):
    """Triton rejected the kernel for this specialization; the message is Triton's."""


class CacheEntryError(Exception):
    """Triton's cache entry for this compile could not be read; args: (folder, reason)."""


embedded = False  # set by tritonrt when it started this interpreter itself


def one_line(exc):
    """An exception as Python's own one-line text, `Type: message`, as UTF-8 bytes; never
    raises (a __str__ that fails, or text that is not encodable, still gives a line)."""
    try:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    except BaseException:
        text = f"{type(exc).__name__} (its message could not be read)"
    return " ".join(text.split()).encode("utf-8", "backslashreplace")


_locks_lock = threading.Lock()
_import_locks = {}  # source string -> its lock: one slow import never holds up another source
_modules = {}  # source string -> imported module, so a module is executed once per process
_kernels = []  # handle -> JITFunction


def _package_root(path):
    """Return (directory to put on sys.path, dotted module name) for a .py file."""
    directory, filename = os.path.split(path)
    parts = [os.path.splitext(filename)[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return directory, ".".join(parts)


def _import_file(path):
    if not os.path.isfile(path):
        raise KernelSourceError(f"kernel source file '{path}' does not exist")
    root, dotted = _package_root(path)
    if "." in dotted:
        # Inside a package: import it under its package name so relative imports resolve.
        if root not in sys.path:
            sys.path.append(root)
        return importlib.import_module(dotted)
    loaded = sys.modules.get(dotted)
    if loaded is not None and os.path.realpath(getattr(loaded, "__file__", "") or "") == path:
        return loaded
    if loaded is not None:
        # Another module already owns this name: keep both, under a name unique to the path.
        dotted = f"{dotted}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(dotted, path)
    module = importlib.util.module_from_spec(spec)
    # Siblings of a stand-alone kernel file import as they would when it runs as a script.
    if root not in sys.path:
        sys.path.append(root)
    sys.modules[dotted] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[dotted]
        raise
    return module


class _ExitAtImport(BaseException):
    """Raised instead of ending the process when a kernel module calls os._exit at import."""


def _refuse_exit(status):
    raise _ExitAtImport(f"the module called os._exit({status}) while being imported")


def _import(source):
    module = _modules.get(source)
    if module is not None:
        return module
    with _locks_lock:
        lock = _import_locks.setdefault(source, threading.RLock())
    with lock:
        module = _modules.get(source)
        if module is not None:
            return module
        is_path = source.endswith(".py") or os.sep in source
        # In tritonrt's own interpreter a kernel file must not end the host program.
        real_exit = os._exit
        if embedded:
            os._exit = _refuse_exit
        try:
            if is_path:
                module = _import_file(os.path.realpath(source))
            else:
                module = importlib.import_module(source)
        except KernelSourceError:
            raise
        except ModuleNotFoundError as e:
            if not is_path and e.name is not None and source.startswith(e.name):
                raise KernelSourceError(f"kernel module '{source}' was not found on sys.path") from None
            raise KernelSourceError(f"importing kernel source '{source}' failed: {one_line(e).decode()}") from None
        except SyntaxError as e:
            raise KernelSourceError(f"kernel source '{source}' has a syntax error at {e.filename}:{e.lineno}: "
                                    f"{e.msg}") from None
        except BaseException as e:  # SystemExit, KeyboardInterrupt and os._exit included
            raise KernelSourceError(f"importing kernel source '{source}' failed: {one_line(e).decode()}") from None
        finally:
            os._exit = real_exit
        _modules[source] = module
        return module


def _safe_repr(value):
    try:
        return repr(value)
    except BaseException:
        return f"<{type(value).__name__} object whose repr() failed>"


def _describe_default(param):
    import inspect
    value = param.default
    if value is inspect.Parameter.empty:
        return {"kind": "absent"}
    described = {"repr": _safe_repr(value)}
    if value is None:
        return {**described, "kind": "none"}
    if isinstance(value, bool):
        return {**described, "kind": "bool", "value": value}
    if isinstance(value, int) and -2**63 <= value < 2**64:
        return {**described, "kind": "int", "value": value}
    if isinstance(value, float):
        # float.hex is exact and spells nan and inf, which JSON cannot hold as numbers.
        return {**described, "kind": "float", "value": value.hex()}
    if isinstance(value, str):
        return {**described, "kind": "str", "value": value}
    return {**described, "kind": "object"}


def load_kernel(source, name):
    """Import `source` once and describe the static signature of kernel `name` in it.

    `source` and `name` arrive as bytes (paths need not be UTF-8); the answer is JSON text."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    source = os.fsdecode(source)
    name = name.decode("utf-8", "surrogateescape")
    module = _import(source)
    if not hasattr(module, name):
        raise KernelNotFoundError(f"'{source}' has no attribute '{name}'")
    obj = getattr(module, name)
    autotune = None
    heuristics = []
    while not isinstance(obj, JITFunction):
        if isinstance(obj, Autotuner):
            autotune = {"configs": len(obj.configs)}
            obj = obj.fn
        elif isinstance(obj, Heuristics):
            heuristics.extend(obj.values.keys())
            obj = obj.fn
        else:
            raise KernelNotFoundError(f"'{source}:{name}' is a {type(obj).__name__}, not a @triton.jit function")
    params = [{
        "name": p.name,
        "is_constexpr": bool(p.is_constexpr),
        "is_const": bool(p.is_const),
        "do_not_specialize": bool(p.do_not_specialize),
        "do_not_specialize_on_alignment": bool(p.do_not_specialize_on_alignment),
        "annotation_type": p.annotation_type,
        "default": _describe_default(p._param),
    } for p in obj.params]
    _kernels.append(obj)
    file = getattr(module, "__file__", None)
    return _json({
        "handle": len(_kernels) - 1,
        "name": _printable(obj.__name__),
        "full_name": _printable(f"{obj.__module__}.{obj.__qualname__}"),
        "file": None if file is None else _printable(file),
        "params": params,
        "autotune": autotune,
        "heuristics": heuristics,
    })


def _printable(text):
    """Text from file names, which may hold bytes that are not UTF-8, as valid text (those bytes escaped)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _json(answer):
    """JSON text for C++: strict (no NaN), and text that is not UTF-8 escaped, not fatal."""
    return json.dumps(answer, allow_nan=False, ensure_ascii=True).encode("ascii")


class _HostPointer:
    """Stands in for a tensor when asking Triton how it specializes an address."""

    def __init__(self, address, dtype):
        self._address = address
        self.dtype = dtype

    def data_ptr(self):
        return self._address


def specialization_rules(tl_dtype_names):
    """Ask the installed Triton how it specializes values; C++ applies the answers per call.

    `tl_dtype_names` lists the triton.language dtypes behind tritonrt's DType enumerators;
    the answer gives, in the same order, the pointer type Triton names for each.
    """
    import triton
    import triton.language as tl
    from triton.backends import BaseBackend
    from triton._C.libtriton import native_specialize_impl

    def spec(value, specialize=True, align=True, is_const=False):
        return native_specialize_impl(BaseBackend, value, is_const, specialize, align)

    def divisibility_of(make):
        # Powers of two only: tritonrt tests divisibility with a mask.
        found = next((p for p in (2**k for k in range(1, 13)) if spec(make(p))[1] == "D"), 0)
        if found == 0 or spec(make(found // 2))[1] == "D" or spec(make(3 * found))[1] != "D":
            raise RuntimeError("could not determine Triton's divisibility rule")
        return found

    int_divisibility = divisibility_of(lambda v: v)
    pointer_divisibility = divisibility_of(lambda v: _HostPointer(v, tl.float32))
    int_types = [spec(v, False)[0] for v in (2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**63 - 1, 2**63)]
    if int_types != ["i32", "i64", "i32", "i64", "i64", "u64"]:
        raise RuntimeError(f"unsupported Triton integer typing rule: {int_types}")
    keys = [spec(int_divisibility)[1], spec(int_divisibility + 1)[1], spec(int_divisibility, True, False)[1],
            spec(int_divisibility, False)[1]]
    if keys != ["D", "", "", None]:
        raise RuntimeError(f"unsupported Triton specialization keys: {keys}")
    pointer_types = []
    for name in tl_dtype_names:
        ty = spec(_HostPointer(pointer_divisibility, getattr(tl, name)))[0]
        const_ty = spec(_HostPointer(pointer_divisibility, getattr(tl, name)), is_const=True)[0]
        pointer_types.append([ty, const_ty])
    return _json({
        "triton_version": triton.__version__,
        "bool_type": spec(True)[0],
        "float_type": spec(1.5)[0],
        "int_one_is_constexpr": spec(1)[0] == "constexpr",
        "int_divisibility": int_divisibility,
        "pointer_divisibility": pointer_divisibility,
        "pointer_types": pointer_types,
    })


_gpu_names = None


def _ptxas_gpu_names():
    """Architectures the ptxas Triton compiles with accepts, read from its own help text."""
    global _gpu_names
    if _gpu_names is None:
        from triton import knobs
        import re
        try:
            ptxas = knobs.nvidia.ptxas.path
            text = subprocess.run([ptxas, "--help"], capture_output=True, text=True, check=False).stdout
            section = text[text.index("--gpu-name"):]
            section = section[:section.index("Default value")]
            _gpu_names = set(re.findall(r"sm_(\d+)[a-z]?", section))
        except Exception:
            _gpu_names = set()
    return _gpu_names


def make_target(backend_name, arch, warp_size):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    if backend_name == "cuda":
        if not arch.isdigit():
            raise TargetError(f"cuda architecture must be a compute capability like 90, got '{arch}'")
        names = _ptxas_gpu_names()
        if names and arch not in names:
            raise TargetError(f"cuda architecture {arch} is not supported by Triton's ptxas "
                              f"(supported: {', '.join(sorted(names, key=int))})")
        target = GPUTarget(backend_name, int(arch), warp_size)
    else:
        target = GPUTarget(backend_name, arch, warp_size)
    try:
        make_backend(target)
    except Exception as e:
        raise TargetError(f"the installed Triton has no backend for {backend_name}:{arch}: {e}") from None
    return target


def _constexpr_value(fn, index, encoded):
    kind = encoded[0]
    if kind == "value":
        return encoded[1]
    if kind == "dtype":
        import triton.language as tl
        return getattr(tl, encoded[1])
    if kind == "default":
        return fn.params[index].default
    raise ValueError(f"unknown constexpr encoding {encoded!r}")


def _cache_folder(source, backend, options):
    """The folder of Triton's cache that `triton.compile(source, options=options)` reads or
    writes, found as compile finds it (None where a cache manager has no folder)."""
    from triton.compiler import get_cache_key
    from triton.runtime.cache import get_cache_manager
    from triton._C.libtriton import get_cache_invalidating_env_vars

    parsed = backend.parse_options(dict(options, **source.parse_options()))
    key = get_cache_key(source, backend, parsed, env_vars=get_cache_invalidating_env_vars())
    return getattr(get_cache_manager(hashlib.sha256(key.encode("utf-8")).hexdigest()), "cache_dir", None)


def compile(handle, backend_name, arch, warp_size, specialization, options):
    """Compile kernel `handle` for one specialization.

    `specialization` has one entry per parameter, each a [type, key] pair exactly as Triton's
    binder builds it, except that constexpr values come encoded as ["value", v],
    ["dtype", name] or ["default"]. `options` holds only the options the caller set.
    Returns (metadata JSON, binary, "cubin" or "hsaco", cache folder), all bytes but the kind.
    """
    import triton
    from triton import knobs
    from triton.compiler import ASTSource, make_backend

    fn = _kernels[handle]
    target = make_target(backend_name, arch, warp_size)
    backend = make_backend(target)
    spec = []
    values = {}
    for index, (param, (ty, key)) in enumerate(zip(fn.params, specialization)):
        if ty == "constexpr":
            value = _constexpr_value(fn, index, key)
            spec.append((ty, value))
            values[param.name] = value
        else:
            spec.append((ty, key))
            values[param.name] = None
    kwargs = dict(options)
    # The same option sources Triton's JITFunction.run consults before compiling.
    kwargs["debug"] = kwargs.get("debug", fn.debug) or knobs.runtime.debug
    for field in dataclasses.fields(backend.parse_options({})):
        if hasattr(knobs.compilation, field.name) and field.name not in ("debug", ):
            kwargs[field.name] = getattr(knobs.compilation, field.name)
    folder = None
    try:
        parsed, signature, constexprs, attrs = fn._pack_args(backend, kwargs, values, spec, None)
        source = ASTSource(fn, signature, constexprs, attrs)
        folder = _cache_folder(source, backend, parsed.__dict__)
        cached = folder is not None and os.path.exists(os.path.join(folder, f"__grp__{source.name[:150]}.json"))
        try:
            # In tritonrt's own interpreter Triton's prints (ptxas failures, dumps) go to stderr:
            # the host program's stdout is its own.
            with contextlib.redirect_stdout(sys.stderr) if embedded else contextlib.nullcontext():
                kernel = triton.compile(source, target=target, options=parsed.__dict__)
        except Exception as e:
            # A cache hit compiles nothing: what fails there is reading the entry.
            if cached and not knobs.compilation.always_compile:
                raise CacheEntryError(os.fsencode(folder), one_line(e)) from None
            raise
    except (TargetError, CacheEntryError):
        raise
    except Exception as e:
        raise CompileFailure(one_line(e).decode()) from None
    binary_ext = "cubin" if backend_name == "cuda" else "hsaco"
    metadata_file = kernel.metadata_group.get(f"{kernel.name[:150]}.json")
    try:
        with open(metadata_file, "rb") as f:
            metadata = f.read()
        binary = kernel.asm[binary_ext]
    except Exception as e:
        raise CacheEntryError(os.fsencode(os.path.dirname(metadata_file or folder or "")), one_line(e)) from None
    return metadata, bytes(binary), binary_ext, os.fsencode(os.path.dirname(metadata_file))
