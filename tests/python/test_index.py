"""tritonrt's own index (src/store/index.h), seen through the CLI: what a later process gets
without Python, what makes a record stale, damaged files, and many processes writing at once.
(tests/cpu/test_index.cpp checks a process that cannot load Python at all.)"""
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "tests" / "kernels"
PLAIN = '*fp32,*fp32:unaligned,4096,1,0.5,True,None,{block},"fast"'
SERVED = "loaded from the index, without Python"
NO_PYTHON = {"TRITONRT_LIBPYTHON": "/nonexistent/libpython-for-this-test.so", "TRITONRT_PYTHON": ""}


@pytest.fixture
def scratch(tmp_path):
    shutil.copy(KERNELS / "signatures.py", tmp_path / "signatures.py")
    shutil.copytree(KERNELS / "pkg", tmp_path / "pkg")
    return tmp_path


def tritonrt(cli, scratch, *args, env=None):
    environment = dict(os.environ, TRITON_CACHE_DIR=str(scratch / "triton"), TRITONRT_CACHE_DIR=str(scratch / "index"),
                       TRITONRT_PYTHON=sys.executable, TRITONRT_LOG="debug")
    environment.pop("TRITONRT_INDEX", None)  # conftest.py turns it off for the other tests
    environment.update(env or {})
    result = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, env=environment, timeout=600)
    assert result.returncode >= 0, f"tritonrt died with signal {-result.returncode}:\n{result.stderr}"
    return result


def compile_plain(cli, scratch, block=64, env=None):
    return tritonrt(cli, scratch, "compile", f"{scratch / 'signatures.py'}:plain", "--target", "cuda:90",
                    "--signature", PLAIN.format(block=block), env=env)


def compile_double(cli, scratch, env=None):
    return tritonrt(cli, scratch, "compile", f"{scratch / 'pkg' / 'scale.py'}:double_kernel", "--target", "cuda:90",
                    "--signature", "*fp32,4096,256", env=env)


def hash_of(result):
    assert result.returncode == 0, result.stderr
    return re.search(r"^hash\s+(\S+)$", result.stdout, re.M).group(1)


def index_files(scratch):
    return sorted(p for p in (scratch / "index").rglob("*") if p.is_file())


def test_a_second_process_is_served_without_python(cli, scratch):
    first = compile_plain(cli, scratch)
    assert SERVED not in first.stderr
    second = compile_plain(cli, scratch, env=NO_PYTHON)
    assert SERVED in second.stderr
    assert "artifact for cuda:90 found in the index" in second.stderr
    assert hash_of(second) == hash_of(first)
    assert re.search(r"^stored in\s+" + re.escape(str(scratch / "index")), second.stdout, re.M)


def test_an_edited_helper_recompiles_and_is_indexed_again(cli, scratch):
    before = hash_of(compile_double(cli, scratch))
    helpers = scratch / "pkg" / "helpers.py"
    helpers.write_text(helpers.read_text().replace("return x + x", "return x * 2"))
    artifacts = {p for p in index_files(scratch) if p.suffix == ".artifact"}
    assert len(artifacts) == 1
    # What writers that died left behind: gone once older than ten minutes.
    kernel_dir = next(iter(artifacts)).parent
    dead, live = kernel_dir / "kernel.tmp-1-0", kernel_dir / "kernel.tmp-2-0"
    dead.write_text("half")
    live.write_text("half")
    os.utime(dead, (time.time() - 3600, time.time() - 3600))
    edited = compile_double(cli, scratch)
    assert not dead.exists() and live.exists()
    assert f"'{helpers}' changed since it was compiled" in edited.stderr
    assert hash_of(edited) != before  # Triton's own key changed with the helper's source
    # The earlier sources' artifact is removed as the new record is written.
    assert {p for p in index_files(scratch) if p.suffix == ".artifact"}.isdisjoint(artifacts)
    again = compile_double(cli, scratch, env=NO_PYTHON)
    assert SERVED in again.stderr
    assert hash_of(again) == hash_of(edited)


def starting_python_runs(scratch, code):
    """The environment under which `code` runs as a CLI process starts Python (sitecustomize),
    which it does only for a call that needs Python, after it read the index."""
    hooks = scratch / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(code)
    return {"PYTHONPATH": str(hooks)}


def doubled(text):
    edited = text.replace("tl.load(q + offs, mask=offs < n)", "tl.load(q + offs, mask=offs < n) * 2")
    assert edited != text
    return edited


def test_a_file_edited_before_python_imports_it_files_nothing_under_the_older_record(cli, scratch):
    # A process is served the kernel's description from the index and needs Python only for a
    # call the index holds no binary for; the file changed in between, so Python compiles code
    # the record does not name: nothing of it may be filed under that record, for a later
    # process with the recorded file.
    source = scratch / "signatures.py"
    recorded = source.read_text()
    hash_of(compile_plain(cli, scratch, block=64))
    edit = starting_python_runs(scratch, f"import pathlib\npathlib.Path({str(source)!r}).write_text({doubled(recorded)!r})\n")
    late = compile_plain(cli, scratch, block=128, env=edit)
    assert SERVED in late.stderr and source.read_text() == doubled(recorded)
    assert hash_of(late) == hash_of(compile_plain(cli, scratch, block=128, env={"TRITONRT_INDEX": "off"}))
    assert f"changed since this process read it from the index ('{source}' changed since it was compiled)" in late.stderr
    source.write_text(recorded)
    expected = hash_of(compile_plain(cli, scratch, block=128, env={"TRITONRT_INDEX": "off"}))
    assert hash_of(compile_plain(cli, scratch, block=128)) == expected


def test_a_module_imported_before_its_file_was_recorded_files_nothing_under_the_record(cli, scratch):
    # The process imported the kernel's module before its file was edited (and recorded so by
    # another process); read from the index, the kernel is compiled by Python from the older
    # module this process holds, which is not the code the record names.
    source = scratch / "signatures.py"
    older = source.read_text()
    source.write_text(doubled(older))
    hash_of(compile_plain(cli, scratch, block=64))
    imported_older = starting_python_runs(
        scratch, f"import pathlib, sys\nsys.path.insert(0, {str(scratch)!r})\n"
        f"pathlib.Path({str(source)!r}).write_text({older!r})\nimport signatures\n"
        f"pathlib.Path({str(source)!r}).write_text({doubled(older)!r})\n")
    late = compile_plain(cli, scratch, block=128, env=imported_older)
    assert SERVED in late.stderr and source.read_text() == doubled(older)
    expected = hash_of(compile_plain(cli, scratch, block=128, env={"TRITONRT_INDEX": "off"}))
    assert hash_of(late) != expected
    assert hash_of(compile_plain(cli, scratch, block=128)) == expected
    assert "changed since this process read it from the index" in late.stderr
    assert "tritonrt did not see the code of module 'signatures' run" in late.stderr


def test_a_constexpr_imported_from_another_module_is_a_dependency(cli, scratch):
    # `from .consts import SCALE`: Triton's key holds SCALE's value; the index must notice
    # when consts.py changes it, though the kernel's own file is unchanged.
    package = scratch / "constpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "consts.py").write_text("import triton.language as tl\n\nSCALE = tl.constexpr(2)\n")
    (package / "kern.py").write_text(
        "import triton\nimport triton.language as tl\n\nfrom .consts import SCALE\n\n\n"
        "@triton.jit\ndef scaled(p, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n"
        "    tl.store(p + offs, tl.load(p + offs, mask=offs < n) * SCALE, mask=offs < n)\n")

    def compile_scaled(env=None):
        return tritonrt(cli, scratch, "compile", f"{package / 'kern.py'}:scaled", "--target", "cuda:90",
                        "--signature", "*fp32,100,128", env=env)

    before = hash_of(compile_scaled())
    assert SERVED in compile_scaled(env=NO_PYTHON).stderr
    (package / "consts.py").write_text("import triton.language as tl\n\nSCALE = tl.constexpr(3)\n")
    changed = compile_scaled()
    assert f"'{package / 'consts.py'}' changed since it was compiled" in changed.stderr
    assert hash_of(changed) != before


def test_without_python_an_edited_kernel_is_an_error_naming_the_file(cli, scratch):
    hash_of(compile_plain(cli, scratch))
    source = scratch / "signatures.py"
    source.write_text(source.read_text() + "\n# edited\n")
    result = compile_plain(cli, scratch, env=NO_PYTHON)
    assert result.returncode == 1
    assert f"'{source}' changed since it was compiled" in result.stderr
    assert "Python is unavailable" in result.stderr


def test_a_changed_triton_environment_variable_makes_the_record_stale(cli, scratch):
    hash_of(compile_plain(cli, scratch))
    result = compile_plain(cli, scratch, env={"TRITON_DEFAULT_FP_FUSION": "0"})
    assert "the environment variable TRITON_DEFAULT_FP_FUSION changed" in result.stderr
    hash_of(result)


def test_where_triton_keeps_its_cache_does_not_make_the_record_stale(cli, scratch):
    first = hash_of(compile_plain(cli, scratch))
    # Another cache folder, and Python unavailable: only the index can serve this.
    moved = compile_plain(cli, scratch, env={**NO_PYTHON, "TRITON_CACHE_DIR": str(scratch / "elsewhere"),
                                             "TRITON_PRINT_AUTOTUNING": "1"})
    assert moved.returncode == 0, moved.stderr
    assert hash_of(moved) == first


def test_a_call_not_in_the_index_names_kernel_and_specialization_without_python(cli, scratch):
    hash_of(compile_plain(cli, scratch, block=64))
    result = compile_plain(cli, scratch, block=32, env=NO_PYTHON)
    assert result.returncode == 1
    assert "kernel 'plain'" in result.stderr
    assert "('constexpr', 32)" in result.stderr  # the specialization, as Triton prints it
    assert "Python is unavailable" in result.stderr


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "foreign"])
@pytest.mark.parametrize("which", ["kernel", "artifact"])
def test_damaged_index_files_are_set_aside_and_rebuilt(cli, scratch, which, damage):
    expected = hash_of(compile_plain(cli, scratch))
    [path] = [p for p in index_files(scratch) if (p.name if which == "kernel" else p.suffix[1:]) == which]
    data = path.read_bytes()
    path.write_bytes({
        "truncate": data[:len(data) // 2],
        "flip": data[:-100] + bytes([data[-100] ^ 1]) + data[-99:],
        "empty": b"",
        "foreign": b"tritonrt-index 7 kernel 2 0 00\n{}",
    }[damage])
    result = compile_plain(cli, scratch)
    assert hash_of(result) == expected
    [warning] = [line for line in result.stderr.splitlines() if line.startswith("tritonrt: warning:")]
    assert f"its index file {path} is invalid" in warning and "set aside as" in warning
    # Rebuilt: the next process is served again, without Python.
    assert SERVED in compile_plain(cli, scratch, env=NO_PYTHON).stderr


def test_sixteen_processes_writing_at_once_leave_every_entry_whole(cli, scratch):
    # Eight specializations, each compiled by two processes at the same time.
    blocks = [16, 32, 64, 128, 256, 512, 1024, 2048] * 2
    with ThreadPoolExecutor(len(blocks)) as pool:
        hashes = list(pool.map(lambda block: hash_of(compile_plain(cli, scratch, block=block)), blocks))
    assert hashes[:8] == hashes[8:]
    assert not [p for p in index_files(scratch) if ".tmp-" in p.name or ".invalid-" in p.name]
    # Every entry whole: each call is served again, without Python.
    for block, expected in zip(blocks[:8], hashes):
        again = compile_plain(cli, scratch, block=block, env=NO_PYTHON)
        assert hash_of(again) == expected


@pytest.mark.parametrize("setting", ["off", "OFF", "0", "false", "No"])
def test_the_index_is_off_by_any_spelling_of_off(cli, scratch, setting):
    hash_of(compile_plain(cli, scratch, env={"TRITONRT_INDEX": setting}))
    assert index_files(scratch) == []


def test_a_switch_that_is_no_switch_is_said_and_taken_as_the_default(cli, scratch):
    result = compile_plain(cli, scratch, env={"TRITONRT_INDEX": "maybe"})
    assert "TRITONRT_INDEX=maybe is not a switch tritonrt reads" in result.stderr
    assert index_files(scratch) != []


@pytest.mark.parametrize("owner", ["another user", "everyone"])
def test_an_index_folder_others_can_write_is_not_used(cli, scratch, owner):
    index = scratch / "index"
    index.mkdir(mode=0o700)
    if owner == "everyone":
        index.chmod(0o777)
    elif os.geteuid() == 0:
        os.chown(index, 65534, 65534)
    else:
        pytest.skip("only root can give a folder to another user")
    result = compile_plain(cli, scratch)
    assert "tritonrt's index is off: its folder" in result.stderr
    assert ("belongs to another user" if owner == "another user" else "can be written by others") in result.stderr
    assert hash_of(result) and index_files(scratch) == []


def test_an_index_folder_that_is_a_file_is_said_so(cli, scratch):
    (scratch / "index").write_text("not a folder")
    result = compile_plain(cli, scratch)
    assert f"tritonrt's index is off: {scratch / 'index'} is not a folder" in result.stderr
    assert hash_of(result) and "it was gone" not in result.stderr
