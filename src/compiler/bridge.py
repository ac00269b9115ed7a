"""The Python half of tritonrt's compiler layer.

This file is compiled into libtritonrt as a string and executed once in the host or embedded
interpreter as module ``_tritonrt_bridge``. The C++ side computes each call's specialization
(the list Triton's binder would build); everything that turns that list into a binary is
delegated to the installed Triton, so the result is the one its own JIT would produce.
"""

import collections.abc
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import re
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
    """Triton rejected the kernel for this specialization; the message is Triton's. args[1],
    when present, is what the compiler printed while it failed."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


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
_search_paths = {}  # module name -> the folders its import searched
_kernels = []  # handle -> JITFunction
_layers = []  # handle -> the decorators around it, outermost first


def _package_root(path):
    """Return (directory to put on sys.path, dotted module name) for a .py file."""
    directory, filename = os.path.split(path)
    parts = [os.path.splitext(filename)[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
    return directory, ".".join(parts)


def _import_file(path):
    """The module whose file is `path` (a real path), imported once: inside a package under its
    dotted name, from the folder that holds that package (so relative imports resolve), or
    refused when this process already imported that name from another copy of the package."""
    if not os.path.exists(path):
        raise KernelSourceError(f"kernel source file '{path}' does not exist")
    if not os.path.isfile(path):
        import stat
        mode = os.stat(path).st_mode
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else
                "not a regular file")
        raise KernelSourceError(f"kernel source '{path}' is {kind}, not a .py file")
    root, dotted = _package_root(path)
    if "." in dotted:
        module = _import_package_module(path, root, dotted)
    else:
        module = _import_lone_file(path, root, dotted)
    found = os.path.realpath(getattr(module, "__file__", "") or "")
    if found != path:  # an import hook or a module that replaced itself in sys.modules
        raise KernelSourceError(f"importing '{path}' as '{module.__name__}' gave the module of '{found}'; tritonrt "
                                "runs a kernel only from the file it is named by")
    return module


def _imported_elsewhere(name, expected):
    """The file or folder that module `name` was imported from, when this process holds it
    from somewhere other than `expected` (a package's folder, or a module's file); else None."""
    module = sys.modules.get(name)
    if module is None:
        return None
    where = getattr(module, "__path__", None)
    places = [os.path.realpath(p) for p in where] if where is not None else \
        [os.path.realpath(getattr(module, "__file__", "") or "")]
    if expected in places:
        return None
    return places[0] if places else f"<{name} has no file>"


def _import_package_module(path, root, dotted):
    parts = dotted.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        last = depth == len(parts)
        expected = path if last else os.path.join(root, *parts[:depth])
        other = _imported_elsewhere(name, expected)
        if other is not None:
            raise KernelSourceError(
                f"'{path}' is module '{dotted}' of the package in '{root}', but this process has already imported "
                f"'{name}' from '{other}': two copies of one package cannot be imported side by side (name the kernel "
                "from one copy, or by module)")
    top = parts[0]
    if top not in sys.modules:
        # The named copy's package, found in its own folder whatever sys.path would find first.
        spec = importlib.machinery.PathFinder.find_spec(top, [root])
        if spec is None:
            raise KernelSourceError(f"package '{top}' of '{path}' cannot be imported from '{root}'")
        package = importlib.util.module_from_spec(spec)
        sys.modules[top] = package
        try:
            spec.loader.exec_module(package)
        except BaseException:
            sys.modules.pop(top, None)
            raise
    # Absolute imports of the package's siblings resolve as they would with the package's
    # folder on sys.path.
    if root not in sys.path:
        sys.path.append(root)
    return importlib.import_module(dotted)


def _import_lone_file(path, root, dotted):
    loaded = sys.modules.get(dotted)
    if loaded is not None and os.path.realpath(getattr(loaded, "__file__", "") or "") == path:
        return loaded
    if loaded is not None:
        # Another module already owns this name: keep both, under a name unique to the path.
        dotted = f"{dotted}_{hashlib.sha1(path.encode()).hexdigest()[:8]}"
        if dotted in sys.modules:
            return sys.modules[dotted]
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
                # Where the import looks, for C++ to check later that it would find the same file.
                _search_paths[source] = [os.path.abspath(p) if p else os.getcwd() for p in sys.path
                                         if isinstance(p, str)]
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


def _encode(value):
    """A Python value as JSON C++ reads (compiler/description.cpp); floats as float.hex."""
    import triton.language as tl
    if value is None:
        return {"kind": "none"}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, int) and -2**63 <= value < 2**64:
        return {"kind": "int", "value": value}
    if isinstance(value, float):
        return {"kind": "float", "value": value.hex()}
    if isinstance(value, str):
        return {"kind": "str", "value": value}
    if isinstance(value, tl.dtype):
        return {"kind": "dtype", "value": value.name}
    return {"kind": "object", "type": type(value).__name__}


def _describe_default(param):
    import inspect
    value = param.default
    if value is inspect.Parameter.empty:
        return {"kind": "absent"}
    return {**_encode(value), "repr": _safe_repr(value)}


def _describe_config(config):
    if getattr(config, "ir_override", None) is not None:
        raise KernelNotFoundError(f"an autotune config overrides the IR ({config.ir_override}), which tritonrt does not "
                                  "support")
    return {
        "kwargs": {name: _encode(value) for name, value in config.kwargs.items()},
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
        "num_ctas": config.num_ctas,
        "maxnreg": config.maxnreg,
        "pre_hook": config.pre_hook is not None,
        "text": str(config),
    }


def _overrides(obj, base, method):
    return getattr(type(obj), method) is not getattr(base, method)


def _tunes_a_lone_pruned_config():
    """Whether the installed Triton's Autotuner benchmarks the one config its pruning left
    (and records it in its disk cache): it did before 3.8; from 3.8 it takes that config as
    chosen, as it takes the only config of a one-config autotune."""
    import triton
    version = re.match(r"(\d+)\.(\d+)", triton.__version__)
    return version is not None and (int(version.group(1)), int(version.group(2))) < (3, 8)


def _describe_layer(obj, source, name):
    """One decorator around the @triton.jit function, and the object below it."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton import knobs

    if isinstance(obj, Autotuner):
        return {
            "kind": "autotune",
            "type": type(obj).__name__,
            "keys": list(obj.keys),
            "configs": [_describe_config(c) for c in obj.configs],
            "reset_to_zero": list(obj.reset_to_zero),
            "restore_value": list(obj.restore_value),
            "pre_hook": obj.user_defined_pre_hook,
            "post_hook": obj.user_defined_post_hook,
            "prune": obj.early_config_prune is not None or obj.perf_model is not None or
                     _overrides(obj, Autotuner, "prune_configs"),
            "cache_results": bool(obj.cache_results),
            "print": bool(knobs.autotuning.print),
            "tune_lone_pruned": _tunes_a_lone_pruned_config(),
        }, obj.fn
    if isinstance(obj, Heuristics):
        return {"kind": "heuristics", "type": type(obj).__name__, "names": list(obj.values)}, obj.fn
    if hasattr(obj, "fn"):
        return {"kind": "wrapper", "type": type(obj).__name__}, obj.fn
    raise KernelNotFoundError(f"'{source}:{name}' is wrapped in a {type(obj).__name__}, which holds no .fn to find the "
                              "@triton.jit function under it")


def load_kernel(source, name):
    """Import `source` once and describe the static signature of kernel `name` in it, with the
    decorators around it, outermost first.

    `source` and `name` arrive as bytes (paths need not be UTF-8); the answer is JSON text."""
    from triton.runtime.jit import JITFunction

    source = os.fsdecode(source)
    name = name.decode("utf-8", "surrogateescape")
    module = _import(source)
    # A dotted name reaches an object inside another, e.g. the kernel under a module-level
    # decorator ("kernel.fn"), as Python's front end names what Triton hands it.
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise KernelNotFoundError(f"'{source}' has no attribute '{name}'")
        obj = getattr(obj, part)
    if not isinstance(obj, JITFunction) and not hasattr(obj, "fn"):
        raise KernelNotFoundError(f"'{source}:{name}' is a {type(obj).__name__}: neither a @triton.jit function nor a "
                                  "wrapper holding one in .fn")
    layers, descriptions = [], []
    while not isinstance(obj, JITFunction):
        description, inner = _describe_layer(obj, source, name)
        layers.append(obj)
        descriptions.append(description)
        obj = inner
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
    _layers.append(layers)
    file = getattr(module, "__file__", None)
    return _json({
        "handle": len(_kernels) - 1,
        "name": _printable(obj.__name__),
        "full_name": _printable(f"{obj.__module__}.{obj.__qualname__}"),
        "file": None if file is None else _printable(file),
        "search_path": None if source not in _search_paths else [_printable(p) for p in _search_paths[source]],
        "params": params,
        "decorators": descriptions,
    })


def dependencies(handle):
    """The files Triton's cache key for kernel `handle` depends on, for C++ to re-check without
    Python (src/store/index.cpp): the kernel's source file; for it and every @triton.jit
    function it calls (recursively), the files of the modules it reads globals from (through
    `module.NAME`, or a name imported with `from module import NAME`: every loaded module
    binding that same object under that name counts); and Triton's own `__init__.py` (which
    holds its version). More files than needed only cost a recompile; one missing could serve
    a stale kernel. Answer: JSON, a list of absolute paths."""
    import inspect
    import triton
    from triton.runtime.jit import JITCallable

    files = []

    def add(path):
        if path and path not in files:
            files.append(path)

    def modules_binding(name, value):
        # __dict__, not getattr: a module's __getattr__ may import things.
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict) and namespace.get(name, None) is value:
                yield module

    seen = set()

    def visit(fn):
        if id(fn) in seen:
            return
        seen.add(id(fn))
        fn.cache_key  # fills used_global_vals, as compiling does
        add(inspect.getsourcefile(fn.fn))
        scope = fn.fn.__globals__
        names = fn.fn.__code__.co_names
        for name in names:
            if name not in scope:
                continue  # an attribute name, or a builtin
            value = scope[name]
            if inspect.ismodule(value):  # `module.NAME`: the module, and its JIT functions
                add(getattr(value, "__file__", None))
                for attr in names:
                    candidate = value.__dict__.get(attr)
                    if isinstance(candidate, JITCallable):
                        visit(candidate)
            elif isinstance(value, JITCallable):
                visit(value)
            else:  # a global value, perhaps imported: where it may have come from
                for module in modules_binding(name, value):
                    add(getattr(module, "__file__", None))

    visit(_kernels[handle])
    add(inspect.getsourcefile(triton))
    return _json([_printable(os.path.abspath(f)) for f in files])


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


@contextlib.contextmanager
def _quiet_half_built_kernels():
    """Some Triton versions' CompiledKernel.__del__ fails on an object whose __init__ failed
    (reading a damaged cache entry): that cleanup noise is not the caller's; the entry's
    failure itself is reported. Other unraisable exceptions pass on to the hook as usual."""
    previous = sys.unraisablehook

    def hook(unraisable):
        if getattr(unraisable.object, "__qualname__", "") != "CompiledKernel.__del__":
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        import gc
        gc.collect()  # the half-built kernel goes now, while the hook above is in place
        sys.unraisablehook = previous


_MAX_CACHE_FILE = 1 << 30  # what tritonrt lets Triton read of one cache file (store/files.h: kMaxBinaryBytes)


def _cache_entry_problem(folder):
    """Why Triton must not read the cache entry `folder` (a file in it that is not a regular
    file, which could block or never end, or one larger than any artifact), or None."""
    import stat
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"its folder cannot be listed: {one_line(e).decode()}"
    for name in names:
        try:
            info = os.lstat(os.path.join(folder, name))
        except OSError:
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
        if not embedded:
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
        if not embedded:
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


def _with_output(error, output):
    """Triton's compile error as a CompileFailure: its one line, the compiler's error lines,
    and all it printed (args[1]: for TRITONRT_LOG=debug)."""
    message = one_line(error).decode()
    said = output.errors()
    if said:
        message += "; the compiler said: " + " / ".join(said)
    if output.text:
        message += " (its whole output: TRITONRT_LOG=debug)"
    return CompileFailure(message, output.text)


def compile(handle, backend_name, arch, warp_size, specialization, options):
    """Compile kernel `handle` for one specialization.

    `specialization` has one entry per parameter, each a [type, key] pair exactly as Triton's
    binder builds it, except that constexpr values come encoded as ["value", v],
    ["dtype", name] or ["default"]. `options` holds only the options the caller set.
    Returns (metadata JSON, binary, "cubin" or "hsaco", cache folder, whether the folder held
    the kernel before), all bytes but the kind and the flag.
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
        if folder is not None:
            problem = _cache_entry_problem(folder)
            if problem is not None:
                raise CacheEntryError(os.fsencode(folder), problem.encode("utf-8", "backslashreplace"))
        cached = folder is not None and os.path.exists(os.path.join(folder, f"__grp__{source.name[:150]}.json"))
        unreadable = None
        output = _CompilerOutput()
        with _quiet_half_built_kernels():
            try:
                # In tritonrt's own interpreter Triton's prints (ptxas failures, dumps) go to stderr:
                # the host program's stdout is its own.
                with output, contextlib.redirect_stdout(sys.stderr) if embedded else contextlib.nullcontext():
                    kernel = triton.compile(source, target=target, options=parsed.__dict__)
            except Exception as e:
                # A cache hit compiles nothing: what fails there is reading the entry.
                if not cached or knobs.compilation.always_compile:
                    raise _with_output(e, output) from None
                unreadable = one_line(e)
        if unreadable is not None:
            raise CacheEntryError(os.fsencode(folder), unreadable)
    except (TargetError, CacheEntryError, CompileFailure):
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
    return metadata, bytes(binary), binary_ext, os.fsencode(os.path.dirname(metadata_file)), cached


# --- decorators at call time: heuristics, pruning, hooks, persisted tuning ----------------------

_TORCH_DTYPES = {
    "u1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "u64": "uint64", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "fp8e4nv": "float8_e4m3fn", "fp8e5": "float8_e5m2", "fp8e4b8": "float8_e4m3fnuz", "fp8e5b16": "float8_e5m2fnuz",
}


# Triton's type names as triton.language attributes.
_TL_DTYPES = {
    "u1": "int1", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "u64": "uint64", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
    "fp8e4nv": "float8e4nv", "fp8e5": "float8e5", "fp8e4b15": "float8e4b15", "fp8e4b8": "float8e4b8",
    "fp8e5b16": "float8e5b16",
}


class _Reads:
    """What a heuristic read of its arguments: (parameter, facet) pairs in order, or that it
    read them all (iterating the mapping), which nothing can be memoized on."""

    def __init__(self):
        self.pairs = []
        self.everything = False

    def add(self, name, facet):
        if (name, facet) not in self.pairs:
            self.pairs.append((name, facet))


class _Tensor:
    """A pointer argument as Python code around a kernel sees it: a stand-in for the tensor it
    came from (through tritonrt/torch.h) or for a typed address (through the core API). It
    records what is read of it, so that a heuristic is memoized on exactly that."""

    def __init__(self, name, address, dtype, source, shape, strides, device, extent, stream, reads):
        self._name, self._address, self._dtype_name, self._source = name, address, dtype, source
        self._shape, self._strides, self._device, self._extent = shape, strides, device, extent
        self._stream, self._reads = stream, reads

    def _read(self, facet):
        if self._reads is not None:
            self._reads.add(self._name, facet)

    def _known(self, what):
        if self._shape is None:
            raise AttributeError(f"parameter '{self._name}' reached tritonrt as a device address, so its {what} is "
                                 "unknown (pass an at::Tensor through tritonrt/torch.h)")

    @property
    def dtype(self):
        self._read("dtype")
        if self._source == "tensor":
            import torch
            return getattr(torch, _TORCH_DTYPES[self._dtype_name])
        import triton.language as tl
        return getattr(tl, _TL_DTYPES[self._dtype_name])

    def data_ptr(self):
        self._read("address")
        return self._address

    @property
    def shape(self):
        self._read("shape")
        self._known("shape")
        try:
            import torch
            return torch.Size(self._shape)
        except ImportError:
            return tuple(self._shape)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    ndim = property(dim)

    def numel(self):
        count = 1
        for extent in self.shape:
            count *= extent
        return count

    def stride(self, dim=None):
        self._read("strides")
        self._known("strides")
        return tuple(self._strides) if dim is None else self._strides[dim]

    def is_contiguous(self):
        expected = 1
        for extent, stride in reversed(list(zip(self.shape, self.stride()))):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    def element_size(self):
        self._read("dtype")
        return {"u1": 1, "i8": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4, "fp32": 4,
                "i64": 8, "u64": 8, "fp64": 8}.get(self._dtype_name, 1)

    @property
    def device(self):
        self._read("device")
        try:
            import torch
            return torch.device("cuda", self._device)
        except ImportError:
            return f"cuda:{self._device}"

    is_cuda = True

    def zero_(self):
        """Zeroes the argument's memory on the launch stream, as Tensor.zero_ would."""
        if not self._extent:
            raise AttributeError(f"parameter '{self._name}': tritonrt does not know how many bytes it spans (pass an "
                                 "at::Tensor, or tritonrt::DevicePtr with its size)")
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        status = cuda.cuMemsetD8Async(ctypes.c_uint64(self._address), ctypes.c_ubyte(0), ctypes.c_size_t(self._extent),
                                      ctypes.c_void_p(self._stream))
        if status != 0:
            raise RuntimeError(f"cuMemsetD8Async failed with CUresult {status}")
        return self

    def __getattr__(self, attribute):
        raise AttributeError(f"tritonrt passes parameter '{self._name}' to Python as a stand-in for a tensor, which has "
                             f"no '{attribute}' (it offers dtype, shape, size(), dim(), numel(), stride(), "
                             "is_contiguous(), element_size(), device, data_ptr() and zero_())")

    def __repr__(self):
        return f"<tritonrt {self._source} argument '{self._name}': {self._dtype_name} at {self._address:#x}>"


class _Arguments(collections.abc.Mapping):
    """The arguments of a call as Triton hands them to heuristics and hooks (a dict from
    parameter name to value), recording which are read."""

    def __init__(self, values, reads):
        self._values, self._reads = values, reads

    def __getitem__(self, name):
        value = self._values[name]
        if self._reads is not None and not isinstance(value, _Tensor):
            self._reads.add(name, "value")
        return value

    def __contains__(self, name):
        if self._reads is not None:
            self._reads.add(name, "present")
        return name in self._values

    def get(self, name, default=None):
        return self[name] if name in self else default

    def __iter__(self):
        if self._reads is not None:
            self._reads.everything = True
        return iter(self._values)

    def __len__(self):
        if self._reads is not None:
            self._reads.everything = True
        return len(self._values)

    def copy(self):
        return dict(self.items())


def _python_arguments(fn, arguments, stream=0, reads=None):
    """{name: value} from the C++ description of a call's arguments: one tuple per parameter
    that has a value, (name, kind, ...)."""
    import triton.language as tl
    values = {}
    for entry in arguments:
        name, kind = entry[0], entry[1]
        if kind == "pointer":
            _, _, address, dtype, source, shape, strides, device, extent = entry
            values[name] = _Tensor(name, address, dtype, source, shape, strides, device, extent, stream, reads)
        elif kind == "dtype":
            values[name] = getattr(tl, entry[2])
        elif kind == "default":
            values[name] = next(p.default for p in fn.params if p.name == name)
        elif kind == "str":
            values[name] = entry[2].decode("utf-8", "surrogateescape")
        else:
            values[name] = entry[2]
    return values


def run_heuristic(handle, layer, name, arguments):
    """Heuristic `name` of decorator `layer` on the call's arguments: JSON with its value and
    what it read (null when it read them all)."""
    fn = _kernels[handle]
    reads = _Reads()
    heuristic = _layers[handle][layer].values[name]
    value = heuristic(_Arguments(_python_arguments(fn, arguments, reads=reads), reads))
    return _json({"value": _encode(value), "reads": None if reads.everything else reads.pairs})


def prune_configs(handle, layer, arguments, given):
    """The indices of the configs decorator `layer` benchmarks for a call, after its pruning
    (`early_config_prune`, `perf_model` and `top_k`, or a subclass's own prune_configs).
    `given` names the parameters passed positionally; the others arrive as keyword arguments."""
    tuner = _layers[handle][layer]
    values = _python_arguments(_kernels[handle], arguments)
    tuner.nargs = {name: values[name] for name in given}
    kwargs = {name: value for name, value in values.items() if name not in given}
    try:
        pruned = tuner.prune_configs({**kwargs, "grid": None, "warmup": False})
    finally:
        tuner.nargs = None
    index = {id(config): i for i, config in enumerate(tuner.configs)}
    return [index[id(config)] for config in pruned]


def run_hook(handle, layer, which, arguments, stream, config=-1, reset_only=False):
    """Calls an autotune hook on the call's arguments: the decorator's "pre_hook" or
    "post_hook", or "config" (the pre_hook of config `config`)."""
    tuner = _layers[handle][layer]
    nargs = _Arguments(_python_arguments(_kernels[handle], arguments, stream), None)
    if which == "config":
        tuner.configs[config].pre_hook(nargs)
    elif which == "pre_hook":
        tuner.pre_hook(nargs, reset_only=reset_only)
    else:
        tuner.post_hook(nargs, exception=None)


def _tuning_file(handle, layer, backend_name, arch, warp_size, key, configs):
    """Triton's cache manager and file name for a tuning result, as Autotuner.check_disk_cache
    forms them: the same key, so that C++ and Python share one file."""
    from triton.compiler.compiler import make_backend
    from triton.runtime.cache import get_cache_manager, triton_key
    from triton._C.libtriton import get_cache_invalidating_env_vars

    tuner = _layers[handle][layer]
    fn = _kernels[handle]
    parts = [triton_key(), make_backend(make_target(backend_name, arch, warp_size)).hash(), fn.cache_key,
             str(sorted(get_cache_invalidating_env_vars().items())), str(key)]
    parts += [str(tuner.configs[i]) for i in configs]
    cache_key = hashlib.sha256("-".join(parts).encode("utf-8")).hexdigest()
    return get_cache_manager(cache_key), f"{fn.__name__[:150]}.autotune.json"


def read_tuning(handle, layer, backend_name, arch, warp_size, key, configs):
    """Timings a persisted tuning result holds for these configs (a list, one per config,
    None where it has none), or None when there is no result."""
    import json as json_module
    from triton.runtime.autotuner import Config
    manager, name = _tuning_file(handle, layer, backend_name, arch, warp_size, _key_tuple(key), configs)
    path = manager.get_file(name)
    if not path:
        return None
    with open(path) as f:
        stored = json_module.load(f)["configs_timings"]
    tuner = _layers[handle][layer]
    timings = [None] * len(configs)
    for config, timing in stored:
        restored = Config(**config)
        for slot, i in enumerate(configs):
            if timings[slot] is None and tuner.configs[i] == restored:
                timings[slot] = [float(t) for t in timing]
                break
    return timings


def write_tuning(handle, layer, backend_name, arch, warp_size, key, configs, timings):
    """Persists a tuning result where Triton's check_disk_cache reads it, in its format."""
    tuner = _layers[handle][layer]
    key = _key_tuple(key)
    manager, name = _tuning_file(handle, layer, backend_name, arch, warp_size, key, configs)
    entries = [(tuner.configs[i].__dict__, timing) for i, timing in zip(configs, timings)
               if not tuner.configs[i].pre_hook]
    manager.put(json.dumps({"key": key, "configs_timings": entries}), name, binary=False)


def _key_tuple(key):
    """The C++ description of a tuning key, [(kind, value), ...], as Triton's tuple of values."""
    values = []
    for kind, value in key:
        if kind == "str":
            value = value.decode("utf-8", "surrogateescape")
        values.append(value)
    return tuple(values)
