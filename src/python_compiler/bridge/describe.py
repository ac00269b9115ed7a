"""Kernels described for the C++ side: the @triton.jit function's parameters and the
decorators around it (each kernel gets a handle, its index in `kernels`), and the files its
Triton cache key depends on."""

import os
import re
import sys

from _tritonrt_bridge.common import KernelNotFoundError, KernelSourceError, as_json, printable
from _tritonrt_bridge.importing import _is_path, _package_root, appended_folders, import_source, search_paths
from _tritonrt_bridge.record_inputs import inputs as recorded_inputs, own_file_entry

# What the package offers C++.
__all__ = ["kernel_description", "object_kernel_description", "kernel_handle", "is_current", "dependencies"]

kernels = []  # handle -> JITFunction
decorator_stacks = []  # handle -> the decorator objects around it, outermost first
# handle -> (source, name, the object found under that name); source None for a kernel described
# from the object the front end handed over, which the list keeps alive (its id names it).
named = []


def _safe_repr(value):
    try:
        return repr(value)
    except BaseException:
        return f"<{type(value).__name__} object whose repr() failed>"


def encode(value):
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
    return {**encode(value), "repr": _safe_repr(value)}


def _describe_config(config):
    if getattr(config, "ir_override", None) is not None:
        raise KernelNotFoundError(f"an autotune config overrides the IR ({config.ir_override}), which tritonrt does not "
                                  "support")
    return {
        "kwargs": {name: encode(value) for name, value in config.kwargs.items()},
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


def _import_kernel(source, name):
    """Kernel `name` of `source` (both bytes: paths need not be UTF-8), imported once per
    source: (source, module, the JITFunction, its decorator layers outermost first, their
    descriptions, its handle)."""
    # Triton imported first: what its own import reads is not counted among what the module read.
    import triton.runtime.jit  # noqa: F401

    source = os.fsdecode(source)
    name = name.decode("utf-8", "surrogateescape")
    module = import_source(source)
    return (source, module) + _register(_find(module, source, name), source, name)


def _register(found, source, name):
    """A handle for `found` (a JITFunction or decorators over one, each holding the next in
    .fn), kernel `name` of `source`, or handed over as an object (source None): (the
    JITFunction, its decorator layers outermost first, their descriptions, the handle)."""
    from triton.runtime.jit import JITFunction

    shown = "<object>" if source is None else source  # in messages
    if not isinstance(found, JITFunction) and not hasattr(found, "fn"):
        raise KernelNotFoundError(f"'{shown}:{name}' is a {type(found).__name__}: neither a @triton.jit function nor "
                                  "a wrapper holding one in .fn")
    obj, layers, descriptions = found, [], []
    while not isinstance(obj, JITFunction):
        description, inner = _describe_layer(obj, shown, name)
        layers.append(obj)
        descriptions.append(description)
        obj = inner
    kernels.append(obj)
    decorator_stacks.append(layers)
    named.append((source, name, found))
    return obj, descriptions, len(kernels) - 1


def _find(module, source, name):
    # A dotted name reaches an object inside another, e.g. the kernel under a module-level
    # decorator ("kernel.fn"), as Python's front end names what Triton hands it.
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise KernelNotFoundError(f"'{source}' has no attribute '{name}'")
        obj = getattr(obj, part)
    return obj


def is_current(handle):
    """Whether kernel `handle` is still what its module holds under its name: not so once the
    module was reloaded, the kernel defined again (a notebook cell run again), or another
    module of that name imported in its place."""
    source, name, found = named[handle]
    if source is None:  # described from the object itself, which it stays
        return True
    try:
        return _find(import_source(source), source, name) is found
    except Exception:
        return False


def kernel_handle(source, name):
    """The handle of kernel `name` of `source`, for a kernel C++ already knows the description
    of (read from tritonrt's index)."""
    return _import_kernel(source, name)[-1]


def kernel_description(source, name):
    """Import `source` once and describe the static signature of kernel `name` in it, with the
    decorators around it, outermost first; the answer is JSON text."""
    source, module, obj, descriptions, handle = _import_kernel(source, name)
    file = getattr(module, "__file__", None)
    search_path = None if source not in search_paths else [printable(p) for p in search_paths[source]]
    return _description(handle, obj, descriptions, file, search_path)


def object_kernel_description(target):
    """Describe the kernel `target` is (a JITFunction, or decorators over one) as kernel_description
    does, from the object itself: a kernel no module in sys.modules names (one made inside a
    function, one of a module its loader kept out of sys.modules), which the Python front end
    hands over. Its handle keeps `target` alive; the answer is JSON text."""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__
    obj, descriptions, handle = _register(target, None, str(name))
    file = getattr(getattr(obj.fn, "__code__", None), "co_filename", None)
    return _description(handle, obj, descriptions, file, None)


def _description(handle, obj, descriptions, file, search_path):
    params = [{
        "name": p.name,
        "is_constexpr": bool(p.is_constexpr),
        "is_const": bool(p.is_const),
        "do_not_specialize": bool(p.do_not_specialize),
        "do_not_specialize_on_alignment": bool(p.do_not_specialize_on_alignment),
        "annotation_type": p.annotation_type,
        "default": _describe_default(p._param),
    } for p in obj.params]
    return as_json({
        "handle": handle,
        "name": printable(obj.__name__),
        "full_name": printable(f"{obj.__module__}.{obj.__qualname__}"),
        "file": None if file is None else printable(file),
        "search_path": search_path,
        "params": params,
        "decorators": descriptions,
    })


def dependencies(handle):
    """What kernel `handle`'s description and binaries were made from, as the observer saw it
    (bridge/observe.py, bridge/record_inputs.py), for C++ to check without Python
    (src/store/index_inputs.cpp): the files its modules' code was read from and read, through every
    module they imported (an installed distribution by its record file; Python's own library by
    the Python), the folders they listed, where a new process would find each module, the
    environment variables they read and those Triton's cache key reads. Raises
    KernelSourceError where any of it cannot be observed or no longer holds (a file edited after
    its module was imported, a global changed in memory, a module imported before tritonrt
    observed imports, a notebook cell's kernel): such a kernel is not indexed. Answer: JSON,
    {"files", "modules", "environment"}, the kernel's own file first."""
    from triton.runtime.jit import JITCallable

    source, name, _ = named[handle]
    if source is None:
        raise KernelSourceError(f"'{name}' was handed over as an object, which no other process can find by name")
    visited = {}

    def visit(fn):
        if id(fn) in visited:
            return
        visited[id(fn)] = fn
        fn.cache_key  # fills used_global_vals, as compiling does
        scope = fn.fn.__globals__
        for value in (scope.get(n) for n in fn.fn.__code__.co_names):
            if isinstance(value, JITCallable):
                visit(value)

    visit(kernels[handle])
    roots = [fn.fn.__globals__ for fn in visited.values()]
    module = import_source(source)
    roots.append(vars(module))
    for layer in decorator_stacks[handle]:  # the decorators' own code and the functions they were given
        layer_module = sys.modules.get(type(layer).__module__)
        if layer_module is not None:
            roots.append(vars(layer_module))
        for value in list(vars(layer).values()) + list(getattr(layer, "values", {}).values()):
            scope = getattr(value, "__globals__", None)
            if isinstance(scope, dict):
                roots.append(scope)
    globals_read = [(global_name, value, scope) for fn in visited.values()
                    for (global_name, _), (value, scope) in getattr(fn, "used_global_vals", {}).items()]
    by_path = _is_path(source)
    own_file = os.path.realpath(os.fsdecode(source)) if by_path else getattr(module, "__file__", None)
    # Where a new process that loads this kernel alone would look for a module: as this one,
    # less the folders tritonrt added for other kernels, plus the kernel's own.
    search_path = [p for p in sys.path if isinstance(p, str) and p not in appended_folders]
    if by_path:
        search_path.append(_package_root(own_file)[0])
    try:
        inputs = recorded_inputs(roots, globals_read, search_path, module.__name__ if by_path else None)
    except LookupError as e:
        raise KernelSourceError(f"what '{name}' was made from cannot all be observed: {e}") from None
    files = inputs["files"]
    own = [f for f in files if f["path"] == own_file]
    if not own:  # a module of an installed distribution, which its RECORD stands for: named all the same
        try:
            own = [own_file_entry(vars(module), own_file)]
        except LookupError as e:
            raise KernelSourceError(f"what '{name}' was made from cannot all be observed: {e}") from None
    inputs["files"] = own + [f for f in files if f["path"] != own_file]
    inputs["environment"] = {**inputs["environment"], **_triton_key_environment()}
    for entry in inputs["files"]:
        entry["path"] = printable(entry["path"])
    return as_json(inputs)


_TRITON_VARIABLES = None


def _triton_key_environment():
    """{variable: value, or None where unset} for every environment variable the installed
    Triton's cache key reads (its own list, `get_cache_invalidating_env_vars`, which names only
    those set: the names are found once per Triton install by asking it with every candidate
    named in its library set, and kept in the user's cache folder)."""
    global _TRITON_VARIABLES
    if _TRITON_VARIABLES is None:
        _TRITON_VARIABLES = _triton_key_variables()
    return {variable: os.environ.get(variable) for variable in _TRITON_VARIABLES}


def _triton_key_variables():
    import json
    import mmap
    from triton._C import libtriton
    from triton._C.libtriton import get_cache_invalidating_env_vars

    library = libtriton.__file__
    status = os.stat(library)
    identity = f"{os.path.realpath(library)}|{status.st_size}|{status.st_mtime_ns}|{status.st_ino}"
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    kept = os.path.join(cache_home, "tritonrt", "triton-key-variables.json")
    try:
        with open(kept, encoding="utf-8") as file:
            known = json.load(file)
        if os.stat(kept).st_uid == os.getuid() and identity in known:
            return known[identity]
    except (OSError, ValueError, TypeError):
        known = {}
    with open(library, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        start, end = _elf_section(data, b".rodata") or (0, len(data))
        candidates = {m.decode() for m in re.findall(rb"(?<=\x00)([A-Z][A-Z0-9]*_[A-Z0-9_]+)(?=\x00)", data[start:end])}
    # Not through os.environ's mapping, whose reads the observer counts as a module's.
    candidates -= {os.fsdecode(name) for name in os.environ._data}  # those set answer for themselves
    try:
        for variable in candidates:
            os.environ[variable] = "1"
        named = set(get_cache_invalidating_env_vars())
    finally:
        for variable in candidates:
            del os.environ[variable]
    named |= set(get_cache_invalidating_env_vars())
    names = sorted(named)
    try:
        os.makedirs(os.path.dirname(kept), mode=0o700, exist_ok=True)
        temporary = f"{kept}.tmp-{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump({identity: names}, file)
        os.replace(temporary, kept)
    except OSError:
        pass  # asked again by the next process
    return names


def _elf_section(data, wanted):
    """(start, end) of section `wanted` in the 64-bit little-endian ELF file `data`, or None."""
    try:
        if data[:6] != b"\x7fELF\x02\x01":
            return None
        shoff = int.from_bytes(data[0x28:0x30], "little")
        size, count, names = (int.from_bytes(data[o:o + 2], "little") for o in (0x3A, 0x3C, 0x3E))

        def header(i):
            at = shoff + i * size
            return (int.from_bytes(data[at:at + 4], "little"), int.from_bytes(data[at + 24:at + 32], "little"),
                    int.from_bytes(data[at + 32:at + 40], "little"))

        _, table, _ = header(names)
        for i in range(count):
            name, offset, length = header(i)
            if data[table + name:table + name + len(wanted) + 1] == wanted + b"\x00":
                return offset, offset + length
    except (IndexError, ValueError):
        pass
    return None
