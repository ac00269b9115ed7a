"""What a kernel's code was made from, observed rather than predicted. From the moment it starts,
the observer watches the process's Python (audit hooks, the import statement, os.environ): every
module executed, with the stat of its file before the read; every file and folder a module's code
reads; every environment variable it reads; every module it imports, found in sys.modules or not.
A record of a kernel (tritonrt's index, made by record_inputs) names all of that for the modules
its code was made from, taken through their imports, or the kernel is not recorded: whatever
cannot be seen (a module imported before the observer started, a file edited while or after it
was read, a value changed in memory after its module was imported, the whole environment read)
refuses the record.

This file is also the Python package's `tritonrt._observe`, so that `import tritonrt` starts the
observer in a Python program before its kernel modules are imported; whichever copy starts first
serves both (sys.modules["_tritonrt_observer"])."""

import builtins
import contextlib
import importlib.util
import os
import sys
import threading
import time

# What the package offers the rest of the bridge.
__all__ = ["observer"]

# File times step with the kernel's coarse clock (at most 10 ms); a file changed within this
# much of the moment it was looked at may change again unseen within the same tick.
_MARGIN_NS = 20_000_000
_EVENTS = frozenset({"open", "exec", "os.listdir", "os.scandir"})
_SLOT = "_tritonrt_observer"


def _stamp(status):
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino, status.st_dev)


def _is_import_machinery(frame):
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


class _Module:
    """One execution of a module's code, as seen."""

    __slots__ = ("namespace", "path", "stamp", "problem", "opened", "listed", "environ", "imports", "imported",
                 "snapshot", "library")

    def __init__(self, namespace, path):
        self.namespace = namespace
        self.path = path
        self.stamp = None  # of its file, from before Python read it
        self.problem = None  # why what it ran cannot be told from its file
        self.opened = {}  # path -> stamp before the read
        self.listed = {}  # folder -> stamp before the listing
        self.environ = {}  # variable -> value read (None: unset)
        self.imports = {}  # id(namespace) -> module, everything it imported
        self.imported = set()  # the import statements of it already followed (name, level, fromlist)
        self.snapshot = None  # its namespace once its code finished
        self.library = None  # True for the standard library and installed distributions


class Observer:
    def __init__(self):
        self.modules = {}  # id(namespace) -> _Module
        # The same by the module's name, and namespaces known unobserved (a few per name): what
        # an import statement looks its importer up in, without id() (see _module_of).
        self._by_name = {}  # __name__ -> [_Module]
        self._unobserved = {}  # __name__ -> [namespace]
        # source path -> (its stamp when the loader read it or its bytecode, why that bytecode may
        # not be the source's, or None)
        self._loads = {}
        self._local = threading.local()
        self._library_roots = None
        self._library_prefixes = ()
        self._kinds = {}  # path -> what library answered for it

    # --- watching ---------------------------------------------------------------------------

    def start(self):
        self.library("")  # its tables made now, not from inside an audit event
        sys.addaudithook(self._on_event)
        original_import = builtins.__import__
        original_import_module = importlib.import_module
        observer = self

        def observed_import(name, globals=None, locals=None, fromlist=(), level=0):
            pending = observer._pending()
            mark = len(pending)
            try:
                module = original_import(name, globals, locals, fromlist, level)
            finally:
                if len(pending) > mark:
                    observer._settle(pending, mark)
            if globals is not None:
                importer = observer._module_of(globals)
                if importer is not None:
                    # A statement run again (an import inside a function) is followed once.
                    statement = (name, level, fromlist if type(fromlist) is tuple else tuple(fromlist or ()))
                    if statement not in importer.imported:
                        importer.imported.add(statement)
                        observer._imported(importer, name, globals.get("__package__"), level, fromlist)
            return module

        def observed_import_module(name, package=None):
            pending = observer._pending()
            mark = len(pending)
            try:
                module = original_import_module(name, package)
            finally:
                if len(pending) > mark:
                    observer._settle(pending, mark)
            importer = observer._module_of(sys._getframe(1).f_globals)
            if importer is not None:
                level = len(name) - len(name.lstrip("."))
                observer._imported(importer, name[level:], package, level, ())
            return module

        builtins.__import__ = observed_import
        importlib.import_module = observed_import_module
        environ = os.environ

        class ObservedEnviron(type(environ)):
            """os.environ, telling the observer which variables a module's code reads."""

            def __getitem__(self, key):
                try:
                    value = super().__getitem__(key)
                except KeyError:
                    observer._read_variable(key, None)
                    raise
                observer._read_variable(key, value)
                return value

            def __iter__(self):
                try:
                    observer._blame("it read the whole environment", sys._getframe(1))
                except Exception:
                    pass
                return super().__iter__()

        environ.__class__ = ObservedEnviron
        return self

    def _register(self, namespace, module):
        self.modules[id(namespace)] = module
        name = namespace.get("__name__")
        if type(name) is str:
            # A namespace executed again (importlib.reload) is this execution's from now on.
            self._by_name[name] = [m for m in self._by_name.get(name, ()) if m.namespace is not namespace] + [module]
        # What was found unobserved may be this namespace, under whatever name it had then:
        # forgotten, after `modules` holds it (a lookup racing this one adds to the old table).
        self._unobserved = {}

    def _module_of(self, namespace):
        """The execution whose namespace `namespace` is, or None. An import statement inside a
        function asks on every run, so this avoids id() where it can: id() is an audited event,
        and every audit hook (this observer's among them) runs on each call of it, about 0.6 us
        in CPython 3.12. By the module's name first; a namespace not found there (never
        observed, or renamed since) by id(), the never-observed kept (a few per name, until a
        module is next executed) so that the next ask is answered without it."""
        name = namespace.get("__name__") if type(namespace) is dict else None
        if type(name) is not str:
            return self.modules.get(id(namespace))
        for module in self._by_name.get(name, ()):
            if module.namespace is namespace:
                return module
        known = self._unobserved  # before the lookup: a module registered after it empties another table
        for seen in known.get(name, ()):
            if seen is namespace:
                return None
        module = self.modules.get(id(namespace))
        if module is None:
            if len(known) >= 256:  # each kept namespace stays alive: a bounded few
                known.clear()
            unobserved = known.setdefault(name, [])
            unobserved.append(namespace)
            del unobserved[:-4]
        return module

    def _pending(self):
        pending = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = []
        return pending

    def _settle(self, pending, mark):
        # Modules whose code started running since `mark`: finished now, their namespaces kept.
        for module in pending[mark:]:
            if module.snapshot is None:
                module.snapshot = dict(module.namespace)
        del pending[mark:]

    def scope(self):
        """A context in which tritonrt itself executes a module: what ran in it is settled at exit."""
        observer = self

        class Scope:

            def __enter__(self):
                self.pending = observer._pending()
                self.mark = len(self.pending)

            def __exit__(self, *exc):
                observer._settle(self.pending, self.mark)

        return Scope()

    def _imported(self, importer, name, package, level, fromlist):
        try:
            absolute = importlib.util.resolve_name("." * level + name, package) if level else name
        except (ImportError, ValueError):
            return
        parts = absolute.split(".")
        names = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        names += [f"{absolute}.{item}" for item in fromlist or () if isinstance(item, str)]
        for dotted in names:
            module = sys.modules.get(dotted)
            namespace = getattr(module, "__dict__", None)
            if isinstance(namespace, dict):
                importer.imports[id(namespace)] = module

    def _on_event(self, event, args):
        if event not in _EVENTS or getattr(self._local, "busy", False):
            return  # the observer's own reads are no module's
        self._local.busy = True
        try:
            caller = sys._getframe(1)  # the Python code that raised the event
            if event == "exec":
                self._on_exec(args[0], caller)
            elif event == "open":
                self._on_open(*args[:3], caller)
            else:
                self._on_listing(args[0], caller)
        except ValueError:
            pass  # raised from C with no Python frame: no module's code
        except Exception:  # an observer that fails must not break the program: the kernel goes unrecorded
            try:
                self._blame("tritonrt could not follow what it read", sys._getframe(1))
            except Exception:
                pass
        finally:
            self._local.busy = False

    def _on_exec(self, code, caller):
        if getattr(code, "co_name", None) != "<module>":
            return
        arguments = caller.f_locals.get("args") if caller.f_code.co_name == "_call_with_frames_removed" else None
        if not (isinstance(arguments, tuple) and len(arguments) == 2 and isinstance(arguments[1], dict)):
            return  # code run by exec() within a module: that module's
        namespace = arguments[1]
        path = code.co_filename
        module = _Module(namespace, path)
        if path.startswith(self._library_prefixes):  # its distribution's record stands for its file
            module.library = True
            self._register(namespace, module)
            self._pending().append(module)
            return
        source, stale = self._loads.pop(path, (None, None))
        try:
            now = os.stat(path)
        except OSError:
            module.problem = f"its file '{path}' cannot be read"
        else:
            if source is None:
                module.problem = f"'{path}' was not read through Python's own loader"
            elif _stamp(now) != source:
                module.problem = f"'{path}' changed while it was imported"
            elif stale is not None:
                module.problem = stale
            else:
                module.stamp = source
        self._register(namespace, module)
        self._pending().append(module)

    def _on_open(self, path, mode, flags, caller):
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if _is_import_machinery(caller):
            if isinstance(path, str):
                self._on_load(path)
            return
        if not isinstance(path, str):
            self._blame("it read a file through a descriptor", caller)
            return
        if mode is None:
            readable = (flags or 0) & os.O_ACCMODE in (os.O_RDONLY, os.O_RDWR)
        else:
            readable = "r" in mode or "+" in mode
        if readable:
            module = self._reader(caller)
            if module is not None:
                path = os.path.abspath(path)
                module.opened.setdefault(path, self.steady_stamp(path))

    def _on_load(self, path):
        # The loader is about to read a module's source or bytecode: its stamps now, once the
        # file is older than a clock tick (waiting out the rest of one where it is newer). An
        # installed distribution's or the standard library's: its record stands for it instead.
        if path.startswith(self._library_prefixes):
            return
        if path.endswith(".py"):
            self._loads[path] = (self.steady_stamp(path), None)
        elif path.endswith(".pyc") and os.path.basename(os.path.dirname(path)) == "__pycache__":
            source = os.path.join(os.path.dirname(os.path.dirname(path)),
                                  os.path.basename(path).split(".", 1)[0] + ".py")
            source_stamp = self.steady_stamp(source)
            try:
                compiled = os.stat(path)
                with open(path, "rb") as file:
                    flags = int.from_bytes(file.read(8)[4:8], "little")
            except OSError:
                return
            if source_stamp is None:
                return
            why = None
            if flags & 1 and not flags & 2:
                why = f"'{path}' is bytecode Python runs without checking its source"
            elif not flags & 1 and source_stamp[2] >= compiled.st_mtime_ns - _MARGIN_NS:
                # Bytecode is checked against its source's size and whole seconds only: a source
                # changed just before or after it was written may not be what it holds.
                why = f"'{source}' changed too close to when its bytecode '{path}' was written"
            self._loads[source] = (source_stamp, why)

    def _on_listing(self, path, caller):
        if _is_import_machinery(caller):
            return
        if path is None:
            path = "."
        if not isinstance(path, (str, bytes)):
            self._blame("it listed a folder through a descriptor", caller)
            return
        module = self._reader(caller)
        if module is not None:
            path = os.path.abspath(os.fsdecode(path))
            module.listed.setdefault(path, self.steady_stamp(path))

    def steady_stamp(self, path):
        """The stamps of `path`, taken once its last change is more than a clock tick old; None
        where it cannot be stat'ed."""
        try:
            status = os.stat(path)
        except OSError:
            return None
        age = time.time_ns() - status.st_ctime_ns
        if age < _MARGIN_NS:
            time.sleep((_MARGIN_NS - age) / 1e9)
            try:
                status = os.stat(path)
            except OSError:
                return None
        return _stamp(status)

    def _reader(self, frame):
        """The module of the innermost frame, from `frame` outwards, of code outside the standard
        library and installed distributions, while such a module's code runs on this thread; None
        otherwise. While only library code is importing (its distribution's record stands for what
        it reads), a function of another module called from there reads at run time, which is no
        module's input, as is a read after the imports: then the stack is not walked, which the
        imports of a large library would pay for on every file they open. Modules found finished
        on the way (their code no longer on the stack: run by a loader outside the import
        statement) are settled."""
        pending = getattr(self._local, "pending", None)
        if not pending or all(self._is_library(m) for m in pending):
            return None
        found, walked = None, frame
        while walked is not None and found is None:
            module = self.modules.get(id(walked.f_globals))
            if module is not None and not self._is_library(module):
                found = module
            walked = walked.f_back
        self._settle_finished(pending, frame)
        return found

    def _is_library(self, module):
        if module.library is None:
            module.library = self.library(module.path) is not None
        return module.library

    @staticmethod
    def _settle_finished(pending, frame):
        """Settles the pending modules whose module-level code is not on the stack from `frame`
        outwards."""
        running = set()
        while frame is not None:
            if frame.f_code.co_name == "<module>":
                running.add(id(frame.f_globals))
            frame = frame.f_back
        if any(id(m.namespace) not in running for m in pending):
            for module in pending:
                if id(module.namespace) not in running and module.snapshot is None:
                    module.snapshot = dict(module.namespace)
            pending[:] = [m for m in pending if id(m.namespace) in running]

    def _blame(self, problem, frame):
        module = self._reader(frame)
        if module is not None and module.problem is None:
            module.problem = problem

    def _read_variable(self, name, value):
        if getattr(self._local, "busy", False) or not getattr(self._local, "pending", None):
            return  # the observer's own read, or no module's code running on this thread
        try:
            module = self._reader(sys._getframe(2))
            if module is not None:
                module.environ.setdefault(name, value)
        except Exception:
            pass  # never in the way of the program's own read

    # --- for the record (record_inputs) ------------------------------------------------------

    @contextlib.contextmanager
    def own_reads(self):
        """A context in which the observer's own reads and listings are no module's; modules run
        outside an import statement that finished since (_reader) are settled on entry."""
        self._local.busy = True
        try:
            pending = getattr(self._local, "pending", None)
            if pending:
                self._settle_finished(pending, sys._getframe())
            yield
        finally:
            self._local.busy = False

    def library(self, path):
        """"stdlib" for a file of Python's standard library, "site" for one in a folder of
        installed distributions, None for any other (the user's code, editable installs)."""
        if self._library_roots is None:
            import site
            import sysconfig
            paths = sysconfig.get_paths()
            stdlib = {paths.get("stdlib"), paths.get("platstdlib")}
            sites = {paths.get("purelib"), paths.get("platlib"), *getattr(site, "getsitepackages", lambda: [])(),
                     getattr(site, "getusersitepackages", lambda: None)()}
            self._library_roots = tuple(
                (os.path.join(os.path.realpath(root), ""), kind)
                for kind, roots in (("site", sites), ("stdlib", stdlib)) for root in roots if root)
            # The same folders as written and as resolved, for a look at a path as given.
            self._library_prefixes = tuple({os.path.join(p, "") for root in (*sites, *stdlib) if root
                                            for p in (root, os.path.realpath(root))})
        if not path or path.startswith("<"):
            return None
        kind = self._kinds.get(path, _Missing)
        if kind is _Missing:  # each path resolved once: a record's walk visits thousands of modules
            real = os.path.realpath(path)
            # site-packages first: it may lie inside the stdlib's folder
            kind = next((kind for root, kind in self._library_roots if real.startswith(root)), None)
            self._kinds[path] = kind
        return kind

    def site_folders(self):
        """The folders of installed distributions, resolved, each ending in a separator."""
        return [root for root, kind in self._library_roots if kind == "site"]


class _Missing:
    pass


def observer():
    """The process's observer, started on first use (or by `import tritonrt` before)."""
    running = sys.modules.get(_SLOT)
    if running is None:
        running = sys.modules[_SLOT] = Observer().start()
    return running
