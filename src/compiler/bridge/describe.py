"""Kernels described for the C++ side: the @triton.jit function's parameters and the
decorators around it (each kernel gets a handle, its index in `kernels`), and the files its
Triton cache key depends on."""

import os
import re
import sys

from _tritonrt_bridge.common import KernelNotFoundError, as_json, printable
from _tritonrt_bridge.freshness import check_fresh
from _tritonrt_bridge.importing import import_source, search_paths

# What the package offers C++.
__all__ = ["kernel_description", "kernel_handle", "is_current", "dependencies"]

kernels = []  # handle -> JITFunction
decorator_stacks = []  # handle -> the decorator objects around it, outermost first
named = []  # handle -> (source, name, the object found under that name)


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
    from triton.runtime.jit import JITFunction

    source = os.fsdecode(source)
    name = name.decode("utf-8", "surrogateescape")
    module = import_source(source)
    obj = found = _find(module, source, name)
    if not isinstance(obj, JITFunction) and not hasattr(obj, "fn"):
        raise KernelNotFoundError(f"'{source}:{name}' is a {type(obj).__name__}: neither a @triton.jit function nor a "
                                  "wrapper holding one in .fn")
    layers, descriptions = [], []
    while not isinstance(obj, JITFunction):
        description, inner = _describe_layer(obj, source, name)
        layers.append(obj)
        descriptions.append(description)
        obj = inner
    kernels.append(obj)
    decorator_stacks.append(layers)
    named.append((source, name, found))
    return source, module, obj, descriptions, len(kernels) - 1


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
    params = [{
        "name": p.name,
        "is_constexpr": bool(p.is_constexpr),
        "is_const": bool(p.is_const),
        "do_not_specialize": bool(p.do_not_specialize),
        "do_not_specialize_on_alignment": bool(p.do_not_specialize_on_alignment),
        "annotation_type": p.annotation_type,
        "default": _describe_default(p._param),
    } for p in obj.params]
    file = getattr(module, "__file__", None)
    return as_json({
        "handle": handle,
        "name": printable(obj.__name__),
        "full_name": printable(f"{obj.__module__}.{obj.__qualname__}"),
        "file": None if file is None else printable(file),
        "search_path": None if source not in search_paths else [printable(p) for p in search_paths[source]],
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
    a stale kernel. Where the kernel in this process may not be what its files hold now (a file
    edited since it was imported, or no file at all, as for a notebook cell's: see
    freshness.check_fresh) this raises KernelSourceError: the files' stamps would name code
    this process does not run, so such a kernel is not indexed. Answer: JSON, a list of
    absolute paths."""
    import inspect
    import triton
    from triton.runtime.autotuner import Autotuner, Heuristics
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

    visited = {}

    def visit(fn):
        if id(fn) in visited:
            return
        visited[id(fn)] = fn
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

    visit(kernels[handle])
    add(inspect.getsourcefile(triton))
    # A library's wrapper is described by its type alone; autotune and heuristics by their arguments.
    tuned = any(isinstance(layer, (Autotuner, Heuristics)) for layer in decorator_stacks[handle])
    check_fresh(list(visited.values()), tuned, files)
    return as_json([printable(os.path.abspath(f)) for f in files])
