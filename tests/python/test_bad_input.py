"""Regression tests: the `tritonrt` tool given input that once made it misbehave.

Each test is a defect an earlier version had, checked the way a user meets it, through the
command line, against Triton's own JIT where there is a right answer:

- constexpr defaults of nan, inf and -inf: listed by `signature`, compiled with Triton's hash;
- numbers on the command line are strict: an option value is a decimal int that fits, and a
  `--signature` integer is read as Python reads the literal (0o10, 0x10, 1_000, -0), with
  leading zeros, doubled underscores and values no Triton type holds rejected;
- a damaged entry of Triton's cache (binary or metadata edited underneath) is set aside beside
  itself and compiled once more, with a warning (silenced by TRITONRT_LOG=off);
- Python's noise stays out: kernel modules that exit or raise KeyboardInterrupt at import, a
  default whose repr() raises, malformed hip targets, Triton's ptxas failure and dumps, a
  kernel file whose name is not UTF-8.

Errors must be an exit status and one line naming what is wrong, with no Python traceback and
nothing on stdout. The kernels are in tests/kernels/hostile. The binary is taken from
$TRITONRT_BUILD_DIR/tools/tritonrt (default: <repo>/build; conftest.py).
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from triton.runtime.cache import FileCacheManager

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "kernels" / "hostile"
FILL = HOSTILE / "fill.py"

sys.path[:0] = [str(Path(__file__).resolve().parent)]
import triton_reference as ref  # noqa: E402

ALIGNED = 0x10000  # the stand-in address the CLI uses for `*T`
FILL_CALL = ["--target", "cuda:90", "--signature", "*fp32,100"]


def fp32():
    return ref.HostPointer(ALIGNED, "float32")


def load(path, name):
    """The module at `path` (str or bytes), imported under `name` so it never clashes."""
    spec = importlib.util.spec_from_file_location(name, os.fsdecode(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str
    pid: int


def tritonrt(cli, *args, cache, env=None):
    """Runs the tool with its own Triton cache; returns its status, output and process id."""
    environment = dict(os.environ, TRITON_CACHE_DIR=str(cache), TRITONRT_PYTHON=sys.executable)
    environment.pop("TRITONRT_LOG", None)  # the warnings checked below are on by default
    environment.update(env or {})
    # Popen, not run: the set-aside folder's name carries the process id.
    process = subprocess.Popen([str(cli), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
                               cwd=REPO)
    out, err = process.communicate(timeout=600)
    # A negative code is a signal: a crash is never a clear error.
    assert process.returncode >= 0, f"tritonrt died with signal {-process.returncode}:\n{err.decode(errors='replace')}"
    # stdout must be text a user's tools can read, whatever the input's bytes.
    return Result(process.returncode, out.decode("utf-8"), err.decode("utf-8", "backslashreplace"), process.pid)


@pytest.fixture
def run(cli, tmp_path):
    return lambda *args, env=None: tritonrt(cli, *args, cache=tmp_path / "triton-cache", env=env)


def field(stdout, label):
    """The value of one labelled line of `tritonrt compile` / `signature`."""
    found = re.findall(rf"^{re.escape(label)} +(.*)$", stdout, re.M)
    assert len(found) == 1, f"no single '{label}' line in:\n{stdout}"
    return found[0]


def parameters(stdout):
    """`tritonrt signature` parameter lines: name -> the words after it."""
    return {name: rest.split() for name, rest in re.findall(r"^\s+\d+\s+(\w+)(.*)$", stdout, re.M)}


def assert_no_python_noise(stderr):
    # Tracebacks and pybind11's exception dumps are Python's internals, not a message.
    for marker in ("Traceback", "At: <string>(", "Exception ignored"):
        assert marker not in stderr, f"{marker!r} in:\n{stderr}"
    assert not re.search(r"\[\w*(Error|Exception|Exit|Interrupt)\]", stderr), stderr


def assert_clear_error(result, status, *names):
    """`status`, nothing on stdout, and one 'tritonrt: ...' line naming each of `names`."""
    assert result.returncode == status, f"exit {result.returncode}, expected {status}:\n{result.stderr}"
    assert result.stdout == ""  # no half-printed report, nothing Triton printed
    # The first line of tritonrt's own (Triton may warn before it, and usage text follows).
    lines = [line for line in result.stderr.splitlines() if line.startswith("tritonrt: ")]
    assert lines, f"no 'tritonrt: ' message in:\n{result.stderr}"
    for name in names:
        assert name in lines[0], f"{name!r} not in the message:\n{lines[0]}"
    assert_no_python_noise(result.stderr)
    return lines[0]


# --- constexpr defaults of nan, inf and -inf ------------------------------------------------------


def test_signature_lists_nonfinite_defaults(run):
    result = run("signature", f"{HOSTILE / 'nonfinite_defaults.py'}:nonfinite")
    assert result.returncode == 0, result.stderr
    params = parameters(result.stdout)
    assert params["NAN"] == ["constexpr", "=", "nan"]
    assert params["INF"] == ["constexpr", "=", "inf"]
    assert params["NEG_INF"] == ["constexpr", "=", "-inf"]
    assert_no_python_noise(result.stderr)


def test_compile_with_nonfinite_defaults_gives_tritons_hash(run):
    result = run("compile", f"{HOSTILE / 'nonfinite_defaults.py'}:nonfinite", *FILL_CALL)  # defaults omitted
    assert result.returncode == 0, result.stderr
    fn = load(HOSTILE / "nonfinite_defaults.py", "hostile_nonfinite_defaults").nonfinite
    args = [fp32(), 100]
    assert field(result.stdout, "specialization") == ref.specialization(fn, args)
    assert "NAN:constexpr=nan INF:constexpr=inf NEG_INF:constexpr=-inf" in field(result.stdout, "signature")
    assert field(result.stdout, "hash") == ref.compiled_hash(fn, args, "cuda:90")


# --- numbers on the command line are strict -------------------------------------------------------


@pytest.mark.parametrize("option, value", [
    pytest.param("--num-warps", "4294967300", id="wraps-to-4"),
    pytest.param("--num-stages", "4294967297", id="wraps-to-1"),
    pytest.param("--num-stages", "", id="empty"),
    pytest.param("--num-warps", "-1", id="negative"),
    pytest.param("--num-warps", "4.0", id="float"),
])
def test_option_value_must_be_a_decimal_int_that_fits(run, option, value):
    result = run("compile", f"{FILL}:fill", *FILL_CALL, option, value)
    assert_clear_error(result, 2, option, f"'{value}'")


@pytest.mark.parametrize("token", [
    pytest.param("010", id="leading-zero"),  # Python rejects it (octal is 0o10)
    pytest.param("1__0", id="double-underscore"),
    pytest.param("18446744073709551616", id="2**64"),
    pytest.param("-9223372036854775809", id="-2**63-1"),
    pytest.param("abc", id="not-a-number"),
    pytest.param("--5.0", id="float-two-signs"),  # float() rejects it
    pytest.param("+-5e0", id="float-sign-after-sign"),
])
def test_signature_number_python_would_reject_is_a_usage_error(run, token):
    result = run("compile", f"{HOSTILE / 'integers.py'}:integers", "--target", "cuda:90", "--signature",
                 f"*fp32,{token},1,2,3,4,5,6,7,8,9")
    assert_clear_error(result, 2, f"'{token}'")


def test_signature_integers_read_as_python_reads_them(run):
    # 0o10 is 8, 0x10 16, 1_000 1000, -0 0; the range's ends fit u64 and i64. Runtime
    # parameters show the type and divisibility, constexpr ones the value itself.
    literals = ["0o10", "0x10", "1_000", "-0", "18446744073709551615", "-9223372036854775808"]
    values = [8, 16, 1000, 0, 2**64 - 1, -2**63]
    result = run("compile", f"{HOSTILE / 'integers.py'}:integers", "--target", "cuda:90", "--signature",
                 ",".join(["*fp32", *literals, *literals[:4]]))
    assert result.returncode == 0, result.stderr
    fn = load(HOSTILE / "integers.py", "hostile_integers").integers
    assert field(result.stdout, "specialization") == ref.specialization(fn, [fp32(), *values, *values[:4]])


# --- a damaged entry of Triton's cache is set aside and compiled again ----------------------------


class Entry(NamedTuple):
    cache: Path  # TRITON_CACHE_DIR
    folder: Path  # the entry's folder in it
    hash: str
    size: int  # the cubin's bytes


@pytest.fixture(scope="session")
def pristine(cli, tmp_path_factory):
    """fill compiled once by the tool into a cache of its own; tests damage copies of it."""
    cache = tmp_path_factory.mktemp("pristine-cache")
    result = tritonrt(cli, "compile", f"{FILL}:fill", *FILL_CALL, cache=cache)
    assert result.returncode == 0, result.stderr
    folder = Path(field(result.stdout, "stored in"))
    size = int(re.fullmatch(r"cubin, (\d+) bytes", field(result.stdout, "binary")).group(1))
    assert (folder / "fill.cubin").stat().st_size == size
    # The hash the damaged entries must come back with is Triton's own for the call.
    fn = load(FILL, "hostile_fill").fill
    assert field(result.stdout, "hash") == ref.compiled_hash(fn, [fp32(), 100], "cuda:90")
    return Entry(cache, folder, field(result.stdout, "hash"), size)


@pytest.fixture
def entry(pristine, tmp_path):
    """A copy of the pristine cache in this test's tmp_path, byte for byte what Triton writes there."""
    cache = tmp_path / "triton-cache"
    shutil.copytree(pristine.cache, cache)
    folder = cache / pristine.folder.name
    # Triton's group file lists its files by absolute path: point them at the copy.
    for group in folder.glob("__grp__*.json"):
        data = json.loads(group.read_text())
        data["child_paths"] = {name: str(folder / Path(path).name) for name, path in data["child_paths"].items()}
        group.write_text(json.dumps(data))
    return pristine._replace(cache=cache, folder=folder)


def edit_metadata(change):

    def damage(folder):
        path = folder / "fill.json"
        metadata = json.loads(path.read_text())
        change(metadata)
        path.write_text(json.dumps(metadata))

    return damage


def edit(name, make):
    """Replaces file `name` of the entry with make(its bytes)."""

    def damage(folder):
        path = folder / name
        path.write_bytes(make(path.read_bytes()))

    return damage


def contents(folder):
    return {path.name: path.read_bytes() for path in folder.iterdir()}


def kernel_entries(cache):
    """The folders of Triton's cache, but the one where tritonrt keeps Triton's triton_key()."""
    return sorted(p.name for p in cache.iterdir() if not (p / "triton_key.txt").exists())


def stamps(folder):
    return {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}


def triton_reads_damaged_group_files(tmp_path):
    """Whether Triton itself reads a garbage __grp__ file as a miss (and recompiles): from 3.9 on."""
    cache = FileCacheManager.__new__(FileCacheManager)  # no constructor: it reads TRITON_CACHE_DIR
    cache.cache_dir = str(tmp_path)
    (tmp_path / "__grp__probe.json").write_bytes(b"\x00 not json")
    try:
        return cache.get_group("probe.json") is None
    except ValueError:
        return False


GARBAGE_GROUP_FILE = edit("__grp__fill.json", lambda b: b"\x00 not json")

DAMAGE = [
    pytest.param(edit("fill.cubin", lambda b: b""), "binary is empty", id="cubin-emptied"),
    pytest.param(edit("fill.cubin", lambda b: bytes(range(256)) * (len(b) // 256 + 1)), "not an ELF image",
                 id="cubin-garbage"),
    pytest.param(edit("fill.cubin", lambda b: b[:100]), "cut short", id="cubin-cut-to-100-bytes"),
    pytest.param(edit_metadata(lambda m: m["target"].update(arch=80)), "cuda:80", id="arch-80"),
    pytest.param(edit_metadata(lambda m: m.update(shared=2**40)), "'shared'", id="shared-2**40"),
    pytest.param(edit_metadata(lambda m: m.update(num_warps=0)), "'num_warps'", id="num-warps-0"),
    pytest.param(edit_metadata(lambda m: m["target"].update(arch=True)), "target.arch", id="arch-true"),
    # Triton 3.9 itself fails on arch null; 3.6 reads it and tritonrt's check rejects it.
    pytest.param(edit_metadata(lambda m: m["target"].update(arch=None)), "target.arch|could not read",
                 id="arch-null"),
    # Triton itself fails reading these metadata files.
    pytest.param(edit("fill.json", lambda b: b""), "could not read", id="metadata-emptied"),
    pytest.param(edit("fill.json", lambda b: b[:len(b) // 2]), "could not read", id="metadata-truncated"),
    pytest.param(edit("fill.json", lambda b: b"\xff\xfe{ not json"), "could not read", id="metadata-garbage"),
    pytest.param(GARBAGE_GROUP_FILE, "could not read", id="group-file-garbage"),
]


def compile_fill(cli, entry, env=None):
    return tritonrt(cli, "compile", f"{FILL}:fill", *FILL_CALL, cache=entry.cache, env=env)


def assert_compiled_as_before(result, entry):
    assert result.returncode == 0, result.stderr
    assert field(result.stdout, "hash") == entry.hash
    assert field(result.stdout, "binary") == f"cubin, {entry.size} bytes"
    assert Path(field(result.stdout, "stored in")) == entry.folder
    assert (entry.folder / "fill.cubin").stat().st_size == entry.size


def warnings(stderr):
    return [line for line in stderr.splitlines() if line.startswith("tritonrt: warning:")]


@pytest.mark.parametrize("damage, reason", DAMAGE)
def test_damaged_cache_entry_is_set_aside_and_recompiled(cli, entry, damage, reason, tmp_path):
    damage(entry.folder)
    damaged = contents(entry.folder)
    second = compile_fill(cli, entry)
    assert_compiled_as_before(second, entry)
    moved = entry.folder.with_name(f"{entry.folder.name}.invalid-{second.pid}-0")
    if damage is GARBAGE_GROUP_FILE and triton_reads_damaged_group_files(tmp_path):
        # Triton >= 3.9 reads the unreadable group file as a miss and recompiles in place.
        assert kernel_entries(entry.cache) == [entry.folder.name]
        assert warnings(second.stderr) == []
        assert json.loads((entry.folder / "__grp__fill.json").read_text())["child_paths"]
    else:
        # Renamed beside itself, damage and all, for inspection.
        assert kernel_entries(entry.cache) == sorted([entry.folder.name, moved.name])
        assert contents(moved) == damaged
        [warning] = warnings(second.stderr)
        assert "'fill'" in warning and str(entry.folder) in warning
        assert f"set aside as {moved}" in warning
        assert "recompiling" in warning
        assert re.search(reason, warning), warning
    # A third compile finds the new entry: a plain hit that writes nothing and says nothing.
    before = stamps(entry.folder), kernel_entries(entry.cache)
    third = compile_fill(cli, entry)
    assert_compiled_as_before(third, entry)
    assert not [line for line in third.stderr.splitlines() if line.startswith("tritonrt:")], third.stderr
    assert (stamps(entry.folder), kernel_entries(entry.cache)) == before
    assert_no_python_noise(third.stderr)
    # Triton 3.9's CompiledKernel.__del__ fails on the object whose __init__ could not read the
    # entry; that 'Exception ignored' traceback must not reach the user.
    assert_no_python_noise(second.stderr)


def test_set_aside_warning_is_silenced_by_tritonrt_log_off(cli, entry):
    (entry.folder / "fill.cubin").write_bytes(b"")
    result = compile_fill(cli, entry, env={"TRITONRT_LOG": "off"})
    assert_compiled_as_before(result, entry)
    assert not [line for line in result.stderr.splitlines() if line.startswith("tritonrt:")], result.stderr
    assert "set aside" not in result.stderr
    # Still set aside, only silently.
    assert (entry.cache / f"{entry.folder.name}.invalid-{result.pid}-0").is_dir()


# --- Python's noise stays out ---------------------------------------------------------------------


@pytest.mark.parametrize("module, said", [
    pytest.param("exit_at_import.py", "SystemExit", id="sys.exit(3)"),
    pytest.param("interrupt_at_import.py", "KeyboardInterrupt", id="KeyboardInterrupt"),
    # os._exit would end tritonrt itself, with status 0 and no word.
    pytest.param("os_exit_at_import.py", "os._exit(0)", id="os._exit(0)"),
])
def test_module_ending_python_at_import_is_an_error(run, module, said):
    result = run("signature", f"{HOSTILE / module}:k")
    assert_clear_error(result, 1, str(HOSTILE / module), said)


def test_default_whose_repr_raises_is_shown_as_a_placeholder(run):
    result = run("signature", f"{HOSTILE / 'unprintable_default.py'}:k")
    assert result.returncode == 0, result.stderr
    params = parameters(result.stdout)
    assert list(params) == ["p", "n", "BLOCK", "EXTRA"]
    assert params["BLOCK"] == ["constexpr", "=", "16"]
    assert params["EXTRA"][:2] == ["constexpr", "="]
    shown = " ".join(params["EXTRA"][2:])
    assert "Unprintable" in shown and "repr" in shown  # names the type, says why
    assert "refuses" not in shown
    assert_no_python_noise(result.stderr)


@pytest.mark.parametrize("target", ["hip:gfxZZZ", "hip:gfx942:sramecc+"])
def test_malformed_hip_target_is_invalid(run, target):
    result = run("compile", f"{FILL}:fill", "--target", target, "--signature", "*fp32,100")
    assert_clear_error(result, 1, "invalid target", f"'{target}'")


def test_ptxas_failure_is_reported_on_stderr_only(run):
    # maxnreg 0 passes Triton's checks and fails in ptxas, whose report Triton prints.
    result = run("compile", f"{FILL}:fill", *FILL_CALL, "--maxnreg", "0")
    message = assert_clear_error(result, 1, "'fill'", "cuda:90")
    assert "Positive non-zero value expected for maxnreg" in message  # Triton's ptxas text


def test_kernel_file_whose_name_is_not_utf8(cli, entry, tmp_path, monkeypatch):
    path = os.fsencode(tmp_path) + b"/n\xffame.py"
    with open(path, "wb") as f:
        f.write(FILL.read_bytes())
    spec = path + b":fill"
    # Shown with the byte escaped, never as invalid text.
    signature = tritonrt(cli, "signature", spec, cache=entry.cache)
    assert signature.returncode == 0, signature.stderr
    assert field(signature.stdout, "kernel") == r"n\xffame.fill"
    assert field(signature.stdout, "file") == f"{tmp_path}/n\\xffame.py"
    assert list(parameters(signature.stdout)) == ["p", "n", "BLOCK"]
    assert_no_python_noise(signature.stderr)

    # Compiling it afresh does what Triton's own JIT does with the same file.
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "reference-cache"))  # a miss for Triton too
    try:
        expected = ref.compiled_hash(load(path, "hostile_not_utf8").fill, [fp32(), 100], "cuda:90")
    except TypeError:
        expected = None  # Triton 3.6 and 3.9 cannot: their MLIR locations take UTF-8 file names only
    fresh = tritonrt(cli, "compile", spec, *FILL_CALL, cache=tmp_path / "fresh-cache")
    if expected is None:
        assert_clear_error(fresh, 1, "'fill'", "cuda:90")
    else:
        assert fresh.returncode == 0, fresh.stderr
        assert field(fresh.stdout, "hash") == expected

    # Triton's cache key does not hold the file name: where the same kernel is cached (here
    # compiled from fill.py), compiling it from this file is a hit and works.
    compiled = tritonrt(cli, "compile", spec, *FILL_CALL, cache=entry.cache)
    assert compiled.returncode == 0, compiled.stderr
    assert field(compiled.stdout, "kernel") == r"n\xffame.fill"
    assert field(compiled.stdout, "hash") == entry.hash
    assert Path(field(compiled.stdout, "stored in")) == entry.folder
    assert_no_python_noise(compiled.stderr)
