"""The `tritonrt` tool used as a careless or hostile user would, each case a defect an earlier
version had (and that these tests reproduced on it):

- outputs are created, never clobbered: `bundle create` and `-o` refuse a device, FIFO,
  socket or folder where the file would go, and any path that leads into /dev;
- nothing makes it wait for ever or fill memory: a FIFO in the index or given as a calls file,
  a Python that never answers or never stops printing, a 100 GB sparse bundle, a 20 GB or
  endless file in place of an index record;
- the index lives where Triton's cache lives (never a shared folder), in folders private to
  the user;
- results on stdout are only results (what a kernel module prints goes to stderr), and a
  failed write to stdout is an error;
- a bundle crafted with valid checksums but a number no size can be (1e30) is refused, with
  no undefined behaviour (the sanitizer build runs this file too);
- every message names the file and the field, without a library's internal text or the
  compiler's IR (that only at TRITONRT_LOG=debug).
"""
import hashlib
import json
import os
import re
import resource
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HOSTILE = REPO / "tests" / "kernels" / "hostile"
FILL = f"{HOSTILE / 'fill.py'}:fill"
FILL_CALL = ["--target", "cuda:90", "--signature", "*fp32,100"]
IR_MARKERS = ("module attributes", "tt.func", "{-#")


def limited_memory():
    """Runs in the child before tritonrt: 4 GiB of address space, so that reading a huge file
    whole fails at once (an earlier version read a 20 GB file into memory). Not under
    AddressSanitizer, whose shadow memory alone is larger."""
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


class Result:
    """What a run of tritonrt did: its status, its output and its peak memory (KiB)."""

    def __init__(self, returncode, stdout, stderr, max_rss_kib):
        self.returncode, self.stdout, self.stderr, self.max_rss_kib = returncode, stdout, stderr, max_rss_kib


@pytest.fixture
def run(cli, tmp_path):

    def tritonrt(*args, env=None, cwd=None, stdout=None, timeout=300, memory=None):
        environment = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"),
                           TRITONRT_CACHE_DIR=str(tmp_path / "index"), TRITONRT_PYTHON=sys.executable)
        for variable in ("TRITONRT_INDEX", "TRITONRT_LOG", "TRITONRT_BUNDLE"):
            environment.pop(variable, None)
        for variable, value in (env or {}).items():
            if value is None:
                environment.pop(variable, None)
            else:
                environment[variable] = value
        # Output into files and the child waited for with wait4: its own peak memory is known.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            child = subprocess.Popen([str(cli), *map(str, args)], stdout=stdout or out, stderr=err, env=environment,
                                     cwd=cwd or tmp_path, preexec_fn=memory)
            deadline = time.monotonic() + timeout
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:  # a hang is a failure, never a test that does not end
                    child.kill()
                    child.wait()
                    pytest.fail(f"tritonrt {' '.join(map(str, args))} did not finish in {timeout} s")
                time.sleep(0.01)
            child.returncode = os.waitstatus_to_exitcode(status)
            assert child.returncode >= 0, f"tritonrt died with signal {-child.returncode}"
            out.seek(0)
            err.seek(0)
            return Result(child.returncode, None if stdout else out.read().decode("utf-8", "backslashreplace"),
                          err.read().decode("utf-8", "backslashreplace"), usage.ru_maxrss)

    return tritonrt


def hash_of(result):
    assert result.returncode == 0, result.stderr
    return re.search(r"^hash\s+(\S+)$", result.stdout, re.M).group(1)


def message(result):
    """tritonrt's own first line on stderr."""
    lines = [line for line in result.stderr.splitlines() if line.startswith("tritonrt: ")]
    assert lines, result.stderr
    return lines[0]


# --- outputs are created, not clobbered ------------------------------------------------------------


def not_regular_files(tmp_path):
    """(path, what it is, how to tell it is still that) for each kind that must never be replaced."""
    fifo = tmp_path / "fifo.trb"
    os.mkfifo(fifo)
    folder = tmp_path / "folder.trb"
    folder.mkdir()
    sock_path = tmp_path / "socket.trb"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    into_dev = tmp_path / "null.trb"
    into_dev.symlink_to("/dev/null")
    cases = [(fifo, stat.S_ISFIFO), (folder, stat.S_ISDIR), (sock_path, stat.S_ISSOCK)]
    device = tmp_path / "device.trb"
    try:
        os.mknod(device, stat.S_IFCHR | 0o644, os.makedev(1, 3))  # what /dev/null is
        cases.append((device, stat.S_ISCHR))
    except PermissionError:
        pass  # not root: the FIFO, folder and socket cases stand
    return cases, into_dev, sock


def test_bundle_create_never_replaces_what_is_not_a_regular_file(run, tmp_path):
    assert run("compile", FILL, *FILL_CALL).returncode == 0  # the index holds something to bundle
    cases, into_dev, sock = not_regular_files(tmp_path)
    with sock:
        for path, still in cases:
            result = run("bundle", "create", path)
            assert result.returncode == 1, result.stderr
            assert str(path) in message(result) and "replaces only regular files" in message(result)
            assert still(os.lstat(path).st_mode), f"{path} was replaced"
        result = run("bundle", "create", into_dev)
        assert result.returncode == 1 and "leads into /dev" in message(result)
        assert into_dev.is_symlink() and os.readlink(into_dev) == "/dev/null"
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_bundle_create_never_writes_through_a_link_planted_at_its_name(run, tmp_path):
    # In a folder others can write to, a link at the bundle's name must not choose what is replaced.
    assert run("compile", FILL, *FILL_CALL).returncode == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("not yours")
    planted = tmp_path / "shared" / "app.trb"
    planted.parent.mkdir()
    planted.symlink_to(victim)
    result = run("bundle", "create", planted)
    assert result.returncode == 1 and "is a symbolic link" in message(result), result.stderr
    assert victim.read_text() == "not yours" and planted.is_symlink()


def test_compile_output_never_replaces_what_is_not_a_regular_file(run, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "fill.cubin")
    result = run("compile", FILL, *FILL_CALL, "-o", out)
    assert result.returncode == 1 and "fill.cubin" in message(result) and "FIFO" in message(result)
    assert stat.S_ISFIFO(os.lstat(out / "fill.cubin").st_mode)
    assert not (out / "fill.json").exists()  # one refused path writes neither file
    (tmp_path / "dev-link").symlink_to("/dev")
    result = run("compile", FILL, *FILL_CALL, "-o", tmp_path / "dev-link")
    assert result.returncode == 1 and "leads into /dev" in message(result)
    result = run("compile", FILL, *FILL_CALL, "-o", tmp_path / "written")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "written").iterdir()) == ["fill.cubin", "fill.json"]


# --- nothing makes it wait for ever, or fill memory ------------------------------------------------


def index_files(tmp_path, suffix):
    return sorted(p for p in (tmp_path / "index").rglob(f"*{suffix}") if ".invalid-" not in p.name)


@pytest.mark.parametrize("replacement", ["fifo", "sparse-20GB", "link-to-dev-zero", "header-claims-too-much"])
@pytest.mark.parametrize("which", ["kernel", ".artifact"])
def test_an_index_file_that_is_not_a_record_is_set_aside_without_waiting(run, tmp_path, which, replacement):
    expected = hash_of(run("compile", FILL, *FILL_CALL))
    (path, ) = index_files(tmp_path, which)
    content = path.read_bytes()
    path.unlink()
    if replacement == "fifo":
        os.mkfifo(path)
    elif replacement == "sparse-20GB":
        with open(path, "wb") as f:
            f.truncate(20 << 30)
    elif replacement == "link-to-dev-zero":
        path.symlink_to("/dev/zero")
    else:
        header, rest = content.split(b"\n", 1)
        words = header.split()
        words[4] = b"99999999999"  # binary bytes
        path.write_bytes(b" ".join(words) + b"\n" + rest)
    result = run("compile", FILL, *FILL_CALL, timeout=120, memory=limited_memory)
    assert hash_of(result) == expected
    assert "is invalid" in result.stderr and "set aside" in result.stderr
    if "ASAN_OPTIONS" not in os.environ:  # AddressSanitizer's own memory is no measure
        assert result.max_rss_kib < 1 << 20, f"{result.max_rss_kib} KiB: the file was read into memory"


def cache_entry_of(result):
    return Path(re.search(r"^stored in\s+(\S+)$", result.stdout, re.M).group(1))


def test_a_fifo_in_tritons_cache_entry_is_set_aside_before_triton_reads_it(run, tmp_path):
    first = run("compile", FILL, *FILL_CALL, env={"TRITONRT_INDEX": "off"})
    entry = cache_entry_of(first)
    (entry / "fill.json").unlink()
    os.mkfifo(entry / "fill.json")  # a file Triton's group file lists: it would open it and wait
    result = run("compile", FILL, *FILL_CALL, env={"TRITONRT_INDEX": "off"}, timeout=120)
    assert hash_of(result) == hash_of(first)
    assert "'fill.json' in it is not a regular file" in result.stderr and "set aside" in result.stderr


def test_a_writers_folder_in_tritons_cache_entry_is_left_alone(run, tmp_path):
    # Triton writes a file into a tmp.pid_* folder of the entry, then renames it out: a
    # compile meanwhile must not take the entry for damaged (and move it from under the writer).
    first = run("compile", FILL, *FILL_CALL, env={"TRITONRT_INDEX": "off"})
    entry = cache_entry_of(first)
    (entry / "tmp.pid_1_writing").mkdir()
    result = run("compile", FILL, *FILL_CALL, env={"TRITONRT_INDEX": "off"})
    assert hash_of(result) == hash_of(first) and "set aside" not in result.stderr
    assert (entry / "tmp.pid_1_writing").is_dir()


def test_a_fifo_as_calls_file_is_refused(run, tmp_path):
    os.mkfifo(tmp_path / "calls.json")
    result = run("bundle", "create", tmp_path / "x.trb", "--calls", tmp_path / "calls.json", "--target", "cuda:90",
                 timeout=60)
    assert result.returncode == 2 and "calls.json: it is a FIFO" in message(result)


def stand_in_python(tmp_path, body):
    program = tmp_path / "stand-in-python"
    program.write_text(f"#!/bin/sh\n{body}\n")
    program.chmod(0o755)
    return program


def test_a_python_that_never_answers_is_given_up_on(run, tmp_path):
    program = stand_in_python(tmp_path, "sleep 600")
    result = run("compile", FILL, *FILL_CALL, env={"TRITONRT_PYTHON": str(program), "TRITONRT_PYTHON_TIMEOUT": "1",
                                                   "TRITONRT_INDEX": "off"}, timeout=60)
    assert result.returncode == 1
    assert f"{program} (TRITONRT_PYTHON): it did not answer within 1 s" in result.stderr


def test_a_python_that_never_stops_printing_is_given_up_on(run, tmp_path):
    program = stand_in_python(tmp_path, "exec yes")
    result = run("compile", FILL, *FILL_CALL, env={"TRITONRT_PYTHON": str(program), "TRITONRT_INDEX": "off"},
                 timeout=60)
    assert result.returncode == 1 and "bad_alloc" not in result.stderr
    assert f"{program} (TRITONRT_PYTHON): it printed more than" in result.stderr


def test_a_timeout_that_is_not_a_number_is_named(run):
    result = run("compile", FILL, *FILL_CALL, env={"TRITONRT_PYTHON_TIMEOUT": "soon", "TRITONRT_INDEX": "off"})
    assert result.returncode == 1 and "TRITONRT_PYTHON_TIMEOUT must be a number of seconds" in result.stderr


@pytest.mark.parametrize("start, says", [
    (b"", "does not start with a tritonrt-bundle header"),
    (b"tritonrt-bundle 3 99999999999 " + b"0" * 64 + b"\n", "claims a table larger than tritonrt reads"),
])
def test_a_huge_bundle_is_refused_by_its_header(run, tmp_path, start, says):
    bundle = tmp_path / "huge.trb"
    with open(bundle, "wb") as f:
        f.write(start)
        f.truncate(100 << 30)  # sparse: no disk, but a whole-file scan took minutes
    result = run("bundle", "list", bundle, timeout=60, memory=limited_memory)
    assert result.returncode == 1 and says in message(result)


# --- where the index lives -------------------------------------------------------------------------


def test_the_index_follows_tritons_cache_folder_and_is_private(run, tmp_path):
    home = tmp_path / "triton-home"
    env = {"HOME": None, "TRITON_HOME": str(home), "TRITON_CACHE_DIR": None, "TRITONRT_CACHE_DIR": None,
           "TRITONRT_LOG": "debug"}
    first = run("compile", FILL, *FILL_CALL, env=env)
    assert re.search(r"^stored in\s+" + re.escape(str(home / ".triton" / "cache")), first.stdout, re.M), first.stdout
    second = run("compile", FILL, *FILL_CALL, env=env)
    index = home / ".triton" / "cache" / "tritonrt"
    assert re.search(r"^stored in\s+" + re.escape(str(index)), second.stdout, re.M), second.stdout
    folders = [index, *(p for p in index.rglob("*") if p.is_dir())]
    assert len(folders) >= 3
    for folder in folders:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


# --- stdout holds results only, and a failed write is an error -------------------------------------


def test_json_output_is_only_json_when_a_kernel_module_prints(run):
    result = run("compile", f"{HOSTILE / 'noisy.py'}:noisy", "--target", "cuda:90", "--signature", "*i32", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["kernel"].endswith("noisy")
    assert "noisy.py says hello" in result.stderr


@pytest.mark.parametrize("args", [
    ["compile", FILL, *FILL_CALL, "--json"],
    ["signature", FILL],
    ["--help"],
])
def test_a_failed_write_to_stdout_is_an_error(run, args):
    with open("/dev/full", "wb") as full:
        result = run(*args, stdout=full)
    assert result.returncode == 1
    assert "could not write" in result.stderr and "standard output" in result.stderr


# --- a crafted bundle ------------------------------------------------------------------------------


def craft_bundle(bundle, edit_table=None, edit_entry=None):
    """Rewrites `bundle` with its first kernel's table line or entry edited, every checksum
    made right again: only the numbers are wrong."""
    data = bundle.read_bytes()
    header, rest = data.split(b"\n", 1)
    magic, version, table_bytes, _ = header.split()
    table = json.loads(rest[:int(table_bytes)])
    payload = rest[int(table_bytes):]
    line = table["kernels"][0]
    offset, size, _ = line["entry"]
    entry = json.loads(payload[offset:offset + size])
    if edit_entry:
        edit_entry(entry)
    text = json.dumps(entry).encode()
    payload = payload[:offset] + text + payload[offset + size:]
    line["entry"] = [offset, len(text), hashlib.sha256(text).hexdigest()]
    if edit_table:
        edit_table(line)
    table_text = json.dumps(table).encode()
    bundle.write_bytes(b" ".join([magic, version, str(len(table_text)).encode(),
                                  hashlib.sha256(table_text).hexdigest().encode()]) + b"\n" + table_text + payload)


@pytest.mark.parametrize("where, field", [("entry", "size"), ("entry", "offset"), ("table", "bytes")])
def test_a_crafted_bundle_with_an_impossible_size_is_refused(run, tmp_path, where, field):
    assert run("compile", FILL, *FILL_CALL).returncode == 0
    bundle = tmp_path / "crafted.trb"
    assert run("bundle", "create", bundle).returncode == 0
    assert run("bundle", "list", bundle, "--verify").returncode == 0

    def impossible(obj):
        obj[field] = 1e30

    if where == "entry":
        craft_bundle(bundle, edit_entry=lambda entry: impossible(entry["artifacts"][0]))
    else:
        craft_bundle(bundle, edit_table=impossible)
    result = run("bundle", "list", bundle, "--verify")
    assert result.returncode == 1
    assert f"field '{field}' should be an integer" in message(result) and "json.exception" not in result.stderr


# --- messages that name what is wrong ----------------------------------------------------------------


@pytest.mark.parametrize("content, says", [
    (None, "calls.json: it is a directory"),
    ("[{\"kernel\": ", "is not valid JSON (it ends too early)"),
    ("[{\"kernel\": x}]", "is not valid JSON (line 1, column 13, at 'x')"),
    ('[{"kernel": "k.py:k", "signature": "1", "options": {"num_warps": 99999999999}}]',
     "call 1 has option 'num_warps', which must be an integer from 0 to 2147483647, got 99999999999"),
    ('[{"kernel": "nocolon", "signature": "1"}]', "call 1 has \"kernel\" 'nocolon', which is not SOURCE:KERNEL"),
])
def test_calls_file_problems_name_the_file_the_call_and_the_field(run, tmp_path, content, says):
    calls = tmp_path / "calls.json"
    if content is None:
        calls.mkdir()
    else:
        calls.write_text(content)
    result = run("bundle", "create", tmp_path / "x.trb", "--calls", calls, "--target", "cuda:90")
    assert result.returncode == 2
    assert says in message(result) and str(calls) in message(result)
    assert "json.exception" not in result.stderr and "basic_filebuf" not in result.stderr
    assert "--num-warps" not in result.stderr


def test_a_program_that_is_not_python_is_named_as_such(run):
    result = run("compile", FILL, *FILL_CALL, env={"TRITONRT_PYTHON": "/bin/echo", "TRITONRT_INDEX": "off"})
    assert result.returncode == 1
    assert "/bin/echo (TRITONRT_PYTHON): it did not answer as Python does" in result.stderr


def test_a_python_named_without_a_folder_is_found_on_path(run):
    bin_dir, name = os.path.split(sys.executable)
    env = {"TRITONRT_PYTHON": name, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TRITONRT_INDEX": "off",
           "TRITONRT_LOG": "debug"}
    found = run("compile", FILL, *FILL_CALL, env=env)
    assert found.returncode == 0, found.stderr
    assert f"embedding {sys.executable} (TRITONRT_PYTHON={name}, on PATH)" in found.stderr
    missing = run("compile", FILL, *FILL_CALL, env={**env, "TRITONRT_PYTHON": "no-such-python"})
    assert missing.returncode == 1 and "no-such-python (TRITONRT_PYTHON): it is not on PATH" in missing.stderr


@pytest.mark.parametrize("args, says", [
    (["compile", FILL, "--target", "", "--signature", "*fp32,100"], "--target needs a target"),
    (["-x", "compile"], "unknown option '-x'"),
    (["compile", "-x"], "unknown option '-x'"),
    (["bundle", "list", "-x"], "unknown option '-x'"),
])
def test_command_line_mistakes_are_named(run, args, says):
    result = run(*args)
    assert result.returncode == 2 and says in message(result)


def test_every_bad_bundle_of_the_environment_is_named(run, tmp_path):
    result = run("compile", FILL, *FILL_CALL,
                 env={"TRITONRT_BUNDLE": f"{tmp_path / 'first.trb'}:{tmp_path / 'second.trb'}"})
    assert result.returncode == 1
    assert "first.trb" in message(result) and "second.trb" in message(result)


@pytest.mark.parametrize("kernel, target, options, said", [
    (FILL, "hip:gfx9999", [], "error: unsupported target: 'gfx9999'"),
    (f"{HOSTILE / 'scan.py'}:scan", "cuda:90", ["--num-ctas", "3"], "Assertion `llvm::isPowerOf2_32(size)' failed"),
])
def test_a_compiler_failure_is_told_in_a_line_and_its_ir_only_at_debug(run, kernel, target, options, said):
    args = ["compile", kernel, "--target", target, "--signature", "*fp32,100,1024", *options]
    result = run(*args)
    assert result.returncode == 1
    assert said in message(result) and "TRITONRT_LOG=debug" in message(result)
    assert not any(marker in result.stderr for marker in IR_MARKERS), result.stderr
    assert len(result.stderr.splitlines()) <= 3, result.stderr
    debug = run(*args, env={"TRITONRT_LOG": "debug"})
    assert any(marker in debug.stderr for marker in IR_MARKERS)


@pytest.mark.parametrize("make, says", [
    (lambda p: p.mkdir(), "is a directory, not a .py file"),
    (lambda p: os.mkfifo(p), "is a FIFO, not a .py file"),
])
def test_a_kernel_source_that_is_not_a_file_says_what_it_is(run, tmp_path, make, says):
    source = tmp_path / "kernel.py"
    make(source)
    result = run("signature", f"{source}:k", timeout=60)
    assert result.returncode == 1 and says in message(result)
    result = run("signature", "/dev/null:k")
    assert result.returncode == 1 and "'/dev/null' is a device, not a .py file" in message(result)


# --- what a kernel module does to the process that imports it ------------------------------------

def chatty_kernel(tmp_path, before=""):
    """A kernel module that prints at import (and runs `before` first)."""
    path = tmp_path / "chatty.py"
    path.write_text(f"{before}\nprint('printed by the module')\nimport triton\nimport triton.language as tl\n\n\n"
                    "@triton.jit\ndef fill(p, n):\n    tl.store(p + tl.arange(0, 128), 1.0, mask=tl.arange(0, 128) < n)\n")
    return f"{path}:fill"


def test_a_background_child_of_a_kernel_module_does_not_hold_the_results_open(cli, tmp_path):
    # $(tritonrt compile ...) reads until every holder of the pipe has closed it.
    # Started by a shell, which passes on every descriptor not marked close-on-exec.
    kernel = chatty_kernel(tmp_path, "import os\nos.system('sleep 60 >/dev/null 2>&1 &')")
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"), TRITONRT_INDEX="off",
               TRITONRT_PYTHON=sys.executable)
    with tempfile.TemporaryFile() as err:  # standard output alone is read, as $(...) reads it
        done = subprocess.run([str(cli), "compile", kernel, *FILL_CALL], stdout=subprocess.PIPE, stderr=err,
                              text=True, env=env, timeout=45)
    assert done.returncode == 0
    assert "hash" in done.stdout


def test_json_stays_json_with_standard_error_closed(cli, tmp_path):
    kernel = chatty_kernel(tmp_path)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"), TRITONRT_INDEX="off",
               TRITONRT_PYTHON=sys.executable)
    done = subprocess.run([str(cli), "compile", kernel, *FILL_CALL, "--json"], stdout=subprocess.PIPE, text=True,
                          env=env, timeout=300, preexec_fn=lambda: os.close(2))
    assert done.returncode == 0
    assert json.loads(done.stdout)["hash"]


def test_a_module_that_changes_the_working_folder_moves_no_output(cli, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kernel = chatty_kernel(tmp_path, f"import os\nos.chdir({str(elsewhere)!r})")
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "triton"), TRITONRT_INDEX="off",
               TRITONRT_PYTHON=sys.executable)
    done = subprocess.run([str(cli), "compile", kernel, *FILL_CALL, "-o", "out"], capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "fill.json").is_file() and not (elsewhere / "out").exists()


def test_bundle_list_of_a_fifo_does_not_wait_for_a_writer(run, tmp_path):
    fifo = tmp_path / "bundle.trb"
    os.mkfifo(fifo)
    result = run("bundle", "list", fifo, timeout=60)
    assert result.returncode == 1 and "FIFO" in result.stderr, result.stderr


def sparse_elf(path, section_bytes):
    """A 64-bit ELF file whose .tritonrt_bundles section is `section_bytes` of a hole (zeros)."""
    import struct
    names = b"\0.shstrtab\0.tritonrt_bundles\0"
    header = bytearray(64)
    header[0:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HHIQQQIHHHHHH", header, 16, 3, 62, 1, 0, 0, 128, 0, 64, 0, 0, 64, 3, 1)

    def section(name, kind, offset, size):
        return struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, offset, size, 0, 0, 1, 0)

    with open(path, "wb") as f:
        f.write(header + names.ljust(64, b"\0"))
        f.write(section(0, 0, 0, 0) + section(1, 3, 64, len(names)) + section(11, 1, 4096, section_bytes))
        f.truncate(4096 + section_bytes)


def test_a_huge_sparse_bundle_section_is_neither_read_whole_nor_copied(run, tmp_path):
    path = tmp_path / "sparse.elf"
    sparse_elf(path, 1 << 30)
    result = run("bundle", "list", path, timeout=60, memory=limited_memory)
    assert result.returncode == 0 and "embeds 0 bundles" in result.stdout, result.stderr
    if "ASAN_OPTIONS" not in os.environ:  # AddressSanitizer's own memory is no measure
        # The section alone is 1 GiB (read and copied, 2 GiB); the forked test runner's own pages count too.
        assert result.max_rss_kib < 1 << 20, f"{result.max_rss_kib} KiB: the section was read into memory"
