"""tritonrt._grids: which grid(META) functions the Python launch may answer from its memo, and
what it must read for a call. Grids as kernel libraries write them are memoized; a grid that
could depend on anything but what the plan names is called on every launch (the launch itself
is tested on the stand-in driver in test_frontend.py)."""
import builtins
import math
import types

import pytest
import triton


@pytest.fixture(scope="module")
def plan(tritonrt_package):
    from tritonrt import _grids
    return _grids.plan


NUM_SMS = 132


def library_grids(N, M, v_shape):
    """Grids written as liger-kernel, FlagGems and Triton's tutorials write them."""
    return {
        "liger dyt": lambda meta: (triton.cdiv(N, meta["BLOCK_N"]), M),
        "FlagGems mm": lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), ),
        "FlagGems shape": lambda META: (triton.cdiv(v_shape[1], META["BLOCK_ROW_SIZE"]), ),
        "tutorial": lambda meta: (triton.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]), ),
        "persistent": lambda META: (min(NUM_SMS, triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"])), ),
        "builtins and math": lambda META: (max(1, M // 2), math.ceil(N / META["B"]), -M, len(v_shape), 3),
    }


CDIV = [("triton", ("cdiv", "fn", "__code__"))]  # the function, the one it wraps, and that one's code
EXPECTED = {  # (META items read, the names checked and the attributes read from them, global values read)
    "liger dyt": (("BLOCK_N", ), CDIV, ()),
    "FlagGems mm": (("BLOCK_M", "BLOCK_N"), CDIV, ()),
    "FlagGems shape": (("BLOCK_ROW_SIZE", ), CDIV, ()),
    "tutorial": (("n_elements", "BLOCK_SIZE"), CDIV, ()),
    "persistent": (("BLOCK_M", "BLOCK_N"), CDIV + [("min", ())], ("NUM_SMS", )),
    "builtins and math": (("B", ), [("max", ()), ("math", ("ceil", )), ("len", ())], ()),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_library_grid_reads_meta_items_cells_and_module_values_only(plan, name):
    keys, checks, values = plan(library_grids(4096, 64, (2, 3))[name])
    assert (keys, [(n, a) for n, a, _ in checks], values) == EXPECTED[name]
    for name, attributes, expected in checks:  # each check holds what the path names now, step by step
        found = [globals().get(name, getattr(builtins, name, None))]
        for attribute in attributes:
            found.append(getattr(found[-1], attribute))
        assert len(expected) == len(found) and expected[-1] is not ...
        assert all(e is ... or e is f for e, f in zip(expected, found))


class Shape:
    rows = 4


def impure_grids(x, rows):
    def defined(meta):
        total = 0
        for r in rows:  # a loop: a jump
            total += r
        return (total, )

    def handled(meta):  # a handler's code is reached only by the exception table
        try:
            return (64 // meta["B"], )
        except ZeroDivisionError:
            return (len(rows), )

    class Namespace(dict):
        pass

    return {
        "a method of a value": lambda meta: (triton.cdiv(x.bit_length(), meta["B"]), ),
        "an attribute of a value": lambda meta: (Shape.rows, ),
        "a call of another function": lambda meta: (print(end="") or 1, ),
        "a conditional": lambda meta: (1 if meta["B"] > 4 else 2, ),
        "a computed META key": lambda meta: (meta[x], ),
        "META itself": lambda meta: (len(meta), ),
        "a default argument": lambda meta, n=3: (n, ),
        "a keyword call": lambda meta: (round(x, ndigits=1), ),
        "statements": defined,
        "a nested function": lambda meta: ((lambda: x)(), ),
        "an exception handler": handled,
        "globals of a dict subclass": types.FunctionType((lambda meta: (NUM_SMS, )).__code__, Namespace(globals())),
    }


@pytest.mark.parametrize("name", sorted(impure_grids(1, [1])))
def test_a_grid_that_may_depend_on_anything_else_has_no_plan(plan, name):
    assert plan(impure_grids(5, [1, 2])[name]) is None


def test_only_python_functions_have_plans(plan):
    import functools
    assert plan(functools.partial(lambda meta, n: (n, ), n=2)) is None
    assert plan(max) is None
    assert plan(type("Grid", (), {"__call__": lambda self, meta: (1, )})()) is None
