"""Writes corpus/bridge/: answers of the bridge (src/python_compiler/bridge/), and malformed variants of them.

The bridge's JSON format changes with the bridge, so its seeds are made by the bridge itself
(loaded from its files, as tritonrt runs them): re-run after changing the format, with the
project's environment, from the repository root:

    .venv/bin/python tests/fuzz/make_bridge_seeds.py
"""
import copy
import importlib
import json
import os
import sys
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "fuzz" / "corpus" / "bridge"
# tritonrt's table of element types (src/common/dtype.cpp): Triton's, triton.language's and
# torch's names, and sizes; the bridge gets it from C++.
DTYPES = [("u1", "int1", "bool", 1), ("i8", "int8", "int8", 1), ("i16", "int16", "int16", 2),
          ("i32", "int32", "int32", 4), ("i64", "int64", "int64", 8), ("u8", "uint8", "uint8", 1),
          ("u16", "uint16", "uint16", 2), ("u32", "uint32", "uint32", 4), ("u64", "uint64", "uint64", 8),
          ("fp16", "float16", "float16", 2), ("bf16", "bfloat16", "bfloat16", 2), ("fp32", "float32", "float32", 4),
          ("fp64", "float64", "float64", 8), ("fp8e4nv", "float8e4nv", "float8_e4m3fn", 1),
          ("fp8e5", "float8e5", "float8_e5m2", 1), ("fp8e4b15", "float8e4b15", "", 1),
          ("fp8e4b8", "float8e4b8", "float8_e4m3fnuz", 1), ("fp8e5b16", "float8e5b16", "float8_e5m2fnuz", 1)]
KERNELS = [("signatures.py", name) for name in ("plain", "annotated", "with_defaults", "tuned", "heuristic")] + [
    ("nonfinite_defaults.py", "scale"),
    ("decorator_cases.py", "counted"),  # heuristics setting several parameters
    ("decorator_cases.py", "counted_tuning_sum"),  # autotune with a pre_hook
]


def load_bridge():
    """The bridge's parts as a package over their folder (tritonrt executes them from strings)."""
    package = types.ModuleType("_tritonrt_bridge")
    package.__path__ = [str(REPO / "src" / "compiler" / "bridge")]
    sys.modules["_tritonrt_bridge"] = package
    common = importlib.import_module("_tritonrt_bridge.common")
    common.dtypes.update({name: common.DType(language, torch, size) for name, language, torch, size in DTYPES})
    return types.SimpleNamespace(**{name: getattr(importlib.import_module(f"_tritonrt_bridge.{part}"), name)
                                    for part, name in (("describe", "kernel_description"), ("rules", "specialization_rules"))})


def write(name, answer):
    text = answer if isinstance(answer, str) else json.dumps(answer)
    (OUT / name).write_text(text)


def main():
    bridge = load_bridge()
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    kernels = {}
    for file, name in KERNELS:
        path = REPO / "tests" / "kernels" / file
        answer = json.loads(bridge.kernel_description(os.fsencode(path), name.encode()))
        answer["file"] = f"tests/kernels/{file}"  # the same seed on every machine
        kernels[name] = answer
        write(f"valid_kernel_{name}.json", answer)
    rules = json.loads(bridge.specialization_rules())
    write("valid_rules.json", rules)

    # Malformed answers: each past or plausible defect once, on an otherwise real answer.
    base = kernels["with_defaults"]
    scale = next(i for i, p in enumerate(base["params"]) if p["default"].get("kind") == "float")
    block = next(i for i, p in enumerate(base["params"]) if p["default"].get("kind") == "int")

    def with_default(index, default):
        answer = copy.deepcopy(base)
        answer["params"][index]["default"] = {"repr": "x", **default}
        return answer

    write("default_float_nan.json", with_default(scale, {"kind": "float", "value": "nan"}))
    write("default_float_hex.json", with_default(scale, {"kind": "float", "value": "0x1.8p+1"}))
    write("default_float_garbage.json", with_default(scale, {"kind": "float", "value": "0x1.8q+1zz"}))
    write("default_float_number.json", with_default(scale, {"kind": "float", "value": 3.0}))
    write("default_int_too_big.json", json.dumps(with_default(block, {"kind": "int", "value": 0})).replace(
        '"value": 0', '"value": 18446744073709551616'))
    write("params_not_list.json", {**base, "params": {"p": base["params"][0]}})
    write("handle_string.json", {**base, "handle": str(base["handle"])})
    # Deeper than the JSON reader allows: 100,000 levels once overflowed the stack.
    write("params_nested_1000_deep.json", '{"params": ' + "[" * 1000 + "]" * 1000 + "}")
    write("rules_divisibility_3.json", {**rules, "int_divisibility": 3})
    write("rules_short_pointer_types.json", {**rules, "pointer_types": rules["pointer_types"][:5]})

    # Heuristic results as bridge.run_heuristic writes them (value in _encode's form, then the
    # [parameter, facet] pairs it read, or null for all); fuzz_bridge.cpp's kernel is (x_ptr, n, BLOCK).
    write("heuristic_int.json", {"value": {"kind": "int", "value": 64}, "reads": [["n", "value"]]})
    write("heuristic_str_reads_all.json", {"value": {"kind": "str", "value": "relu"}, "reads": None})
    write("heuristic_dtype.json", {"value": {"kind": "dtype", "value": "fp16"},
                                   "reads": [["x_ptr", "dtype"], ["x_ptr", "shape"], ["grid", "value"]]})
    write("heuristic_object.json", {"value": {"kind": "object", "type": "list"}, "reads": []})
    write("heuristic_bad_facet.json", {"value": {"kind": "bool", "value": True}, "reads": [["n", "colour"]]})


if __name__ == "__main__":
    main()
