"""The wiring of the extension tritonrt._frontend (src/python_extension/): what it is handed
once per process (setup: Triton's driver, knobs and hooks, the dtype tables, the callbacks it
makes), the Kernel it is made for each kernel (where the kernel's code lives, whether tritonrt
runs its decorators as their classes would), and its callbacks (a fallback logged once, the
Kernel of an object install() routes). tritonrt.frontend, the public module, calls in here;
nothing here imports it (its _setup hands over its own callback and classes).
"""
import ast
import importlib
import inspect
import logging
import os
import sys
import threading

_LOG = logging.getLogger("tritonrt")
_lock = threading.RLock()
_ready = False
_MISSING = object()
_frontend = None
_JITFunction = None
_KernelInterface = None


def _compiling():
    return False


def _torch_api():
    """The torch support module's capsule, where it was built for the torch imported here."""
    if "torch" not in sys.modules:
        return None
    from . import _build_info
    import torch
    if _build_info.TORCH_VERSION is None or \
            torch.__version__.split("+")[0].split(".")[:2] != _build_info.TORCH_VERSION.split("+")[0].split(".")[:2]:
        return None
    try:
        from . import _frontend_torch
    except ImportError as e:
        _LOG.info("tritonrt: torch's tensors are read through Python (%s)", e)
        return None
    return _frontend_torch.api


def _dtype_tables():
    """(object, Triton's name) of every dtype object Triton takes: pointers' and constexprs'."""
    import triton.language as tl
    language = []
    for value in vars(tl).values():
        if isinstance(value, tl.dtype) and not isinstance(value, tl.pointer_type):
            name = _canonical_dtype(value)
            if name is not None:
                language.append((value, name))
    pointers = list(language)
    if "torch" in sys.modules:
        import torch
        for value in vars(torch).values():
            if isinstance(value, torch.dtype):
                name = _canonical_dtype(value)
                if name is not None:
                    pointers.append((value, name))
    return pointers, language


def _canonical_dtype(dtype):
    from triton._utils import canonicalize_dtype
    try:
        return canonicalize_dtype(dtype)
    except Exception:
        return None


def _torch_driver(driver):
    """Whether a Triton driver's device and stream are torch's (then torch's C++ API answers)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return getattr(driver, "get_current_device", None) is torch.cuda.current_device and \
        getattr(driver, "get_current_stream", None) is getattr(torch._C, "_cuda_getCurrentRawStream", _MISSING)


def _runtime_check():
    """Why the runtime settings of triton.knobs keep tritonrt out of a launch, or None."""
    from triton import knobs
    runtime = knobs.runtime
    for chain in ("launch_enter_hook", "launch_exit_hook"):
        hook = getattr(runtime, chain)
        if getattr(hook, "calls", True):
            return f"a launch hook is set (triton.knobs.runtime.{chain})"
    for name, value in vars(runtime).items():
        if name in ("kernel_load_start_hook", "kernel_load_end_hook") and not getattr(value, "calls", True):
            continue
        if value is not None and value is not False:
            return f"triton.knobs.runtime.{name} is set"
    return None


def _no_gpu():
    """Why this process can launch on no CUDA GPU, or None where it may."""
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "this machine has no CUDA driver (libcuda.so.1)"
    torch = sys.modules.get("torch")
    if torch is not None and not torch.cuda.is_available():
        return "torch sees no CUDA GPU"
    return None


def _log_fallback(target, reason):
    if reason.startswith(_DECORATORS_IN_PYTHON):  # the kernel itself still launches through tritonrt
        _LOG.info("tritonrt: %s: %s", _describe(target), reason)
        return
    no_gpu = _no_gpu() if "not on a CUDA device" in reason else None
    if no_gpu is not None:
        # Triton's own path fails too, in its words; these come first.
        reason += (f"; {no_gpu}, so Triton's path cannot launch it either. Without a GPU, TRITON_INTERPRET=1 runs "
                   "kernels in Triton's interpreter (tritonrt.launcher hands them to it), and `tritonrt compile` "
                   "compiles them for a target you name")
    _LOG.warning("tritonrt: %s is launched by Triton's own path: %s", _describe(target), reason)


def _describe(obj):
    jit = _jit_inside(obj)
    name = getattr(getattr(jit, "fn", None), "__qualname__", None) or type(obj).__name__
    module = getattr(getattr(jit, "fn", None), "__module__", "?")
    return f"kernel '{module}.{name}'"


def _descriptor_type(module):
    """The host TensorDescriptor class of `module` (Triton's, Gluon's Hopper one), or None
    where this Triton has none."""
    try:
        return importlib.import_module(module).TensorDescriptor
    except (ImportError, AttributeError):
        return None


def _setup(make_result, subscripted):
    """Hands the C++ side what it reads on every call, `make_result` making what a launch
    returns, and subscripts the classes `subscripted` in C where torch.compile allows it; once
    per process (tritonrt.frontend's _setup passes its own)."""
    global _ready, _frontend, _JITFunction, _KernelInterface, _compiling
    if _ready:
        return
    with _lock:
        if _ready:
            return
        import triton
        from triton import knobs
        from triton.runtime.driver import driver
        from triton.runtime import _async_compile
        from triton.runtime.jit import JITFunction, KernelInterface
        from . import _frontend as frontend
        from . import _grids
        compiler_namespace = None
        try:  # Triton's driver reads torch's device and stream; tensors are torch's
            import torch
            _compiling = torch.compiler.is_compiling
            compiler_namespace = vars(torch.compiler)
        except ImportError:
            pass
        pointers, language = _dtype_tables()
        frontend.setup(
            driver_config=driver,
            runtime_dict=vars(knobs.runtime),
            enter_hooks=knobs.runtime.launch_enter_hook.calls,
            exit_hooks=knobs.runtime.launch_exit_hook.calls,
            async_mode=_async_compile.active_mode,
            runtime_check=_runtime_check,
            log_fallback=_log_fallback,
            make_result=make_result,
            kernel_for=_kernel_for,
            base_kernel_for=_base_kernel_for,
            canonical_dtype=_canonical_dtype,
            grid_plan=_grids.plan,
            torch_check=_torch_driver,
            tensor_type=sys.modules["torch"].Tensor if "torch" in sys.modules else None,
            size_type=sys.modules["torch"].Size if "torch" in sys.modules else None,
            descriptor_type=_descriptor_type("triton.tools.tensor_descriptor"),
            gluon_descriptor_type=_descriptor_type("triton.experimental.gluon.nvidia.hopper"),
            torch_api=_torch_api(),
            compiler_namespace=compiler_namespace,
            pointer_dtypes=pointers,
            constexpr_dtypes=language,
        )
        if compiler_namespace is None or "_is_compiling_flag" in compiler_namespace:
            # launcher[grid] and compiled[grid] in C; the Python __getitem__ stays for what
            # torch.compile traces (is_compiling() is that flag, read in C, where a torch has it).
            for cls in subscripted:
                frontend.fast_subscript(cls)
        del triton
        _frontend, _JITFunction, _KernelInterface = frontend, JITFunction, KernelInterface
        _ready = True


def _jit_inside(obj):
    """The JITFunction under a stack of decorators (each holds the next in .fn), or None."""
    from triton.runtime.jit import JITFunction
    for _ in range(64):
        if isinstance(obj, JITFunction):
            return obj
        obj = getattr(obj, "fn", None)
        if obj is None:
            return None
    return None


def _locate(obj, jit):
    """(module name, dotted name) by which tritonrt's JitFunction::get finds `obj` (the module's
    own object, not another import of it), or (`obj`, None) for a kernel no module in
    sys.modules names (one made inside a function; one of a module its loader kept out of
    sys.modules, as FlagGems loads the kernels it generates), which tritonrt describes from the
    object itself and does not index (the observer saw no module of that name run its code)."""
    module_name = getattr(jit.fn, "__module__", None)
    module = sys.modules.get(module_name)
    if module is None:
        return obj, None

    def search(root, path):
        current, depth = root, 0
        while current is not None and depth < 64:
            if current is obj:
                return path + ".fn" * depth
            if not isinstance(current, _KernelInterface) or isinstance(current, _JITFunction):
                return None
            current, depth = getattr(current, "fn", None), depth + 1
        return None

    for name, value in list(vars(module).items()):
        found = search(value, name)
        if found is not None:
            return module_name, found
    # A kernel held by a class, by its qualified name.
    qualname = getattr(jit.fn, "__qualname__", "")
    if "<locals>" not in qualname and "." in qualname:
        holder = module
        for part in qualname.split(".")[:-1]:
            holder = getattr(holder, part, None)
        for name, value in list(vars(holder).items()) if holder is not None and hasattr(holder, "__dict__") else []:
            found = search(value, name)
            if found is not None:
                return module_name, f"{qualname.rsplit('.', 1)[0]}.{found}"
    return obj, None


def _is_gluon(jit):
    """Whether `jit` is a @gluon.jit kernel, which tritonrt compiles through Gluon's source class."""
    try:
        from triton.experimental.gluon._runtime import GluonJITFunction
    except ImportError:
        return False
    return type(jit) is GluonJITFunction


# Library wrappers (holding the kernel in .fn) whose run tritonrt reproduces, by the class's
# module and qualified name, with what a launch of one returns:
# - FlagGems' LibEntry: its run caches, per specialization key, the kernel its first call
#   compiled and the constexprs its decorators chose, then relaunches that kernel; tritonrt's
#   table does the same per specialization. A launch returns (compiled kernel, those constexprs).
#   Where a heuristic reads a value its key leaves out (a do_not_specialize integer), LibEntry
#   keeps the first call's value and tritonrt computes it per call, as Triton does without it.
_REPRODUCED_WRAPPERS = {"flag_gems.utils.libentry.LibEntry": "libentry"}


def _fla_cache_disabled(tuner):
    """None where fla's CachedAutotuner.run is Autotuner.run: its module's FLA_CACHE_MODE is
    DISABLED (fla's default, set from the environment when fla is imported), and the run only
    builds a key it never looks up. Otherwise why not: it looks configs up in fla's files."""
    mode = getattr(sys.modules.get("fla.ops.utils.cache"), "FLA_CACHE_MODE", None)
    name = getattr(mode, "name", mode)
    return None if name == "DISABLED" else f"fla's FLA_CACHE_MODE is {name}, not DISABLED"


_LIBTUNER = "flag_gems.utils.libentry.LibTuner"


def _libtuner_keyed(tuner):
    """None where FlagGems' LibTuner `tuner` makes its key as LibTuner does (each of Triton's
    key values through a strategy function of its own, then the dtypes): tritonrt then takes
    the config its database holds for a call's key (its run reads it on every call), and leaves
    a key it lacks to its run, which tunes it with its policy. Otherwise why not."""
    defined = _defined_by(type(tuner), "get_key")
    if _qualified(defined) != _LIBTUNER:
        return f"its key is {defined.__qualname__}.get_key's"
    strategies = getattr(tuner, "strategy", None)
    if not isinstance(strategies, (list, tuple)) or len(strategies) != len(tuner.keys) \
            or not all(callable(s) for s in strategies):
        return "its strategy is not one function per key"
    return None


# Tuner subclasses whose own run tritonrt reproduces, by the module and qualified name of the
# class defining it: (a check of the tuner saying why not (at the kernel's first launch under
# install()), or None; whether its run tunes every key itself, so that tritonrt never times
# its configs from Python and how it would time them does not matter).
# - fla's CachedAutotuner: Triton's Autotuner.run, where fla's cache mode makes it one.
# - FlagGems' LibTuner: Autotuner.run's launch with the config its database holds for the key
#   (the bridge reads it there once per key); a key it lacks goes to its own run.
_REPRODUCED_RUNS = {"fla.ops.utils.cache.CachedAutotuner": (_fla_cache_disabled, False),
                    _LIBTUNER: (_libtuner_keyed, True)}
# What a subclass of Autotuner or Heuristics may not redefine for tritonrt to run it as Triton's
# class runs (prune_configs it calls; the rest decide what runs, how it is timed, what is kept).
_DECORATOR_METHODS = ("run", "_bench", "check_disk_cache", "do_bench", "warmup")
_DECORATORS_IN_PYTHON = "its decorators run in Python"


def _qualified(cls):
    """`cls`'s module and qualified name, as the tables above name classes."""
    return f"{cls.__module__}.{cls.__qualname__}"


def _class_name(layer):
    return _qualified(type(layer))


def _defined_by(cls, name):
    """The class of `cls`'s MRO that defines attribute `name`, or None."""
    for base in cls.__mro__:
        if name in base.__dict__:
            return base
    return None


def _unreproduced(target, from_base_run=False):
    """Why tritonrt cannot run the decorator stack `target` exactly as its own classes would
    (install() then leaves the decorators to Python), or None where it can. `from_base_run`:
    the stack as its top layer's base class's run (Autotuner.run, Heuristics.run) runs it, that
    layer's own run aside."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction
    layer = target
    for depth in range(64):
        if isinstance(layer, JITFunction):
            return None
        cls, name = type(layer), _class_name(layer)
        if isinstance(layer, (Autotuner, Heuristics)):
            base = _base_class(layer)
            for method in _DECORATOR_METHODS:
                if method == "run" and from_base_run and depth == 0:
                    continue
                if _defined_by(cls, method) is not _defined_by(base, method):
                    why = _unreproduced_run(layer) if method == "run" else ""
                    if why is None:
                        continue
                    return f"{name} redefines {base.__name__}.{method}" + (f": {why}" if why else "")
            if isinstance(layer, Autotuner) and getattr(layer, "_do_bench", None) is not None \
                    and not _reproduced_run(layer)[1]:
                return f"its {name} times configs with its own do_bench"
        elif name not in _REPRODUCED_WRAPPERS:
            return f"tritonrt does not reproduce what {name}.run does"
        elif _defined_by(cls, "run") is not cls:
            return f"{name} has its run from {_defined_by(cls, 'run').__qualname__}"
        layer = getattr(layer, "fn", None)
    return None


def _reproduced_run(layer):
    """_REPRODUCED_RUNS' entry for the class defining `layer`'s run, or (None, False)."""
    return _REPRODUCED_RUNS.get(_qualified(_defined_by(type(layer), "run")), (None, False))


def _unreproduced_run(layer):
    """Why tritonrt cannot run the run `layer`'s class defines as Triton's own (an empty text
    where that class is not one it reproduces), or None where it can."""
    check = _reproduced_run(layer)[0]
    return "" if check is None else check(layer)


def _base_class(layer):
    """Triton's class a decorator layer is an instance of: Autotuner or Heuristics."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    return Autotuner if isinstance(layer, Autotuner) else Heuristics


def _new_kernel(target, fallback_run, strict, from_base_run=False):
    """The C++ Kernel for `target` (a JITFunction, or a stack of decorators over one). `strict`:
    a stack tritonrt does not run exactly as its classes would is left to Python (install());
    `from_base_run`: the Kernel of the stack as its top layer's base class's run runs it."""
    from triton.runtime.jit import JITFunction
    jit = _jit_inside(target)
    if jit is None:
        raise TypeError(f"tritonrt.launcher takes a @triton.jit kernel or decorators over one (each holding the next "
                        f"in .fn), not {type(target).__name__}")
    defaults = tuple(jit if p.default is inspect.Parameter.empty else p.default for p in jit.params)
    reason = None
    source = name = None
    if type(jit) is not JITFunction and not _is_gluon(jit):
        reason = f"it is a {type(jit).__name__}, which tritonrt does not compile"
    elif strict and (why := _unreproduced(target, from_base_run)) is not None:
        below = why if from_base_run else _unreproduced(target, from_base_run=True)
        if below is not None:
            both = why if below == why else f"{why}, and {below}"
            reason = f"{_DECORATORS_IN_PYTHON} ({both}); the kernel under them launches through tritonrt"
        else:
            reason = (f"{_DECORATORS_IN_PYTHON} ({why}); where it calls {_base_class(target).__name__}.run "
                      "(super().run), the stack launches through tritonrt from there")
    else:
        source, name = _locate(target, jit)
    return _frontend.Kernel(target, jit, fallback_run, source, name, defaults, reason)


def _own_run(target):
    """Triton's (or the class's own) run of `target`, never one install() put in its place."""
    return _own_run_of(type(target))


def _own_run_of(cls):
    """Triton's (or the class's own) run of class `cls`, never one install() put in its place."""
    run = cls.run
    return run.__wrapped__ if isinstance(run, _frontend.RoutedRun) else run


def _kernel_for(target):
    """The Kernel that launches `target` under install() (a JITFunction, or a stack of decorators
    over one), made once and kept on it, or None for an object tritonrt leaves alone (no
    JITFunction under it): its fallback is Triton's own run of that object, never install()'s."""
    kernel = getattr(target, "_tritonrt_kernel", _MISSING)
    if kernel is _MISSING:
        with _lock:
            kernel = getattr(target, "_tritonrt_kernel", _MISSING)
            if kernel is _MISSING:
                kernel = None if _jit_inside(target) is None else _new_kernel(target, _own_run(target), strict=True)
                try:
                    target._tritonrt_kernel = kernel
                except AttributeError:  # an object without a __dict__: a new Kernel each time
                    pass
    return kernel


def _base_kernel_for(target):
    """The Kernel that launches `target` where its base class's run (Autotuner.run or
    Heuristics.run) is called for it from the run its own class defines, as `super().run(...)`
    (fla's CachedAutotuner looks its configs up first, then calls it): what its own run did
    before stays Python's, the stack from the base's run down launches through tritonrt where
    the rest of it is Triton's. None where install()'s Kernel of `target` serves (its own run
    is not what left it to Python). Made once and kept on `target`."""
    kernel = getattr(target, "_tritonrt_base_kernel", _MISSING)
    if kernel is _MISSING:
        with _lock:
            kernel = getattr(target, "_tritonrt_base_kernel", _MISSING)
            if kernel is _MISSING:
                whole = _kernel_for(target)
                kernel = None
                if whole is not None and whole.reason is not None and whole.reason.startswith(_DECORATORS_IN_PYTHON) \
                        and _unreproduced(target, from_base_run=True) is None:
                    kernel = _new_kernel(target, _own_run_of(_base_class(target)), strict=True, from_base_run=True)
                try:
                    target._tritonrt_base_kernel = kernel
                except AttributeError:
                    pass
    return kernel


def _launcher_kernel(target):
    """The Kernel of tritonrt.launcher(target): install()'s, but for a stack it leaves to Python,
    which tritonrt.launcher runs as Triton's own classes would (the caller asked for it)."""
    kernel = _kernel_for(target)
    if kernel.reason is not None and kernel.reason.startswith(_DECORATORS_IN_PYTHON):
        kernel = _new_kernel(target, _own_run(target), strict=False)
    return kernel



def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
