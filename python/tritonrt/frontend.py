"""Triton kernels launched from Python through tritonrt, called exactly as Triton's own.

Wrap one kernel (a @triton.jit function, or any stack of autotune / heuristics / library
decorators around one):

    import tritonrt
    add = tritonrt.launcher(add_kernel)
    add[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=1024)

or route every @triton.jit launch of the process (TRITONRT_INSTALL=1 does it at start-up):

    tritonrt.install()
    ...
    tritonrt.uninstall()

The call is specialized, compiled and cached as Triton does it (the same hash, Triton's own
cache, the same tuning file), and a cache hit runs in C++: arguments read by type checks and
torch's C API, no Python per argument, the launch on torch's current stream. A call tritonrt
cannot launch goes to Triton's own path for that call, and the reason is logged once per
kernel on the logger "tritonrt".
"""
import collections
import functools
import inspect
import json
import os
import sys

from . import _wiring

__all__ = ["launcher", "Launcher", "CompiledKernel", "install", "uninstall", "installed"]

_saved = None  # [(class, name, its own attribute)] that install() replaced, while in effect


def _setup():
    _wiring._setup(_result, (Launcher, CompiledKernel))


def _result(kernel, metadata_json, hash, binary, binary_kind, cache_dir, specialization):
    """What a launch that ran this binary returns, and ((autotuner, config), ...): the config of
    each autotuner of the stack that made it (tritonrt sets it as the tuner's best_config)."""
    compiled = CompiledKernel(kernel, metadata_json, hash, binary, binary_kind, cache_dir, specialization)
    from triton.runtime.autotuner import Autotuner, Heuristics
    constants = {p.name: _wiring._literal(value) for p, (ty, value) in zip(kernel.jit.params, specialization)
                 if ty == "constexpr"}
    options = json.loads(metadata_json)
    tuned, chosen = [], {}
    layer = kernel.target
    while layer is not kernel.jit and layer is not None:
        if isinstance(layer, Autotuner):
            for config in layer.configs:
                if all(constants.get(k, _wiring._MISSING) == v for k, v in config.kwargs.items()) and all(
                        getattr(config, o) in (None, options.get(o)) for o in ("num_warps", "num_stages", "num_ctas")):
                    tuned.append((layer, config))
                    chosen.update(num_warps=config.num_warps, num_stages=config.num_stages, num_ctas=config.num_ctas,
                                  **config.kwargs)
                    break
        elif isinstance(layer, Heuristics):
            chosen.update({name: constants.get(name, options.get(name)) for name in layer.values})
        layer = getattr(layer, "fn", None)
    result = compiled
    if _wiring._REPRODUCED_WRAPPERS.get(_wiring._class_name(kernel.target)) == "libentry":
        for p in kernel.jit.params:  # LibEntry's constexprs: the decorators' choices, then defaults
            if p.is_constexpr and p.name not in chosen and p.default is not inspect.Parameter.empty:
                chosen[p.name] = p.default
        result = (compiled, chosen)
    return result, tuple(tuned)


class Launcher:
    """A kernel called as Triton calls it, launched through tritonrt:

        k = tritonrt.launcher(kernel)
        compiled = k[grid](*args, **kwargs)   # grid: a tuple, or grid(META) of the bound arguments
        compiled.hash                          # Triton's hash of the binary that ran

    Inside torch.compile the wrapped kernel itself is what Dynamo sees, so a compiled graph
    holds Triton's kernel; other attributes are the kernel's own (`k.fn`, `k.configs`, ...).
    """

    # No __slots__: Dynamo guards a traced object through its __dict__.
    def __init__(self, kernel):
        _check_kernel(kernel)
        _setup()
        self.kernel = kernel
        self._kernel = _wiring._launcher_kernel(kernel)  # read by the C subscript too

    # What torch.compile traces. Outside it, launcher[grid] is the C subscript _setup() gives
    # this class (the same result, without this frame). `*_` keeps it so: CPython calls a
    # two-argument __getitem__ without *args directly, past the class's subscript slot.
    def __getitem__(self, grid, *_):
        if _wiring._compiling():
            return self.kernel[grid]
        return self._kernel.bind(grid)

    def run(self, *args, grid, warmup, **kwargs):
        if warmup or _wiring._compiling():
            return self.kernel.run(*args, grid=grid, warmup=warmup, **kwargs)
        return self._kernel.bind(grid)(*args, **kwargs)

    def warmup(self, *args, grid, **kwargs):
        """Compiles without launching, through Triton's own warmup (the same cache)."""
        return self.kernel.warmup(*args, grid=grid, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):  # the object's own protocol (Dynamo reads __dict__), never the kernel's
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self):
        return f"tritonrt.launcher({self.kernel!r})"


def _check_kernel(kernel):
    """TypeError unless `kernel` is a @triton.jit function or a stack of objects over one, each
    holding the next in `.fn`."""
    from triton.runtime.jit import JITFunction
    inner = kernel
    for _ in range(64):
        if isinstance(inner, JITFunction):
            return
        inner = getattr(inner, "fn", None)
        if inner is None:
            break
    raise TypeError("tritonrt.launcher() takes a @triton.jit function, or @triton.autotune, @triton.heuristics or a "
                    f"library's wrapper over one (holding it in .fn); it was given {_safe_repr(kernel)}, a "
                    f"{type(kernel).__name__}")


def _safe_repr(value):
    try:
        text = repr(value)
    except Exception:
        return "an object whose repr() fails"
    return text if len(text) <= 80 else text[:77] + "..."


def launcher(kernel):
    """`kernel` (a @triton.jit function, or autotune / heuristics / library decorators over
    one) launched through tritonrt, called exactly as Triton's: `launcher(kernel)[grid](...)`.
    Under TRITON_INTERPRET=1, Triton's interpreter runs it, as `kernel[grid](...)` would."""
    if _interpreted(kernel):
        _wiring._LOG.info("tritonrt: %s runs in Triton's interpreter (TRITON_INTERPRET=1): tritonrt launches nothing",
                          _safe_repr(kernel))
        return _Interpreted(kernel)
    return Launcher(kernel)


def _interpreted(kernel):
    """Whether `kernel`, or what it holds in .fn, is a kernel of Triton's interpreter."""
    interpreter = sys.modules.get("triton.runtime.interpreter")
    interpreted = getattr(interpreter, "InterpretedFunction", None)
    inner = kernel
    for _ in range(64):
        if interpreted is not None and isinstance(inner, interpreted):
            return True
        inner = getattr(inner, "fn", None)
        if inner is None:
            return False
    return False


class _Interpreted:
    """tritonrt.launcher() of a kernel Triton's interpreter runs (TRITON_INTERPRET=1): called as
    Triton's, it runs there, on the CPU; nothing of it is compiled or launched by tritonrt."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        return self.kernel[grid]

    def __getattr__(self, name):
        if name.startswith("__") or name == "kernel":  # `kernel` missing: a copy being made
            raise AttributeError(name)
        return getattr(self.kernel, name)

    def __repr__(self):
        return f"tritonrt.launcher({self.kernel!r})"


class CompiledKernel:
    """What a launch returns, standing for Triton's CompiledKernel of the binary that ran:
    `.hash`, `.name`, `.metadata` and `.asm` as Triton's, and `compiled[grid](*every_argument)`
    launching it again (through tritonrt). Other attributes (`.run`, `.function`, `.n_regs`,
    ...) are Triton's own CompiledKernel's, made from Triton's cache on first use."""

    def __init__(self, kernel, metadata_json, hash, binary, binary_kind, cache_dir, specialization):
        self.hash = hash
        self._jit = kernel.jit
        self._json = metadata_json
        self._binary = binary
        self._binary_kind = binary_kind
        self._cache_dir = cache_dir
        self._specialization = specialization
        self._triton = None
        self.name = json.loads(metadata_json)["name"]

    @functools.cached_property
    def metadata(self):
        from triton.backends.compiler import GPUTarget
        fields = json.loads(self._json)
        target = fields["target"]
        fields["target"] = GPUTarget(target["backend"], target["arch"], target["warp_size"])
        return collections.namedtuple("KernelMetadata", sorted(fields))(**fields)

    @functools.cached_property
    def asm(self):
        group = self._group()
        if group is None:
            return {self._binary_kind: self._binary}
        return self._compiled().asm

    def __getitem__(self, grid, *_):  # `*_`: as Launcher.__getitem__, in C past the first call
        _setup()
        kernel = self.__dict__.get("_kernel")
        if kernel is None:
            kernel = self._kernel = _wiring._kernel_for(self._jit)  # read by the C subscript
        return kernel.bind(grid)

    def _group(self):
        """Triton's cache entry for this binary (its group, as Triton's compile looks it up),
        or None."""
        from triton.runtime.cache import get_cache_manager
        return get_cache_manager(self.hash).get_group(f"{self.name[:150]}.json")

    def _compiled(self):
        """Triton's own CompiledKernel for this binary, from Triton's cache, else from the
        files the core keeps of it (a binary tritonrt's index or a bundle served: tritonrt
        puts no binary into Triton's cache, whose manager may be the user's own)."""
        if self._triton is None:
            from triton.compiler import CompiledKernel as TritonCompiledKernel
            from triton.compiler.compiler import ASTSource
            group = self._group()
            if group is None:
                files = _wiring._frontend.compiled_kernel_files(self._json, self._binary, self._binary_kind,
                                                                self._cache_dir)
                group = {os.path.basename(path): path for path in files}
            signature = {p.name: ty for p, (ty, _) in zip(self._jit.params, self._specialization)}
            constants = {(i, ): _wiring._literal(value)
                         for i, (ty, value) in enumerate(self._specialization) if ty == "constexpr"}
            self._triton = TritonCompiledKernel(ASTSource(self._jit, signature, constants), group, self.hash)
        return self._triton

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._compiled(), name)

    def __repr__(self):
        return f"<tritonrt compiled kernel {self.name} {self.hash}>"


def _routed_classes():
    """The classes whose run install() replaces: Triton's kernel and its decorators (a subclass
    that redefines run keeps its own, which install() does not touch)."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    return (_wiring._JITFunction, Autotuner, Heuristics)


def install():
    """Routes every Triton launch in this process through tritonrt until uninstall(): run of
    JITFunction, Autotuner and Heuristics, and KernelInterface.__getitem__, replaced at class
    level, so that `kernel[grid](...)` on a decorated kernel takes its whole stack through
    tritonrt wherever tritonrt runs it as its classes would (and leaves the decorators to
    Python, logged once, where it cannot)."""
    global _saved
    _setup()
    with _wiring._lock:
        if _saved is not None:
            return
        saved = [(cls, "run", cls.__dict__["run"]) for cls in _routed_classes()]
        saved.append((_wiring._KernelInterface, "__getitem__", _wiring._KernelInterface.__dict__["__getitem__"]))
        for cls, name, original in saved:
            routed = _wiring._frontend.routed_run if name == "run" else _wiring._frontend.routed_getitem
            setattr(cls, name, routed(original))
        _saved = saved


def uninstall():
    """Gives each class back exactly the attributes it had before install()."""
    global _saved
    with _wiring._lock:
        if _saved is None:
            return
        for cls, name, original in _saved:
            setattr(cls, name, original)
        _saved = None


def installed():
    """Whether install() is in effect."""
    return _saved is not None


def _install_from_environment():
    """TRITONRT_INSTALL=1: install() as soon as Triton is imported (by the .pth hook)."""
    from . import _switch
    if not _switch("TRITONRT_INSTALL", False):
        return
    if "triton.runtime.jit" in sys.modules:
        install()
        return
    sys.meta_path.insert(0, _InstallWhenImported())


class _InstallWhenImported:
    """A finder that lets `import triton` run, then installs tritonrt (and steps aside)."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        import importlib.util
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module):
            original_exec(module)
            install()

        loader.exec_module = exec_module
        return spec
