"""Tests of the `tritonrt` command-line tool, checked against Triton's own JIT.

The binary is taken from $TRITONRT_BUILD_DIR/tools/tritonrt (default: <repo>/build), so the
same tests run against every build (the latest-Triton build sets TRITONRT_BUILD_DIR).
"""
import hashlib
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import triton

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "kernels"
EXAMPLE_KERNELS = REPO / "examples" / "kernels"
SIGNATURES = KERNELS / "signatures.py"

sys.path[:0] = [str(Path(__file__).resolve().parent), str(KERNELS), str(EXAMPLE_KERNELS)]
import triton_reference as ref  # noqa: E402

# The stand-in addresses the CLI uses for `*T` and `*T:unaligned`.
ALIGNED = 0x10000
UNALIGNED = 0x10004
PLAIN_ARGS = '*fp32,*fp32:unaligned,4096,1,0.5,True,None,64,"fast"'


def fp32(address=ALIGNED):
    return ref.HostPointer(address, "float32")


def plain_args():
    return [fp32(), fp32(UNALIGNED), 4096, 1, 0.5, True, None, 64, "fast"]


def kernel(module, name):
    """`name` of `module`, an attribute path such as `tuned.fn` (the kernel under a decorator)."""
    found = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """A Triton cache of the tests' own, so 'stored in' can be checked and nothing is shared."""
    return tmp_path_factory.mktemp("triton-cache")


@pytest.fixture
def run(cli, cache_dir):

    def run(*args, env=None, check=True, cwd=REPO):
        # The CLI embeds this interpreter, so it compiles with the Triton the reference uses.
        environment = {**os.environ, "TRITON_CACHE_DIR": str(cache_dir), "TRITONRT_PYTHON": sys.executable,
                       **(env or {})}
        result = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, env=environment,
                                cwd=cwd, timeout=600)
        # A negative code is a signal: a crash or an uncaught exception is never a clear error.
        assert result.returncode >= 0, f"tritonrt died with signal {-result.returncode}:\n{result.stderr}"
        if check:
            assert result.returncode == 0, f"tritonrt {' '.join(map(str, args))} failed:\n{result.stderr}"
        return result

    return run


# The labels `tritonrt compile` and `tritonrt signature` start their lines with.
LABELS = ("kernel", "file", "target", "triton", "specialization", "signature", "num_warps", "shared memory",
          "global scratch", "profile scratch", "launch", "binary", "hash", "stored in", "autotune", "heuristics")


def report(stdout):
    """The labelled lines of `tritonrt compile` / `signature` as a dict: label -> value."""
    fields = {}
    for line in stdout.splitlines():
        for label in LABELS:
            if line.startswith(label + " "):
                fields[label] = line[len(label):].strip()
    return fields


def add_args(n):
    return [fp32(), fp32(0x20000), fp32(0x30000), n, 1024]


def compile_plain(run, *options):
    return report(run("compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS,
                      *options).stdout)


def compile_plain_with(run, signature, target="cuda:90"):
    return report(run("compile", f"{SIGNATURES}:plain", "--target", target, "--signature", signature).stdout)


def triton_compiled(fn, args, target, **options):
    """Triton's own CompiledKernel for the call (no GPU needed: see triton_reference)."""
    return ref._with_target(fn, target, lambda: fn.warmup(*args, grid=(1, ), **options))


# --- compile: what a call compiles to ------------------------------------------------------------


def test_compile_prints_the_specialization_triton_builds(run):
    out = compile_plain(run)
    assert out["kernel"] == "signatures.plain"
    assert out["target"].startswith("cuda:90")
    assert out["triton"] == triton.__version__
    assert out["specialization"] == ref.specialization(kernel("signatures", "plain"), plain_args())


def test_compile_prints_each_parameter_with_its_type(run):
    signature = compile_plain(run)["signature"].split()
    assert signature == [
        "p:*fp32[div16]",  # aligned pointer: divisible by 16
        "q:*fp32",  # :unaligned
        "n:i32[div16]",  # 4096
        "m:constexpr=1",  # an integer equal to 1 becomes a constant
        "f:fp32",
        "flag:u1",
        "maybe:constexpr=None",
        "BLOCK:constexpr=64",
        "MODE:constexpr='fast'",
    ]


def test_compile_reports_resources_as_triton_compiled_them(run):
    fn = kernel("vector_ops", "softmax_kernel")
    out = report(
        run("compile", f"{EXAMPLE_KERNELS / 'vector_ops.py'}:softmax_kernel", "--target", "cuda:90", "--num-warps",
            "8", "--signature", "*fp32,*fp32,4096,4096,781,1024").stdout)
    expected = triton_compiled(fn, [fp32(), fp32(0x20000), 4096, 4096, 781, 1024], "cuda:90", num_warps=8).metadata
    assert out["hash"] == expected.hash
    assert out["shared memory"] == f"{expected.shared} bytes"
    assert expected.shared > 0  # the cross-warp reduction needs shared memory
    assert expected.num_warps == 8
    assert out["num_warps"] == f"8  num_stages {expected.num_stages}  num_ctas {expected.num_ctas}"
    for name in ("global", "profile"):
        size = getattr(expected, f"{name}_scratch_size", 0) or 0
        align = getattr(expected, f"{name}_scratch_align", 1) or 1
        assert out[f"{name} scratch"] == f"{size} bytes (align {align})"


def test_compile_stores_the_binary_in_tritons_cache_folder(run, cache_dir):
    out = compile_plain(run)
    kind, size = re.fullmatch(r"(\w+), (\d+) bytes", out["binary"]).groups()
    assert kind == "cubin"
    folder = Path(out["stored in"])
    assert folder.parent == cache_dir  # honours TRITON_CACHE_DIR like Triton does
    assert (folder / "plain.cubin").stat().st_size == int(size)
    assert json.loads((folder / "plain.json").read_text())["hash"] == out["hash"]


@pytest.mark.parametrize(
    "source, name, signature, args, options, target",
    [
        pytest.param("signatures", "plain", PLAIN_ARGS, plain_args, {}, "cuda:90", id="plain"),
        pytest.param("signatures", "plain", PLAIN_ARGS, plain_args, {"num_warps": 8}, "cuda:90", id="num_warps"),
        pytest.param("signatures", "plain", PLAIN_ARGS, plain_args, {"num_stages": 2}, "cuda:90", id="num_stages"),
        pytest.param("signatures", "plain", PLAIN_ARGS, plain_args, {}, "cuda:80", id="sm80"),
        pytest.param("signatures", "plain", PLAIN_ARGS, plain_args, {}, "hip:gfx942", id="hip"),
        pytest.param("signatures", "with_defaults", "*fp32,4096", lambda: [fp32(), 4096], {}, "cuda:90",
                     id="defaults"),
        pytest.param("signatures", "annotated", "*fp16,*fp32,7,1,3,2.0,True,32",
                     lambda: [ref.HostPointer(ALIGNED, "float16"),
                              fp32(), 7, 1, 3, 2.0, True, 32], {}, "cuda:90", id="annotated"),
        pytest.param("signatures", "unspecialized", "*fp32,*fp32,32,1,*fp32,16",
                     lambda: [fp32(), fp32(), 32, 1, fp32(), 16], {}, "cuda:90", id="unspecialized"),
        pytest.param("pkg.scale", "double_kernel", "*fp32,100,128", lambda: [fp32(), 100, 128], {}, "cuda:90",
                     id="package"),
        # One config of an autotuned kernel, and a heuristics kernel's value passed by hand: the
        # kernel under its decorator, as Python's kernel.fn[grid](...) calls it.
        pytest.param("signatures", "tuned.fn", "*fp32,100,128", lambda: [fp32(), 100, 128], {"num_warps": 8},
                     "cuda:90", id="autotuned-fn"),
        pytest.param("signatures", "heuristic.fn", "*fp32,100,False,32", lambda: [fp32(), 100, False, 32], {},
                     "cuda:90", id="heuristics-fn"),
        # Tuples, as Python writes them: nested, with elements that specialize to constexprs.
        pytest.param("tuple_kernels", "tuple_combine", "(*fp32,*fp16),*fp32,((2.0,1),(3,None)),1000,128",
                     lambda: [(fp32(), ref.HostPointer(ALIGNED, "float16")), fp32(), ((2.0, 1), (3, None)), 1000, 128],
                     {}, "cuda:90", id="tuples"),
        pytest.param("tuple_kernels", "tuple_combine", "(*fp32:unaligned,),*fp32,((0.5,),(1099511627776,0.25)),16,64",
                     lambda: [(ref.HostPointer(ALIGNED + 4, "float32"), ), fp32(), ((0.5, ), (2**40, 0.25)), 16, 64],
                     {}, "cuda:80", id="one-element-tuples"),
        pytest.param("tuple_kernels", "tuple_shape", "*fp32,*fp32,64,(16,32)", lambda: [fp32(), fp32(), 64, (16, 32)],
                     {}, "cuda:90", id="constexpr-tuple"),
    ],
)
def test_compile_hash_equals_tritons_jit(run, source, name, signature, args, options, target):
    """Same call, same hash: a kernel compiled by tritonrt is the one Triton's cache holds."""
    path = KERNELS / (source.replace(".", "/") + ".py")
    flags = [part for key, value in options.items() for part in (f"--{key.replace('_', '-')}", str(value))]
    out = report(run("compile", f"{path}:{name}", "--target", target, "--signature", signature, *flags).stdout)
    assert out["hash"] == ref.compiled_hash(kernel(source, name), args(), target, **options)


def test_num_warps_option_changes_the_kernel(run):
    default, eight = compile_plain(run), compile_plain(run, "--num-warps", "8")
    assert default["num_warps"].split()[0] == "4"
    assert eight["num_warps"].split()[0] == "8"
    assert default["hash"] != eight["hash"]


def test_launch_pdl_option_is_recorded(run):
    assert compile_plain(run)["launch"].startswith("pdl=no")
    assert compile_plain(run, "--launch-pdl")["launch"].startswith("pdl=yes")


@pytest.mark.parametrize("regular", [True, False], ids=["package", "namespace-package"])
def test_a_module_is_found_from_the_current_folder_as_python_m_finds_it(run, tmp_path, regular):
    (tmp_path / "kernels").mkdir()
    if regular:
        (tmp_path / "kernels" / "__init__.py").write_text("")
    (tmp_path / "kernels" / "mykernels.py").write_text((EXAMPLE_KERNELS / "vector_ops.py").read_text())
    no_path = {"PYTHONPATH": ""}
    out = report(run("signature", "kernels.mykernels:add_kernel", env=no_path, cwd=tmp_path).stdout)
    assert Path(out["file"]) == tmp_path / "kernels" / "mykernels.py"
    out = report(
        run("compile", "kernels.mykernels:add_kernel", "--target", "cuda:90", "--signature",
            "*fp32,*fp32,*fp32,1000,1024", env=no_path, cwd=tmp_path).stdout)
    assert out["kernel"] == "kernels.mykernels.add_kernel"
    assert out["hash"] == ref.compiled_hash(kernel("vector_ops", "add_kernel"), add_args(1000))
    # As with `python -P -m`: PYTHONSAFEPATH leaves the current folder off the search path.
    hidden = run("signature", "kernels.mykernels:add_kernel", env={**no_path, "PYTHONSAFEPATH": "1"}, cwd=tmp_path,
                 check=False)
    assert hidden.returncode == 1 and "'kernels.mykernels' was not found" in hidden.stderr


def test_kernel_can_be_named_by_module(run):
    out = report(
        run("compile", "pkg.scale:double_kernel", "--target", "cuda:90", "--signature", "*fp32,100,128",
            env={"PYTHONPATH": str(KERNELS)}).stdout)
    assert out["kernel"] == "pkg.scale.double_kernel"
    assert out["signature"] == "p:*fp32[div16] n:i32 BLOCK:constexpr=128"


# --- signature: the kernel's static description --------------------------------------------------


def parameters(stdout):
    """`tritonrt signature` parameter lines: name -> the words after it."""
    rows = re.findall(r"^\s+\d+\s+(\w+)(.*)$", stdout, re.M)
    return {name: rest.split() for name, rest in rows}


def test_signature_lists_parameters_constexprs_and_defaults(run):
    out = run("signature", f"{SIGNATURES}:with_defaults").stdout
    assert report(out)["kernel"] == "signatures.with_defaults"
    assert Path(report(out)["file"]) == SIGNATURES
    params = parameters(out)
    assert list(params) == ["p", "n", "BLOCK", "SCALE", "NAME", "FLAG", "OPT", "m", "DT"]
    assert params["p"] == []
    assert params["BLOCK"] == ["constexpr", "=", "128"]
    assert params["NAME"] == ["constexpr", "=", "'relu'"]
    assert params["OPT"] == ["constexpr", "=", "None"]
    assert params["m"] == ["=", "16"]


def test_signature_shows_annotations_and_specialization_opt_outs(run):
    annotated = parameters(run("signature", f"{SIGNATURES}:annotated").stdout)
    assert annotated["n"] == ["annotated", "i64"]
    assert annotated["k"] == ["annotated", "*kfp32"]  # const pointer
    unspecialized = parameters(run("signature", f"{SIGNATURES}:unspecialized").stdout)
    assert unspecialized["n"] == ["do_not_specialize"]
    assert unspecialized["m"] == ["do_not_specialize"]  # named by index (3)
    assert unspecialized["p"] == ["do_not_specialize_on_alignment"]
    assert unspecialized["q"] == []


def test_signature_lists_the_decorators_and_what_they_set(run):
    out = run("signature", f"{SIGNATURES}:tuned").stdout
    assert re.search(r"^decorator\s+Autotuner\s+autotune: 2 configs, key n$", out, re.M)
    assert re.search(r"^\s+2\s+BLOCK\s+constexpr\s+set by a decorator$", out, re.M)
    out = run("signature", f"{SIGNATURES}:heuristic").stdout
    assert re.search(r"^decorator\s+Heuristics\s+heuristics for EVEN$", out, re.M)


# --- errors: a non-zero exit and a message that says what is wrong -----------------------------


def compile_args(spec, signature=PLAIN_ARGS, target="cuda:90"):
    return ["compile", spec, "--target", target, "--signature", signature]


@pytest.mark.parametrize(
    "args, expected",
    [
        pytest.param(compile_args(f"{SIGNATURES}:plain", target="tpu:1"), ["tpu"], id="unknown-backend"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", target="cuda:12345"), ["12345"], id="unknown-arch"),
        pytest.param(compile_args(f"{KERNELS}/no_such_file.py:plain"), ["no_such_file.py"], id="missing-file"),
        pytest.param(compile_args(f"{SIGNATURES}:no_such_kernel"), ["no_such_kernel"], id="missing-kernel"),
        pytest.param(compile_args(f"{SIGNATURES}:not_a_kernel", "1"), ["not_a_kernel", "triton.jit"],
                     id="not-a-jit-function"),
        pytest.param(compile_args(f"{KERNELS}/syntax_error.py:k", "1"), ["syntax_error.py"], id="syntax-error"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "*fp33,*fp32"), ["fp33"], id="unknown-pointer-type"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "*fp32,12abc"), ["12abc"], id="malformed-number"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "*fp32,*fp32,fp8e4nv"), ["'fp8e4nv'", "not scalar types"],
                     id="bare-fp8-type"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", target="cuda:90:64"), ["cuda:90", "32-wide warps"],
                     id="wrong-warp-size"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "*fp32:aligned,*fp32"), ["*fp32:aligned"],
                     id="bad-pointer-suffix"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "*fp32,'open"), ["unterminated"], id="unterminated-string"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "(*fp32,*fp32"), ["not closed"], id="unclosed-tuple"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "(*fp32),*fp32"), ["(x,)"], id="parenthesized-value"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "(,),*fp32"), ["'(,)'", "empty tuple ()"],
                     id="comma-without-value"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "tensordesc<fp16[64,64]>,*fp32"),
                     ["tensor descriptor is not an argument the command line takes"], id="tensor-descriptor"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", "*fp32,*fp32"), ["plain", "'n'", "9", "2"],
                     id="too-few-arguments"),
        pytest.param(compile_args(f"{SIGNATURES}:plain", PLAIN_ARGS + ",5"), ["plain", "9", "10"],
                     id="too-many-arguments"),
        pytest.param(["compile", f"{SIGNATURES}:plain", "--target", "cuda:90"], ["--signature"],
                     id="no-signature"),
        pytest.param(compile_args(f"{SIGNATURES}:plain") + ["--num-warps", "x"], ["--num-warps", "'x'"],
                     id="non-integer-option"),
        pytest.param(compile_args(f"{SIGNATURES}:plain") + ["--frobnicate"], ["--frobnicate"],
                     id="unknown-option"),
        pytest.param(["signature", str(SIGNATURES)], ["SOURCE:KERNEL"], id="no-kernel-name"),
        pytest.param(["launch", f"{SIGNATURES}:plain"], ["launch"], id="unknown-command"),
    ],
)
def test_error_exits_non_zero_with_a_clear_message(run, args, expected):
    result = run(*args, check=False)
    assert result.returncode != 0
    assert result.stdout == ""  # no half-printed report
    message = result.stderr
    assert message.startswith("tritonrt")
    assert "Traceback (most recent call last)" not in message
    for text in expected:
        assert text in message, f"{text!r} not in:\n{message}"


def test_triton_compile_error_is_carried_through(run):
    result = run(*compile_args(f"{SIGNATURES}:bad_arange", "*fp32,16"), check=False)
    assert result.returncode != 0
    assert result.stdout == ""
    message = result.stderr
    assert "bad_arange" in message and "cuda:90" in message
    # Triton's own diagnostic: the offending source line and its reason.
    assert "tl.arange(0, 3)" in message
    assert "power of 2" in message


# --- help, version, JSON and written files ----------------------------------------------------


@pytest.mark.parametrize("command", [[], ["signature"], ["compile"], ["bundle"], ["bundle", "create"],
                                     ["bundle", "list"]])
def test_help_goes_to_stdout_and_exits_zero(run, command):
    result = run(*command, "--help")
    assert result.stderr == ""
    assert result.stdout.startswith(("Inspect, compile and bundle", "Show", "Compile", "Create", "Pack"))
    assert "Usage: tritonrt" in result.stdout
    if command == ["compile"]:
        assert "--num-warps N" in result.stdout and "--no-launch-pdl" in result.stdout
        assert "*fp32:unaligned" in result.stdout  # the ARGS notes


def test_version_names_tritonrt_triton_and_python(run):
    out = run("--version").stdout
    assert re.search(r"^tritonrt \d+\.\d+\.\d+$", out, re.M)
    assert re.search(rf"^triton {re.escape(triton.__version__)}$", out, re.M)
    assert re.search(rf"^python {sys.version_info.major}\.{sys.version_info.minor} ", out, re.M)
    assert re.search(r"^cuda driver ", out, re.M)


def test_signature_json_holds_what_the_text_shows(run):
    text = parameters(run("signature", f"{SIGNATURES}:with_defaults").stdout)
    data = json.loads(run("signature", f"{SIGNATURES}:with_defaults", "--json").stdout)
    assert data["kernel"] == "signatures.with_defaults"
    assert [p["name"] for p in data["parameters"]] == list(text)
    for p in data["parameters"]:
        assert p["constexpr"] == ("constexpr" in text[p["name"]])
        assert (p["default"] is not None) == ("=" in text[p["name"]])


def test_compile_json_and_written_files_match_the_report(run, tmp_path):
    args = ["compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS]
    text = report(run(*args).stdout)
    data = json.loads(run(*args, "--json", "-o", tmp_path).stdout)
    assert data["hash"] == text["hash"]
    assert data["specialization"] == text["specialization"]
    assert data["target"] == "cuda:90" and data["num_warps"] == int(text["num_warps"].split()[0])
    binary, metadata = (tmp_path / "plain.cubin"), (tmp_path / "plain.json")
    assert data["written"] == [str(binary), str(metadata)]
    assert binary.read_bytes()[:4] == b"\x7fELF" and len(binary.read_bytes()) == data["binary_bytes"]
    assert json.loads(metadata.read_text())["hash"] == data["hash"]


def test_tritons_own_pointer_spelling_is_an_aligned_pointer(run):
    ours = report(run("compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS).stdout)
    tritons = PLAIN_ARGS.replace("*fp32,", "*fp32:16,", 1)
    assert report(run("compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", tritons).stdout) == ours


def test_tritons_aot_spelling_of_an_unspecialized_scalar_compiles_what_tritons_jit_does(run):
    """`i32` alone, as Triton's AOT compiler takes it: an i32 that is neither 1 nor divisible by 16."""
    add = f"{EXAMPLE_KERNELS / 'vector_ops.py'}:add_kernel"
    aot = report(run("compile", add, "--target", "cuda:90", "--signature", "*fp32:16,*fp32:16,*fp32:16,i32,1024").stdout)
    by_value = report(run("compile", add, "--target", "cuda:90", "--signature", "*fp32,*fp32,*fp32,1000,1024").stdout)
    assert aot["signature"].split()[3] == "n:i32"
    assert aot["hash"] == by_value["hash"] == ref.compiled_hash(kernel("vector_ops", "add_kernel"), add_args(1000))


def test_tritons_aot_spellings_of_a_whole_call_are_the_values_it_stands_for(run):
    # i32:16 (divisible by 16), fp32 and i1 (a bool) as Triton's AOT writes them.
    aot = '*fp32:16,*fp32:unaligned,i32:16,1,fp32,i1,None,64,"fast"'
    assert compile_plain_with(run, aot) == compile_plain(run)
    # i32:1 stays a scalar fixed to i32 whose value is 1: a runtime i32, as Triton's JIT
    # compiles a parameter annotated i32 given 1 (Triton's AOT would make it the constant 1).
    assert compile_plain_with(run, PLAIN_ARGS.replace(",1,", ",i32:1,"))["signature"].split()[3] == "m:i32"


@pytest.mark.parametrize("spelled, value", [("i64", 2**33 + 3), ("u64", 2**63 + 3)])
def test_a_bare_wide_integer_type_is_tritons_unspecialized_scalar_of_that_type(run, spelled, value):
    out = compile_plain_with(run, PLAIN_ARGS.replace("4096", spelled))
    assert out["signature"].split()[2] == f"n:{spelled}"
    args = plain_args()
    args[2] = value
    assert out["hash"] == ref.compiled_hash(kernel("signatures", "plain"), args)


def test_every_scalar_type_can_be_spelled_bare(run):
    out = compile_plain_with(run, '*fp32,*fp32,u32,i8,bf16,u1,None,64,"fast"')
    assert out["signature"].split()[2:6] == ["n:u32", "m:i8", "f:bf16", "flag:u1"]
    out = compile_plain_with(run, '*fp32,*fp32,u16,i16,fp64,i1,None,64,"fast"')
    assert out["signature"].split()[2:6] == ["n:u16", "m:i16", "f:fp64", "flag:u1"]
    out = compile_plain_with(run, '*fp32,*fp32,u8,i32,fp16,False,None,64,"fast"')
    assert out["signature"].split()[2:5] == ["n:u8", "m:i32", "f:fp16"]


def test_tritons_aot_target_with_its_warp_size_is_the_target(run):
    assert compile_plain_with(run, PLAIN_ARGS, target="cuda:90:32") == compile_plain(run)
    # Another warp size is an error (test_error_exits_non_zero_with_a_clear_message).


# --- commands that cannot do what is asked say what can --------------------------------------


def test_compile_of_an_autotuned_kernel_says_how_bundle_create_compiles_its_configs(run, tmp_path):
    result = run("compile", f"{SIGNATURES}:tuned", "--target", "cuda:90", "--signature", "*fp32,100", check=False)
    assert result.returncode == 1 and result.stdout == ""
    assert "is autotuned (2 configs)" in result.stderr
    assert "tritonrt bundle create OUT.trb --calls CALLS.json --target cuda:90" in result.stderr
    # The calls file it spells out does what it says.
    calls = re.search(r"CALLS\.json: (\[.*?\]), and run", result.stderr).group(1)
    (tmp_path / "calls.json").write_text(calls)
    created = run("bundle", "create", tmp_path / "tuned.trb", "--calls", tmp_path / "calls.json", "--target",
                  "cuda:90", env={"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(tmp_path / "index")})
    assert "[1/1] tuned for cuda:90: 2 artifacts" in created.stderr
    # And the one-config form it names compiles.
    one = re.search(r"tritonrt compile (\S+\.fn)", result.stderr).group(1)
    assert one == f"{SIGNATURES}:tuned.fn"
    assert report(run("compile", one, "--target", "cuda:90", "--signature", "*fp32,100,64").stdout)["hash"]


def test_bundle_create_that_matches_nothing_names_every_record_left_out(run, tmp_path):
    """A record too damaged to name its kernel may be the one asked for: the error says so."""
    index = tmp_path / "index"
    (index / "v4" / "damaged").mkdir(parents=True)
    # A whole record (header and checksum right) whose kernel fields are missing.
    body = b'{"something": "else"}'
    header = f"tritonrt-index 4 kernel {len(body)} 0 {hashlib.sha256(body).hexdigest()}\n".encode()
    (index / "v4" / "damaged" / "kernel").write_bytes(header + body)
    result = run("bundle", "create", tmp_path / "x.trb", "--kernel", f"{SIGNATURES}:plain", check=False,
                 env={"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(index)})
    assert result.returncode == 1 and not (tmp_path / "x.trb").exists()
    assert "nothing in the index" in result.stderr
    assert f"skipped {index / 'v4' / 'damaged'}: " in result.stderr, result.stderr


def test_bundle_create_sets_a_damaged_record_aside_without_naming_a_kernel(run, tmp_path):
    """A record whose checksum fails is set aside with a warning about its file; there is no
    kernel to name yet (the warning once read "kernel 'index': ...")."""
    index = tmp_path / "index"
    (index / "v4" / "damaged").mkdir(parents=True)
    path = index / "v4" / "damaged" / "kernel"
    path.write_bytes(b"tritonrt-index 4 kernel 2 0 " + b"0" * 64 + b"\n{}")
    result = run("bundle", "create", tmp_path / "x.trb", "--kernel", f"{SIGNATURES}:plain", check=False,
                 env={"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(index)})
    assert result.returncode == 1
    [warning] = [line for line in result.stderr.splitlines() if line.startswith("tritonrt: warning:")]
    assert warning.startswith(f"tritonrt: warning: its index file {path} is invalid: "), warning
    assert "set aside as" in warning and not path.exists()


def test_compile_without_target_on_a_machine_without_gpu_says_to_pass_target(run):
    try:
        import ctypes
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has a CUDA driver: compile without --target compiles for its GPU")
    except OSError:
        pass
    result = run("compile", f"{SIGNATURES}:plain", "--signature", PLAIN_ARGS, check=False)
    assert result.returncode == 1 and result.stdout == ""
    assert "no --target given" in result.stderr and "pass --target, e.g. --target cuda:90" in result.stderr


# --- bundle create -----------------------------------------------------------------------------------


def test_bundle_create_with_calls_speaks_only_of_the_calls_kernels(run, tmp_path):
    index = {"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(tmp_path / "index")}
    # An unrelated kernel in the index, stale since its file changed.
    (tmp_path / "other").mkdir()
    other = tmp_path / "other" / "signatures.py"
    other.write_text(SIGNATURES.read_text())
    run("compile", f"{other}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS, env=index)
    other.write_text(SIGNATURES.read_text() + "\nEDITED = 1\n")
    (tmp_path / "vector_ops.py").write_text((EXAMPLE_KERNELS / "vector_ops.py").read_text())
    (tmp_path / "calls.json").write_text('[{"kernel": "vector_ops.py:add_kernel", "signature": "*fp32,*fp32,*fp32,1000,1024"}]')
    created = run("bundle", "create", tmp_path / "add.trb", "--calls", tmp_path / "calls.json", "--target", "cuda:90",
                  env=index)
    assert "skipped" not in created.stderr and str(other) not in created.stderr, created.stderr
    # One kernel, one artifact: said in the singular.
    assert f"{tmp_path / 'add.trb'}: 1 kernel, " in created.stdout
    assert re.search(r"^  vector_ops:add_kernel  1 artifact \(\d+ bytes\), 0 tuning choices, 0 heuristic values, for "
                     r"cuda:90$", created.stdout, re.M), created.stdout
    # Packing the whole index still says what it left out.
    everything = run("bundle", "create", tmp_path / "all.trb", "--target", "cuda:90", env=index)
    assert re.search(rf"^tritonrt: skipped plain of {re.escape(str(other))}: ", everything.stderr, re.M), \
        everything.stderr


ADD_CALL = {"kernel": "vector_ops.py:add_kernel", "signature": "*fp32,*fp32,*fp32,1000,1024"}


TWINS = """import triton
import triton.language as tl


@triton.jit
def twin_a(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


@triton.jit
def twin_b(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)
"""


def test_bundle_create_with_calls_packs_the_same_bytes_whatever_else_the_index_holds(run, tmp_path):
    (tmp_path / "twins.py").write_text(TWINS)
    # Two kernels of one signature. One default option spelt out: Triton compiles it as the
    # default call, so it is that call's artifact.
    (tmp_path / "calls.json").write_text(json.dumps([
        {"kernel": "twins.py:twin_a", "signature": "*fp32,*fp32,4096,1024", "options": {"num_warps": 4}},
        {"kernel": "twins.py:twin_b", "signature": "*fp32,*fp32,4097,1024"}]))
    bundles = {}
    for name in ("fresh", "busy", "fresh again"):
        index = {"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(tmp_path / name)}
        if name == "busy":
            # Compiled before and asked for by no call: twin_a with the default options, other
            # options and another specialization; twin_b as the calls file calls twin_a (the
            # same key, another kernel).
            compiles = [("twin_a", "*fp32,*fp32,4096,1024", []), ("twin_a", "*fp32,*fp32,4096,1024", ["--num-warps", "8"]),
                        ("twin_a", "*fp32,*fp32,1001,1024", []), ("twin_b", "*fp32,*fp32,4096,1024", [])]
            for kernel, signature, extra in compiles:
                run("compile", f"{tmp_path / 'twins.py'}:{kernel}", "--target", "cuda:90", "--signature", signature,
                    *extra, env=index)
        bundle = tmp_path / f"{name}.trb"
        run("bundle", "create", bundle, "--calls", tmp_path / "calls.json", "--target", "cuda:90", env=index)
        bundles[name] = bundle.read_bytes()
    assert bundles["busy"] == bundles["fresh"]
    assert bundles["fresh again"] == bundles["fresh"]
    listed = json.loads(run("bundle", "list", tmp_path / "busy.trb", "--json").stdout)
    held = {k["name"]: [(a["options"], a["specialization"]) for a in k["held"]] for k in listed["kernels"]}
    options = "num_warps=4, num_stages=3, num_ctas=1, launch_pdl=false, launch_cooperative_grid=false"
    assert held == {"twin_a": [(options, "[('*fp32', 'D'), ('*fp32', 'D'), ('i32', 'D'), ('constexpr', 1024)]")],
                    "twin_b": [(options, "[('*fp32', 'D'), ('*fp32', 'D'), ('i32', ''), ('constexpr', 1024)]")]}


def test_bundle_create_with_calls_refuses_to_run_beside_a_loaded_bundle(run, tmp_path):
    (tmp_path / "twins.py").write_text(TWINS)
    (tmp_path / "calls.json").write_text(json.dumps([{"kernel": "twins.py:twin_a", "signature": "*fp32,*fp32,4096,1024"}]))
    run("bundle", "create", tmp_path / "first.trb", "--calls", tmp_path / "calls.json", "--target", "cuda:90",
        env={"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(tmp_path / "first")})
    # A loaded bundle would serve the call, and the index the bundle is packed from never get it.
    result = run("bundle", "create", tmp_path / "second.trb", "--calls", tmp_path / "calls.json", "--target",
                 "cuda:90", check=False, env={"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(tmp_path / "second"),
                                              "TRITONRT_BUNDLE": str(tmp_path / "first.trb")})
    assert result.returncode == 1 and not (tmp_path / "second.trb").exists()
    assert f"with --calls while TRITONRT_BUNDLE is set ({tmp_path / 'first.trb'})" in result.stderr, result.stderr


@pytest.mark.parametrize("target", ["cuda:90", "hip:gfx942"])
def test_bundle_list_shows_each_artifact_with_the_options_the_installed_triton_defaults_to(run, tmp_path, target):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    (tmp_path / "vector_ops.py").write_text((EXAMPLE_KERNELS / "vector_ops.py").read_text())
    (tmp_path / "calls.json").write_text(json.dumps([ADD_CALL]))
    index = {"TRITONRT_INDEX": "on", "TRITONRT_CACHE_DIR": str(tmp_path / "index")}
    run("bundle", "create", tmp_path / "add.trb", "--calls", tmp_path / "calls.json", "--target", target, env=index)
    [artifact] = json.loads(run("bundle", "list", tmp_path / "add.trb", "--json").stdout)["kernels"][0]["held"]
    assert artifact["target"] == target and re.fullmatch(r"[0-9a-f]{64}", artifact["hash"])
    assert artifact["specialization"].startswith("[('*fp32', 'D'), ('*fp32', 'D'), ('*fp32', 'D'), ('i32', ''), "
                                                 "('constexpr', 1024)]"), artifact
    # The options a call that sets none is keyed under are the defaults of Triton's own backend.
    backend, arch = target.split(":")
    defaults = make_backend(GPUTarget(backend, int(arch) if backend == "cuda" else arch, 32 if backend == "cuda" else 64))
    parsed = defaults.parse_options({})
    keyed = dict(word.split("=") for word in artifact["options"].split(", "))
    assert keyed == {name: str(getattr(parsed, name)).lower() for name in keyed}
    assert {"num_warps", "num_stages", "num_ctas"} <= keyed.keys()
    text = run("bundle", "list", tmp_path / "add.trb").stdout
    assert f"    {target}  {artifact['options']}  {artifact['specialization']}  hash {artifact['hash']}\n" in text


# --- header ----------------------------------------------------------------------------------------

TYPED_CALLS = [{**ADD_CALL, "options": {"num_warps": 8}},
               {**ADD_CALL, "signature": "*fp32,*fp32,*fp32,4096,256"},
               {**ADD_CALL, "signature": "*fp16,*fp16,*fp16,i32,256"}]


def compiles(tmp_path, header, body):
    """Whether a C++ file including `header` with `body` in a function compiles: (ok, errors)."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    source = tmp_path / "use.cpp"
    source.write_text(f'#include "{header.name}"\n\nvoid use(float* x, double* d, void* h) {{\n{body}\n}}\n')
    done = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", f"-I{REPO / 'include'}", f"-I{header.parent}",
                           str(source)], capture_output=True, text=True, timeout=300)
    return done.returncode == 0, done.stderr


def test_header_spells_the_most_negative_integer_constexpr_so_that_it_compiles(run, tmp_path):
    # -9223372036854775808 is no C++ literal (the negation of one too large for the type).
    (tmp_path / "shift.py").write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                                       "def shifted(x_ptr, OFFSET: tl.constexpr):\n    pass\n")
    (tmp_path / "calls.json").write_text(json.dumps([{"kernel": "shift.py:shifted",
                                                      "signature": f"*fp32,{-2**63}"}]))
    header = tmp_path / "shift_kernels.h"
    run("header", tmp_path / "calls.json", "-o", header, "--namespace", "app")
    assert "kernel(config, x_ptr, std::numeric_limits<std::int64_t>::min());" in header.read_text()
    ok, errors = compiles(tmp_path, header, "  app::shifted({}, x);")
    assert ok, errors


def test_header_gives_one_typed_function_per_call_and_a_wrong_type_does_not_compile(run, tmp_path):
    (tmp_path / "vector_ops.py").write_text((EXAMPLE_KERNELS / "vector_ops.py").read_text())
    (tmp_path / "calls.json").write_text(json.dumps(TYPED_CALLS))
    header = tmp_path / "app_kernels.h"
    run("header", tmp_path / "calls.json", "-o", header, "--namespace", "app")
    text = header.read_text()
    # Each call's arguments typed from its tokens, its constexpr fixed, its options filled in.
    assert "inline void add_kernel(const tritonrt::LaunchConfig& config, const float* x_ptr, const float* y_ptr, " \
           "const float* out_ptr, std::int64_t n) {" in text, text
    assert "if (!launch.options.num_warps) launch.options.num_warps = 8;" in text
    assert "kernel(launch, x_ptr, y_ptr, out_ptr, n, std::int64_t{1024});" in text
    # A later call of the kernel (another BLOCK, other types): named with the call's number.
    assert "inline void add_kernel_2(const tritonrt::LaunchConfig& config, const float* x_ptr" in text
    assert "inline void add_kernel_3(const tritonrt::LaunchConfig& config, tritonrt::DevicePtr x_ptr" in text
    assert "tritonrt::scalar(tritonrt::DType::i32, n), std::int64_t{256});" in text
    ok, errors = compiles(tmp_path, header, """
  app::add_kernel({.grid = {4}}, x, x, x, 4096);
  app::add_kernel_2({.grid = {16}}, x, x, x, 4096);
  app::add_kernel_3({}, tritonrt::DevicePtr{h, tritonrt::DType::fp16}, tritonrt::DevicePtr{h, tritonrt::DType::fp16},
                    tritonrt::DevicePtr{h, tritonrt::DType::fp16}, 4096);""")
    assert ok, errors
    # A double buffer where the kernel takes fp32, a missing argument, a pointer for an integer:
    # the program does not compile.
    for wrong in ("app::add_kernel({}, d, x, x, 4096);", "app::add_kernel_2({}, x, x, x);",
                  "app::add_kernel({}, x, x, x, x);"):
        ok, errors = compiles(tmp_path, header, "  " + wrong)
        assert not ok and "add_kernel" in errors, wrong


def test_header_refuses_a_call_it_cannot_type_naming_it(run, tmp_path):
    (tmp_path / "calls.json").write_text(json.dumps(
        [{"kernel": f"{KERNELS / 'tuple_kernels.py'}:tuple_unspecialized", "signature": "(*fp32,*fp32),*fp32,4,64"}]))
    result = run("header", tmp_path / "calls.json", check=False)
    assert result.returncode != 0 and result.stdout == ""
    assert "call 1 (tuple_unspecialized), parameter" in result.stderr and "tuple" in result.stderr, result.stderr


# --- --json: errors too ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, kind, code, says",
    [
        pytest.param(compile_args(f"{SIGNATURES}:plain", target="tpu:1"), "TargetError", 1, "tpu", id="target"),
        pytest.param(["signature", f"{KERNELS}/no_such_file.py:k"], "SourceError", 1, "no_such_file.py", id="source"),
        pytest.param(compile_args(f"{SIGNATURES}:plain") + ["--num-warps", "x"], "UsageError", 2, "--num-warps",
                     id="usage"),
        pytest.param(["bundle", "list", "/nonexistent/x.trb"], "ArtifactError", 1, "x.trb", id="bundle-list"),
    ],
)
def test_json_errors_are_json_on_stdout_and_text_on_stderr(run, args, kind, code, says):
    result = run(*args, "--json", check=False)
    assert result.returncode == code
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == kind and error["exit_code"] == code
    assert says in error["message"]
    assert error["message"] in result.stderr  # the human message stays where it was


# --- profiler ranges and the log ------------------------------------------------------------------


def test_an_unknown_log_level_is_warned_about_once(run):
    result = run("compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS,
                 env={"TRITONRT_LOG": "verbose"})
    warning = "tritonrt: warning: TRITONRT_LOG=verbose is not a level tritonrt knows (off, warning, info, debug)"
    assert result.stderr.count(warning) == 1, result.stderr
    assert "TRITONRT_LOG" not in run("signature", f"{SIGNATURES}:plain", env={"TRITONRT_LOG": "warning"}).stderr


def test_compiles_show_as_nvtx_ranges_and_in_the_log_with_durations(run, tmp_path):
    recorder = os.environ.get("TRITONRT_TEST_NVTX_RECORDER")
    if not recorder:
        pytest.skip("TRITONRT_TEST_NVTX_RECORDER is not set (ctest sets it to the recording NVTX injection library "
                    "where tritonrt was built with NVTX's headers)")
    ranges = tmp_path / "nvtx.log"
    result = run("compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS,
                 env={"NVTX_INJECTION64_PATH": recorder, "TRITONRT_TEST_NVTX_LOG": str(ranges),
                      "TRITONRT_LOG": "info", "TRITONRT_INDEX": "off"})
    events = ranges.read_text().splitlines()
    for name in ("starting Python", "importing Triton", f"kernel 'plain': importing '{SIGNATURES}' through Python",
                 "kernel 'plain': compiling for cuda:90"):
        assert f"push tritonrt: {name}" in events
        assert re.search(rf"^tritonrt: info: {re.escape(name)}: took \d+\.\d ms", result.stderr, re.M), result.stderr
    assert events.count("pop") == sum(e.startswith("push ") for e in events)  # every range closed


def test_a_python_that_cannot_be_run_is_said_so(run, tmp_path):
    not_executable = tmp_path / "python3"
    not_executable.write_text("#!/bin/sh\n")
    not_executable.chmod(0o644)
    result = run("compile", f"{SIGNATURES}:plain", "--target", "cuda:90", "--signature", PLAIN_ARGS, check=False,
                 env={"TRITONRT_PYTHON": str(not_executable), "TRITONRT_INDEX": "off"})
    assert result.returncode == 1
    assert f"{not_executable} (TRITONRT_PYTHON): it cannot be run (Permission denied)" in result.stderr, result.stderr


def test_a_nul_in_a_calls_files_signature_is_shown_not_cut(run, tmp_path):
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"kernel": f"{SIGNATURES}:plain", "signature": "*fp32,1\u00002,*fp32"}]))
    result = run("bundle", "create", tmp_path / "x.trb", "--calls", calls, "--target", "cuda:90", check=False)
    assert result.returncode != 0
    assert "'1\\x002'" in result.stderr, result.stderr
