"""Writes corpus/bridge/: answers of src/compiler/bridge.py, and malformed variants of them.

The bridge's JSON format changes with bridge.py, so its seeds are made by bridge.py itself
(loaded from its file, as tritonrt runs it): re-run after changing the format, with the
project's environment, from the repository root:

    .venv/bin/python tests/fuzz/make_bridge_seeds.py
"""
import copy
import importlib.util
import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests" / "fuzz" / "corpus" / "bridge"
# tritonrt's DType enumerators, in order, as triton.language names them (src/common/dtype.cpp).
DTYPES = ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "bfloat16", "float32", "float64", "float8e4nv", "float8e5", "float8e4b15", "float8e4b8", "float8e5b16"]
KERNELS = [("signatures.py", name) for name in ("plain", "annotated", "with_defaults", "tuned", "heuristic")] + [
    ("nonfinite_defaults.py", "scale"),
    ("decorator_cases.py", "counted"),  # heuristics setting several parameters
    ("decorator_cases.py", "counted_tuning_sum"),  # autotune with a pre_hook
]


def load_bridge():
    spec = importlib.util.spec_from_file_location("_tritonrt_bridge", REPO / "src" / "compiler" / "bridge.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
        answer = json.loads(bridge.load_kernel(os.fsencode(path), name.encode()))
        answer["file"] = f"tests/kernels/{file}"  # the same seed on every machine
        kernels[name] = answer
        write(f"valid_kernel_{name}.json", answer)
    rules = json.loads(bridge.specialization_rules(DTYPES))
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
