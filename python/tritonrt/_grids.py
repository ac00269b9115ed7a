"""Which grid(META) functions the launch may answer from a memo instead of calling them.

Libraries write a launch's grid as a lambda over META and values of the calling function:
`lambda meta: (triton.cdiv(N, meta["BLOCK_N"]), M)`. Called per launch, such a lambda costs
more than the rest of tritonrt's launch (a dict of every parameter built for it, a Python
frame, and `triton.cdiv`'s own wrapper). Where the function's result can depend on nothing but
what it reads (META's items, its closure's cells, its module's values) and on calls of functions
known to be pure, the launch keeps its result per distinct value of what it read, and calls
it again only for values it has not seen.

`plan(function)` reads the function's bytecode once per code object and says what a call
reads, or None where the function does anything else (a jump, an exception handler, an
attribute of a value, a call of any other function, a default argument, ...): then it is
called on every launch, as Triton's path calls it. The launch checks on every call that each
global name the plan resolved still names the same object running the same code, and reads the
values again; those that are not plain values (an int, float, bool, None, or a tuple or
torch.Size of them; no other subclass) make it call the function instead. What the checks do
not see: a pure function's class changed (its `__call__`), or the defaults, globals and
closure of the function it runs.
"""
import dis
import math
import sys
import types

# Functions whose result depends only on their arguments, and which have no effect; the only
# calls a memoized grid may make.
_PURE = [abs, bool, divmod, float, int, len, max, min, pow, round, math.ceil, math.floor, math.prod]


def _pure_functions():
    pure = {id(f): f for f in _PURE}
    triton = sys.modules.get("triton")
    for name in ("cdiv", "next_power_of_2"):
        f = getattr(triton, name, None)
        if f is not None:
            pure[id(f)] = f
    return pure


_NO_EFFECT = {"RESUME", "NOP", "CACHE", "COPY_FREE_VARS", "PRECALL"}
_VALUE_OPS = {"BINARY_OP", "COMPARE_OP"}  # two values in, one out
_UNARY_OPS = {"UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT"}
_META, _NULL, _VALUE = "meta", "null", "value"


class _NotPure(Exception):
    pass


def _identity(path, obj):
    """The check that a pure function a global path names is still `obj`, running the same
    code: (name, attributes, expected), `expected` the object each step of the path must reach
    (Ellipsis: any), from the name's object on. A Python function's `__code__` is checked,
    and so is the function a wrapper such as Triton's `constexpr_function` (triton.cdiv)
    calls, its `fn`, with that one's `__code__`."""
    name, attributes = path
    expected = (...,) * len(attributes) + (obj, )
    inner = getattr(obj, "fn", None) if not isinstance(obj, types.FunctionType) else None
    if isinstance(inner, types.FunctionType):
        attributes, expected = attributes + ("fn", "__code__"), expected + (inner, inner.__code__)
    elif isinstance(obj, types.FunctionType):
        attributes, expected = attributes + ("__code__", ), expected + (obj.__code__, )
    return name, attributes, expected


def _resolve(function, name):
    """The object a global name of the function names: its module's, else a builtin."""
    if name in function.__globals__:
        return function.__globals__[name]
    if name in function.__builtins__:
        return function.__builtins__[name]
    raise _NotPure(f"unbound name {name}")


def plan(function):
    """(keys, checks, values) for a grid function the launch may memoize, else None:
    keys: the META items it reads, by name; checks: ((name, attributes, expected), ...), each a
    global name (its module's value else a builtin) and the attributes read from it in turn,
    whose objects must still be those `expected` holds, one per step (Ellipsis: any); values:
    the global names whose values it reads. The cells of its closure are all read. None where
    the function may depend on anything else."""
    try:
        return _plan(function)
    except _NotPure:
        return None


def _readable_code(function):
    """The code of `function` where its form lets _plan read it: one positional parameter, no
    defaults, cells, handlers or namespaces of a dict subclass."""
    if not isinstance(function, types.FunctionType):
        raise _NotPure("not a Python function")
    code = function.__code__
    if (code.co_argcount != 1 or code.co_kwonlyargcount or code.co_posonlyargcount
            or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200)  # *args, **kw, generator, coroutine
            or function.__defaults__ or function.__kwdefaults__ or code.co_cellvars):
        raise _NotPure("its signature")
    if getattr(code, "co_exceptiontable", b""):
        raise _NotPure("a handler, which the reading below does not follow")
    if type(function.__globals__) is not dict or type(function.__builtins__) is not dict:
        raise _NotPure("namespaces that may run code when read")
    return code


def _attribute(owner, ins, pure):
    """What LOAD_ATTR `ins` leaves on the stack for `owner`: a module's module or pure function
    (with NULL before it for a method load), named by the path it was reached by."""
    if owner[0] != "object" or not isinstance(owner[1], types.ModuleType):
        raise _NotPure("an attribute of a value")
    obj = getattr(owner[1], ins.argval, None)
    if not (isinstance(obj, types.ModuleType) or id(obj) in pure):
        raise _NotPure(f"attribute {ins.argval}")
    name, attributes = owner[2]
    loaded = ("object", obj, (name, attributes + (ins.argval, )))
    return [(_NULL, ), loaded] if ins.arg & 1 else [loaded]


def _plan(function):
    code = _readable_code(function)
    pure = _pure_functions()
    keys, checks, values = [], [], []
    stack = []

    def pop(n=1):
        if len(stack) < n:
            raise _NotPure("stack")
        taken = stack[-n:]
        del stack[-n:]
        return taken

    instructions = [ins for ins in dis.get_instructions(code) if ins.opname not in _NO_EFFECT]
    for at, ins in enumerate(instructions):
        op = ins.opname
        if op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW") and ins.arg == 0:
            stack.append((_META, ))
        elif op == "LOAD_DEREF" and ins.argval in code.co_freevars:
            stack.append((_VALUE, ))
        elif op == "LOAD_CONST":
            stack.append(("const", ins.argval))
        elif op == "PUSH_NULL":
            stack.append((_NULL, ))
        elif op == "LOAD_GLOBAL":
            if ins.arg & 1:
                stack.append((_NULL, ))
            obj = _resolve(function, ins.argval)
            if isinstance(obj, types.ModuleType) or id(obj) in pure:
                stack.append(("object", obj, (ins.argval, ())))
            else:
                values.append(ins.argval)
                stack.append((_VALUE, ))
        elif op == "LOAD_ATTR":
            stack.extend(_attribute(pop()[0], ins, pure))
        elif op == "BINARY_SUBSCR":
            container, key = pop(2)
            if container[0] == _META:
                if key[0] != "const" or not isinstance(key[1], str):
                    raise _NotPure("META read by a computed key")
                keys.append(key[1])
            elif container[0] not in (_VALUE, "const") or key[0] not in (_VALUE, "const"):
                raise _NotPure("a subscript")
            stack.append((_VALUE, ))
        elif op in _VALUE_OPS or op in _UNARY_OPS:
            operands = pop(2 if op in _VALUE_OPS else 1)
            if any(o[0] not in (_VALUE, "const") for o in operands):
                raise _NotPure(op)
            stack.append((_VALUE, ))
        elif op == "CALL":
            arguments = pop(ins.arg)
            callee = [o for o in pop(2) if o[0] != _NULL]
            if (len(callee) != 1 or callee[0][0] != "object" or id(callee[0][1]) not in pure
                    or any(a[0] not in (_VALUE, "const") for a in arguments)):
                raise _NotPure("a call")
            checks.append(_identity(callee[0][2], callee[0][1]))
            stack.append((_VALUE, ))
        elif op in ("BUILD_TUPLE", "BUILD_LIST"):
            if any(o[0] not in (_VALUE, "const") for o in pop(ins.arg)):
                raise _NotPure(op)
            stack.append((_VALUE, ))
        elif op in ("RETURN_VALUE", "RETURN_CONST"):
            if op == "RETURN_VALUE" and pop()[0][0] not in (_VALUE, "const"):
                raise _NotPure("what it returns")
            if at != len(instructions) - 1:
                raise _NotPure("code after its return")
            break
        else:
            raise _NotPure(op)
    else:
        raise _NotPure("no return")
    unique = {}  # by name and attributes: hashing the objects may run their code (Triton's hash a kernel's source)
    for check in checks:
        unique.setdefault(check[:2], check)
    return tuple(dict.fromkeys(keys)), tuple(unique.values()), tuple(dict.fromkeys(values))
