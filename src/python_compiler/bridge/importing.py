"""Importing a kernel's module once per process: a path is that file's module (inside a
package, under the package's name from the folder that holds it), a dotted name is what the
import system finds; a module that exits or raises while it is imported is an error, never
the end of the host program."""

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading

from _tritonrt_bridge import common
from _tritonrt_bridge.common import KernelSourceError, one_line, user_traceback, with_details
from _tritonrt_bridge.observe import observer

# What the package offers C++.
__all__ = ["import_source"]

_locks_lock = threading.Lock()
_import_locks = {}  # source string -> its lock: one slow import never holds up another source
_modules = {}  # source string -> imported module, so a module is executed once per process
search_paths = {}  # module name -> the folders its import searched
appended_folders = []  # the folders tritonrt put on sys.path for kernels named by path


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
        appended_folders.append(root)
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
        appended_folders.append(root)
    sys.modules[dotted] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[dotted]
        raise
    return module


def _is_path(source):
    return source.endswith(".py") or os.sep in source


class _ExitAtImport(BaseException):
    """Raised instead of ending the process when a kernel module calls os._exit at import."""


def _refuse_exit(status):
    raise _ExitAtImport(f"the module called os._exit({status}) while being imported")


def import_source(source):
    module = _modules.get(source)
    if module is not None:
        # A module name now listed for another module (imported anew, or one a library loaded
        # itself and tritonrt's front end lists while it describes a kernel of it): that one.
        listed = sys.modules.get(source)
        if listed is not None and listed is not module and not _is_path(source):
            _modules[source] = module = listed
        return module
    with _locks_lock:
        lock = _import_locks.setdefault(source, threading.RLock())
    with lock:
        module = _modules.get(source)
        if module is not None:
            return module
        is_path = _is_path(source)
        # In tritonrt's own interpreter a kernel file must not end the host program.
        real_exit = os._exit
        if common.embedded:
            os._exit = _refuse_exit
        try:
            with observer().scope():  # what the import ran, kept for the index's record
                if is_path:
                    module = _import_file(os.path.realpath(source))
                else:
                    # Where the import looks, for C++ to check later that it would find the same file.
                    search_paths[source] = [os.path.abspath(p) if p else os.getcwd() for p in sys.path
                                             if isinstance(p, str)]
                    module = importlib.import_module(source)
        except KernelSourceError:
            raise
        except ModuleNotFoundError as e:
            if not is_path and e.name is not None and source.startswith(e.name):
                raise KernelSourceError(f"kernel module '{source}' was not found on sys.path") from None
            raise with_details(KernelSourceError(f"importing kernel source '{source}' failed: {one_line(e).decode()}"),
                               user_traceback(e)) from None
        except SyntaxError as e:
            raise with_details(
                KernelSourceError(f"kernel source '{source}' has a syntax error at {e.filename}:{e.lineno}: {e.msg}"),
                user_traceback(e)) from None
        except Exception as e:
            # The one-line summary, then Python's traceback through the module's own lines.
            raise with_details(KernelSourceError(f"importing kernel source '{source}' failed: {one_line(e).decode()}"),
                               user_traceback(e)) from None
        except BaseException as e:  # SystemExit, KeyboardInterrupt and os._exit: an end, not an error to trace
            raise KernelSourceError(f"importing kernel source '{source}' failed: {one_line(e).decode()}") from None
        finally:
            os._exit = real_exit
        _modules[source] = module
        return module
