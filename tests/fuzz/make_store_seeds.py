"""Writes corpus/bundle/, corpus/index/ and corpus/calls/: real files of tritonrt's store,
made by the built `tritonrt` tool, in the input forms of fuzz_bundle.cpp and fuzz_index.cpp,
and calls files for fuzz_calls.cpp. Re-run after changing a format, from the repository root,
once build/ is built:

    .venv/bin/python tests/fuzz/make_store_seeds.py
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fuzz" / "corpus"
CLI = REPO / "build" / "tools" / "tritonrt"
FILL = REPO / "tests" / "kernels" / "hostile" / "fill.py"
KINDS = ["kernel", "artifact", "choice", "heuristic"]  # fuzz_index.cpp's order
WRAPPED, BY_MODULE = 4, 8  # fuzz_index.cpp's flag bits
HARNESS_KEY = "fingerprint|cuda:90|key"  # the key fuzz_index.cpp reads records under


def write(folder, name, data):
    (CORPUS / folder).mkdir(parents=True, exist_ok=True)
    (CORPUS / folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def tritonrt(scratch, *args):
    env = dict(os.environ, TRITON_CACHE_DIR=str(scratch / "triton"), TRITONRT_CACHE_DIR=str(scratch / "index"),
               TRITONRT_PYTHON=sys.executable)
    env.pop("TRITONRT_INDEX", None)
    subprocess.run([str(CLI), *map(str, args)], check=True, env=env, capture_output=True)


def record_parts(path):
    header, rest = path.read_bytes().split(b"\n", 1)
    json_bytes = int(header.split()[3])
    return json.loads(rest[:json_bytes]), rest[json_bytes:]


def index_seeds(index):
    kernel = next(index.rglob("kernel"))
    artifact = next(index.rglob("*.artifact"))
    write("index", "kernel_raw", bytes([0]) + kernel.read_bytes())
    write("index", "artifact_raw", bytes([1]) + artifact.read_bytes())
    record, _ = record_parts(kernel)
    write("index", "kernel_wrapped_path", bytes([WRAPPED]) + json.dumps({**record, "source": "/fuzz/kernels.py"}).encode())
    write("index", "kernel_wrapped_module",
          bytes([WRAPPED | BY_MODULE]) + json.dumps({**record, "source": "fuzz.kernels"}).encode())
    record, binary = record_parts(artifact)
    write("index", "artifact_wrapped", bytes([1 | WRAPPED]) + json.dumps({**record, "key": HARNESS_KEY}).encode() +
          b"\0" + binary)
    write("index", "artifact_wrapped_size_1e30",
          bytes([1 | WRAPPED]) + json.dumps({**record, "key": HARNESS_KEY, "binary_kind": 1e30}).encode())
    write("index", "choice_wrapped",
          bytes([2 | WRAPPED]) + json.dumps({"key": HARNESS_KEY, "config": 1, "text": "BLOCK: 64"}).encode())
    write("index", "heuristic_wrapped",
          bytes([3 | WRAPPED]) + json.dumps({"key": HARNESS_KEY, "entries": ['{"value": 1}']}).encode())
    write("index", "header_claims_too_much", bytes([1]) + b"tritonrt-index 4 artifact 10 99999999999 " + b"0" * 64 + b"\n")


def bundle_seeds(bundle):
    data = bundle.read_bytes()
    write("bundle", "real_raw", bytes([0]) + data)
    header, rest = data.split(b"\n", 1)
    table_bytes = int(header.split()[2])
    write("bundle", "real_fixed", bytes([1]) + rest[:table_bytes] + b"\0" + rest[table_bytes:])
    table = json.loads(rest[:table_bytes])
    table["kernels"][0]["bytes"] = 1e30
    write("bundle", "table_bytes_1e30_fixed", bytes([1]) + json.dumps(table).encode() + b"\0" + rest[table_bytes:])
    write("bundle", "empty", bytes([0]))
    write("bundle", "header_only", bytes([0]) + b"tritonrt-bundle 3 0 " + b"0" * 64 + b"\n")


def calls_seeds():
    for name, calls in {
            "one": [{"kernel": "k.py:k", "signature": "*fp32,1024"}],
            "options": [{"kernel": "pkg.mod:k", "signature": "*fp32,4,'x'",
                         "options": {"num_warps": 8, "num_stages": 3, "launch_pdl": True}}],
            "unknown_field": [{"kernel": "k.py:k", "signature": "1", "grid": 3}],
            "num_warps_overflow": [{"kernel": "k.py:k", "signature": "1", "options": {"num_warps": 99999999999}}],
            "no_colon": [{"kernel": "nocolon", "signature": "1"}],
    }.items():
        write("calls", f"{name}.json", json.dumps(calls))
    write("calls", "cut.json", '[{"kernel": ')


def main():
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        tritonrt(scratch, "compile", f"{FILL}:fill", "--target", "cuda:90", "--signature", "*fp32,100")
        tritonrt(scratch, "bundle", "create", scratch / "seed.trb")
        index_seeds(scratch / "index")
        bundle_seeds(scratch / "seed.trb")
    calls_seeds()


if __name__ == "__main__":
    main()
