"""What a kernel's record (tritonrt's index) names, from what the observer (observe) saw its
modules' code read and import: each file with its SHA-256 and stamps, an installed distribution
by its record file, the environment variables read, where a new process would find each module
imported by name. Whatever does not hold any more (a file edited since it was read, a global
changed in memory, a module whose code the observer did not see run) raises LookupError."""

import hashlib
import os
import sys

from _tritonrt_bridge.observe import _stamp, observer

# What the package offers the rest of the bridge.
__all__ = ["inputs", "own_file_entry"]

_records = {}  # path -> what _distribution_record answered for it
_tops = {}  # site folder -> ({top-level name: record} by top_level.txt, the same by RECORD or None)
_hashes = {}  # (path, stamp) -> SHA-256


class _Missing:
    pass


def inputs(roots, globals_read, search_path, own_name=None):
    """Everything the code of the modules `roots` (namespaces) was made from, through their
    imports: {"files": [...], "modules": [...], "environment": {...}}; raises LookupError
    saying what cannot be observed. `globals_read`: (name, value, namespace) of each global a
    kernel's key holds, compared with what its module's code left there. `search_path`: where
    a new process loading the kernel would look for a module imported by name; `own_name`: the
    module of a kernel named by its file (found by its path, not its name)."""
    watcher = observer()
    with watcher.own_reads():
        return _inputs(watcher, roots, globals_read, search_path, own_name)


def own_file_entry(namespace, path):
    """The entry of a kernel module's own file: from before Python read it where the observer
    took its stamps, else (an installed distribution's file, whose record stands for it) as
    the file is now."""
    watcher = observer()
    module = watcher.modules.get(id(namespace))
    seen = module is not None and module.path == path and module.stamp is not None
    stamp = module.stamp if seen else watcher.steady_stamp(path)
    return _file_entry(path, stamp, "the kernel's file")


def _inputs(watcher, roots, globals_read, search_path, own_name):
    files, modules, environment = {}, [], {}
    seen, queue = set(), list(roots)
    while queue:
        namespace = queue.pop()
        if id(namespace) in seen:
            continue
        seen.add(id(namespace))
        name = namespace.get("__name__", "?")
        module = watcher.modules.get(id(namespace))
        path = module.path if module is not None else namespace.get("__file__")
        if path is None and module is None:  # made by its package's own code (torch._C's submodules)
            path = _package_file(name)
        library = watcher.library(path) if path is not None else None
        if library == "stdlib":
            continue  # Python's own: the same Python is the same code
        record = _distribution_record(watcher, path) if library == "site" else None
        if record is not None:
            if record not in files:
                files[record] = _file_entry(record, watcher.steady_stamp(record), "the distribution record")
            if module is not None:  # what it imported in turn (torch, for a library's kernel)
                queue.extend(vars(m) for m in module.imports.values())
            continue
        if namespace.get("__name__") in sys.builtin_module_names or namespace.get("__spec__") is not None and \
                getattr(namespace["__spec__"], "origin", None) in ("built-in", "frozen"):
            continue
        if module is None and path is None and "__path__" in namespace:
            continue  # a namespace package: no code of its own, its modules are seen each on its own
        if module is None:
            raise LookupError(f"tritonrt did not see the code of module '{name}' run (imported before it started "
                              "to observe imports, or not from Python source)")
        if module.problem is not None:
            raise LookupError(f"module '{name}': {module.problem}")
        files[module.path] = _file_entry(module.path, module.stamp, "the module file")
        for opened, stamp in module.opened.items():
            if watcher.library(opened) is None:
                files.setdefault(opened, _file_entry(opened, stamp, f"'{name}' read the file"))
        for folder, stamp in module.listed.items():
            files.setdefault(folder, _file_entry(folder, stamp, f"'{name}' listed the folder"))
        for variable, value in module.environ.items():
            if os.environ.get(variable) != value:
                raise LookupError(f"'{name}' read the environment variable {variable}, which changed since")
            environment[variable] = value
        modules.append((name, module))
        queue.extend(vars(m) for m in module.imports.values())
    for global_name, value, namespace in globals_read:
        module = watcher.modules.get(id(namespace))
        if module is None or module.snapshot is None:
            raise LookupError(f"global '{global_name}' lives in a namespace tritonrt did not see made")
        if _comparable(module.snapshot.get(global_name, _Missing)) != _comparable(value):
            raise LookupError(f"global '{global_name}' of '{namespace.get('__name__')}' is not what its module's "
                              "code made it (changed in memory after the import)")
    return {"files": sorted(files.values(), key=lambda f: f["path"]),
            "modules": _found_where(modules, search_path, own_name), "environment": environment}


def _distribution_record(watcher, path):
    """The RECORD (else METADATA) file of the installed distribution holding `path`, or None
    where none lists it."""
    record = _records.get(path, _Missing)
    if record is _Missing:
        record = _records[path] = _find_record(watcher, path)
    return record


def _find_record(watcher, path):
    real = os.path.realpath(path)
    for folder in watcher.site_folders():
        if not real.startswith(folder):
            continue
        top = real[len(folder):].split(os.sep, 1)[0]
        top = top[:-3] if top.endswith(".py") else top.split(".", 1)[0] if top.endswith(".so") else top
        by_top_level, by_record = _tops.get(folder) or _tops.setdefault(folder, (
            _distribution_tops(folder, "top_level.txt"), None))
        if top in by_top_level:
            return by_top_level[top]
        if by_record is None:  # every RECORD read once, only when a top_level.txt does not say
            by_record = _distribution_tops(folder, "RECORD")
            _tops[folder] = (by_top_level, by_record)
        return by_record.get(top)
    return None


def _distribution_tops(folder, marker):
    """{top-level name: its distribution's RECORD (else METADATA)} for the distributions of
    site folder `folder`, by each one's `marker` file (top_level.txt or RECORD): a name is
    an entry's first path component, or that component up to one of its dots ("six" of
    "six.py"); the first distribution in name order that lists it has it."""
    try:
        candidates = sorted(n for n in os.listdir(folder) if n.endswith(".dist-info"))
    except OSError:
        return {}
    tops = {}
    for name in candidates:
        record = os.path.join(folder, name, "RECORD")
        record = record if os.path.exists(record) else os.path.join(folder, name, "METADATA")
        try:
            with open(os.path.join(folder, name, marker), encoding="utf-8", errors="replace") as file:
                for line in file:
                    first = line.split(",", 1)[0].strip().split("/", 1)[0]
                    if not first:
                        continue
                    tops.setdefault(first, record)
                    dot = first.find(".")
                    while dot > 0:
                        tops.setdefault(first[:dot], record)
                        dot = first.find(".", dot + 1)
        except OSError:
            continue
    return tops


def _sha256(path, stamp):
    key = (path, stamp)
    digest = _hashes.get(key)
    if digest is None:
        with open(path, "rb") as file:
            digest = hashlib.file_digest(file, "sha256").hexdigest()
        _hashes[key] = digest
    return digest


def _file_entry(path, stamp, what):
    """(path, SHA-256 and stamps) of a file read at `stamp`, checked unchanged since."""
    if stamp is None:
        raise LookupError(f"{what} '{path}' could not be looked at when it was read")
    try:
        now = os.stat(path)
    except OSError:
        raise LookupError(f"{what} '{path}' is gone") from None
    if _stamp(now) != stamp:
        raise LookupError(f"{what} '{path}' changed since it was read")
    if os.path.isdir(path):
        listing = "\n".join(sorted(os.listdir(path)))
        digest = hashlib.sha256(listing.encode("utf-8", "surrogateescape")).hexdigest()
        kind = "folder"
    else:
        digest = _sha256(path, stamp)
        kind = "file"
    size, mtime, ctime, inode, _ = stamp
    return {"path": path, "kind": kind, "sha256": digest, "size": size, "mtime_ns": mtime, "ctime_ns": ctime,
            "inode": inode}


def _package_file(name):
    """The file of the nearest package above module `name` that has one, or None."""
    while "." in name:
        name = name.rsplit(".", 1)[0]
        path = getattr(sys.modules.get(name), "__file__", None)
        if path is not None:
            return path
    return None


def _found_where(modules, search_path, own_name):
    """Where a new process would find each module imported by a top-level name: it must be
    the file this process ran (a module of one name imported from another folder first is
    not)."""
    from importlib.machinery import PathFinder
    search_path = [os.path.abspath(p) if p else os.getcwd() for p in search_path]
    found = []
    for name, module in modules:
        top = name.split(".", 1)[0]
        top_module = sys.modules.get(top)
        if name == own_name or any(f["name"] == top for f in found) or top_module is None:
            continue
        where = getattr(top_module, "__file__", None)
        spec = PathFinder.find_spec(top, search_path)
        there = None if spec is None else spec.origin
        if where is None or there is None or os.path.realpath(there) != os.path.realpath(where):
            raise LookupError(f"module '{top}' is '{where}' in this process, while a new process would import "
                              f"{there and repr(there) or 'no file'} for it")
        found.append({"name": top, "file": os.path.realpath(where), "search_path": search_path})
    return found


def _comparable(value):
    """(whether constexpr-wrapped, the repr Triton's key holds) of a value."""
    inner = getattr(value, "value", value) if type(value).__name__ == "constexpr" else value
    try:
        return type(value).__name__ == "constexpr", repr(inner)
    except Exception:
        return None, id(inner)
