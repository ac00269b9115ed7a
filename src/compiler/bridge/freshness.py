"""Whether the code a kernel runs in this process is what its files hold now. tritonrt's index
files a kernel under stamps of its files, for a later process to be served from without
Python; a process that imported a module before it was edited on disk, and did not reload it,
runs the older code (as Triton does), so what it compiled must not be filed under the edited
files. Triton's key for a @triton.jit function is its source, its first line and the values of
the globals it reads (`used_global_vals`); each is checked against the file as it is now."""

import ast
import functools
import os
import re
import time

from _tritonrt_bridge.common import KernelSourceError

# What the package offers the rest of the bridge.
__all__ = ["check_fresh"]


def _source_in_file(fn):
    """The source of JIT function `fn` as Triton reads it (the block at its first line, dedented,
    from `def` on), from its file as the file is now; None where no file holds it."""
    import inspect
    import textwrap
    import tokenize
    try:
        path = inspect.getsourcefile(fn.fn)
        if path is None:
            return None
        with tokenize.open(path) as file:
            lines = file.readlines()
        source = textwrap.dedent("".join(inspect.getblock(lines[fn.fn.__code__.co_firstlineno - 1:])))
    except (OSError, SyntaxError, ValueError, IndexError, tokenize.TokenError):
        return None
    start = re.search(r"^def\s+\w+\s*\(", source, re.MULTILINE)
    return source[start.start():] if start else None


class _Unknown(Exception):
    """A value the files' text alone does not give (computed, bound conditionally, imported from a
    module not loaded)."""


class _Imported:
    """`from MODULE import NAME` written at a file's top level."""

    def __init__(self, statement, name):
        self.module = "." * statement.level + (statement.module or "")
        self.name = name


class _Constexpr:
    """`constexpr(value)` written in a file."""

    def __init__(self, value):
        self.value = value


_OPERATORS = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
    ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b,
    ast.USub: lambda a: -a, ast.UAdd: lambda a: +a, ast.Not: lambda a: not a, ast.Invert: lambda a: ~a,
}


_NAMESPACE_WRITERS = {"exec", "globals", "vars", "setattr"}


def _stored_names(node):
    """Every name a statement binds at module level, functions' and classes' own bodies aside."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
            pending.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield node.id
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from ((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            yield node.name
        pending.extend(ast.iter_child_nodes(node))


@functools.lru_cache(maxsize=64)
def _bindings(path, stamp):
    """{name: what `path` binds it to last at its top level (the expression of a plain
    assignment, or the _Imported of a `from ... import`), or None where something else binds it
    (a branch, a loop, a `global` in a function)}. `stamp` (size, mtime) keys the cache."""
    del stamp
    with open(path, "rb") as file:
        tree = ast.parse(file.read(), path)
    bindings = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets):
            for name in _stored_names(statement.value):  # a walrus in the value
                bindings[name] = None
            for target in statement.targets:
                bindings[target.id] = statement.value
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if statement.value is not None:
                bindings[statement.target.id] = statement.value
        elif isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if alias.name == "*":  # it may bind any name
                    bindings = dict.fromkeys(bindings)
                else:
                    bindings[alias.asname or alias.name] = _Imported(statement, alias.name)
        else:
            for name in _stored_names(statement):
                bindings[name] = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            for name in node.names:
                bindings[name] = None
        elif (isinstance(node, ast.Name) and node.id in _NAMESPACE_WRITERS or
              isinstance(node, ast.Attribute) and node.attr == "__dict__"):
            return {}  # it may bind any name in ways its text does not show
    return bindings


def _evaluate(node, bindings, package, depth=0):
    """The value of `node` (an expression, or an _Imported) from the files' text alone, or
    _Unknown: literals, tuples, arithmetic, names the file binds to such or imports from a
    module whose file does, and `constexpr(...)` around one. `package`: the file's package, for
    relative imports."""
    if depth > 32:
        raise _Unknown()

    def inner(child):
        return _evaluate(child, bindings, package, depth + 1)

    if isinstance(node, _Imported):
        import importlib.util
        import sys
        try:
            module = sys.modules.get(importlib.util.resolve_name(node.module, package))
        except (ImportError, ValueError) as e:
            raise _Unknown() from e
        path = getattr(module, "__file__", None)
        if path is None:
            raise _Unknown()
        return _value_in_file(path, node.name, module.__dict__.get("__package__"), depth + 1)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(inner(e) for e in node.elts)
    if isinstance(node, (ast.UnaryOp, ast.BinOp)) and type(node.op) in _OPERATORS:
        operands = [inner(node.operand)] if isinstance(node, ast.UnaryOp) else [inner(node.left), inner(node.right)]
        if not all(isinstance(x, (bool, int, float)) for x in operands):
            raise _Unknown()  # no string or tuple repetition: its size is the file's to choose
        if isinstance(node.op, (ast.Pow, ast.LShift)) and abs(operands[1]) > 256:
            raise _Unknown()
        try:
            value = _OPERATORS[type(node.op)](*operands)
        except (ArithmeticError, ValueError, TypeError) as e:
            raise _Unknown() from e
        if isinstance(value, int) and value.bit_length() > 4096 or not isinstance(value, (bool, int, float)):
            raise _Unknown()  # a number no kernel takes, or a complex root
        return value
    if isinstance(node, ast.Name):
        bound = bindings.get(node.id)
        if bound is None:
            raise _Unknown()
        return inner(bound)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if callee == "constexpr":
            return _Constexpr(inner(node.args[0]))
    raise _Unknown()


def _comparable(value):
    """(whether constexpr-wrapped, the repr Triton's key holds) of a value in memory or in a file."""
    from triton.language.core import constexpr
    if isinstance(value, (constexpr, _Constexpr)):
        return True, repr(value.value)
    return False, repr(value)


def _value_in_file(path, name, package, depth=0):
    """What the top-level binding of `name` in `path` (of `package`) gives, or _Unknown."""
    try:
        status = os.stat(path)
        bindings = _bindings(path, (status.st_size, status.st_mtime_ns))
    except (OSError, SyntaxError, ValueError) as e:
        raise _Unknown() from e
    if bindings.get(name) is None:
        raise _Unknown()
    return _evaluate(bindings[name], bindings, package, depth)


@functools.lru_cache(maxsize=1)
def process_start():
    """When this process started, in seconds since the epoch, never later than it did (Linux
    gives the start in clock ticks since boot, rounded down); None where /proc cannot tell."""
    try:
        with open("/proc/self/stat", "rb") as file:
            after_name = file.read().rsplit(b")", 1)[1].split()
        since_boot = int(after_name[19]) / os.sysconf("SC_CLK_TCK")
        return time.time() - (time.clock_gettime(time.CLOCK_BOOTTIME) - since_boot)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def check_fresh(functions, tuned, files):
    """Raises KernelSourceError unless the @triton.jit `functions` a kernel is made of (after
    `fn.cache_key` filled their `used_global_vals`) run what `files` hold now: each function's
    source is its file's at its first line, and each global it reads is what the file's
    assignment of it (or the file it imports it from) gives. What the text alone cannot tell (a
    computed value, a closure's, a default naming a global, the arguments of the autotune or
    heuristics decorators of a `tuned` kernel) is taken as the file's only where no file of
    `files` changed since this process started, so since it imported them."""
    unchecked = "its autotune or heuristics arguments" if tuned else None
    files_of = {}  # id of a globals dict -> the file whose code runs in it (None: several do)
    for fn in functions:
        if _source_in_file(fn) != fn.src:
            raise KernelSourceError(f"'{fn.__name__}' in this process is not the code its file holds now (the file "
                                    "was edited since it was imported, or no file holds it)")
        path = fn.fn.__code__.co_filename
        files_of[id(fn.fn.__globals__)] = path if files_of.get(id(fn.fn.__globals__), path) == path else None
        if _default_reads_a_global(fn):
            unchecked = unchecked or f"a default of '{fn.__name__}'"
    # Triton merges a callee's globals into its caller's: each is checked once.
    used = {}  # (name, id of its globals dict) -> (value, that dict, a function reading it)
    for fn in functions:
        for key, (value, scope) in getattr(fn, "used_global_vals", {}).items():
            used.setdefault(key, (value, scope, fn.__name__))
    for (name, _), (value, scope, reader) in used.items():
        path = files_of.get(id(scope))
        try:
            if path is None:
                raise _Unknown()
            in_file = _value_in_file(path, name, scope.get("__package__"))
        except _Unknown:
            unchecked = unchecked or f"global '{name}'"
            continue
        here, there = _comparable(value), _comparable(in_file)
        if here != there:
            raise KernelSourceError(f"global '{name}' of '{reader}' is {here[1]} in this process, while '{path}' "
                                    f"now makes it {there[1]} (its file was edited since it was imported)")
    if unchecked is None:
        return
    start = process_start()
    for path in files:
        try:
            changed = start is None or os.stat(path).st_mtime >= start
        except OSError:
            changed = True
        if changed:
            raise KernelSourceError(f"{unchecked} cannot be checked against the files, and '{path}' may have changed "
                                    "since this process imported it (modified after it started)")


def _default_reads_a_global(fn):
    """Whether a parameter default of JIT function `fn` names a value other than a module (its
    value was taken when the function was defined; the source holds only the name)."""
    try:
        arguments = ast.parse(fn.src).body[0].args
    except (SyntaxError, IndexError, AttributeError):
        return True
    for default in [*arguments.defaults, *arguments.kw_defaults]:
        for node in ast.walk(default) if default is not None else ():
            if isinstance(node, ast.Name) and not isinstance(fn.fn.__globals__.get(node.id), type(os)):
                return True
    return False
