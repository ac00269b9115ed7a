"""What an index record names, observed while Python imported and described the kernel
(src/python_compiler/bridge/observe.py, record_inputs.py): each way a later process could be served a binary of code
its files no longer hold, with tritonrt's answer compared with Triton's own (the index off)
after an edit between processes."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_index import NO_PYTHON, SERVED, hash_of, scratch, tritonrt  # noqa: F401 (scratch: a fixture)

KERNEL_HEAD = "import triton\nimport triton.language as tl\n"
STORE = "    tl.store(p + offs, tl.load(p + offs, mask=offs < n) * {}, mask=offs < n)\n"


def compile_in(cli, scratch, kernel, signature, env=None):
    return tritonrt(cli, scratch, "compile", kernel, "--target", "cuda:90", "--signature", signature, env=env)


def agrees_with_triton(cli, scratch, kernel, signature, env=None):
    """Compiles with the index and without it; the hashes must agree. Returns the index's run."""
    ours = compile_in(cli, scratch, kernel, signature, env)
    theirs = compile_in(cli, scratch, kernel, signature, {**(env or {}), "TRITONRT_INDEX": "off"})
    assert hash_of(ours) == hash_of(theirs), ours.stderr
    return ours


def edit_between_processes(cli, scratch, kernel, signature, path, before, after, env=None):
    """Records the kernel with `path` holding `before`, checks a second process is served from
    the index, writes `after`, and checks the next process agrees with Triton."""
    path.write_text(before)
    first = agrees_with_triton(cli, scratch, kernel, signature, env)
    assert "not indexed" not in first.stderr, first.stderr
    assert SERVED in compile_in(cli, scratch, kernel, signature, {**(env or {}), **NO_PYTHON}).stderr
    path.write_text(after)
    edited = agrees_with_triton(cli, scratch, kernel, signature, env)
    assert hash_of(edited) != hash_of(first)
    return edited


def test_a_helper_called_through_a_dotted_module_path(cli, scratch):
    package = scratch / "dotted"
    package.mkdir()
    (package / "__init__.py").write_text("from . import sub\n")
    helper = "@triton.jit\ndef helper(x):\n    return x * {}\n"
    (scratch / "dotted_kernel.py").write_text(
        KERNEL_HEAD + "import dotted\n\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n" + STORE.format("0 + dotted.sub.helper(1.0)"))
    edit_between_processes(cli, scratch, f"{scratch / 'dotted_kernel.py'}:kern", "*fp32,100,128", package / "sub.py",
                           KERNEL_HEAD + helper.format(2), KERNEL_HEAD + helper.format(3))


def test_a_helper_imported_inside_a_function_of_a_module_that_renamed_itself(cli, scratch):
    # The observer finds an import's importer by the module's name first; a module that changed
    # its __name__ is found all the same, and what it imports is named in its record.
    (scratch / "renamed_kernel.py").write_text(
        KERNEL_HEAD + "__name__ = 'not_its_file_name'\n\n\ndef scale():\n    from renamed_helper import SCALE\n"
        "    return SCALE\n\n\nSCALE = scale()\n\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n" + STORE.format("SCALE"))
    config = "import triton.language as tl\nSCALE = tl.constexpr({})\n"
    edit_between_processes(cli, scratch, f"{scratch / 'renamed_kernel.py'}:kern", "*fp32,100,128",
                           scratch / "renamed_helper.py", config.format(2), config.format(5))


def run_under_the_observer(tritonrt_package, scratch, program):
    """`program` in a Python of its own, with the package and `scratch` importable and the index
    on (the observer runs with it); its output."""
    package = Path(tritonrt_package.__file__).parents[1]
    environment = {k: v for k, v in os.environ.items() if k != "TRITONRT_INDEX"}
    run = subprocess.run([sys.executable, "-c", "import sys\nsys.path[:0] = [sys.argv[1], sys.argv[2]]\n" + program,
                          str(package), str(scratch)], capture_output=True, text=True, env=environment, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.split()


def test_an_import_statement_run_again_raises_no_audit_event(tritonrt_package, scratch):
    # id() is audited: every audit hook of the process (the observer's is one) runs on each call
    # of it. Under the observer, an import inside a function, run call after call (Triton's
    # triton.cdiv does one), looks its module up without it, whether or not it was observed.
    (scratch / "imports_in_a_function.py").write_text("def f():\n    import os\n    return os\n")
    out = run_under_the_observer(tritonrt_package, scratch, (
        "import tritonrt\nimport imports_in_a_function as observed\n"
        "def unobserved():\n    import os\n    return os\n"
        "observed.f(); unobserved()\n"
        "events = []\nsys.addaudithook(lambda event, args: events.append(event))\n"
        "for _ in range(100):\n    observed.f(); unobserved()\n"
        "observer = sys.modules['_tritonrt_observer']\n"
        "print(sum(e == 'builtins.id' for e in events), id(observed.__dict__) in observer.modules)\n"))
    assert out == ["0", "True"]


def test_a_module_found_unobserved_then_executed_again_is_followed(tritonrt_package, scratch):
    # Found unobserved under the name it gave itself, then reloaded under the observer (which
    # names it by its spec) and renamed again: its imports are its execution's, not forgotten.
    (scratch / "renames_itself.py").write_text("__name__ = 'another_name'\n\n\ndef f():\n    import json\n"
                                               "    return json\n")
    out = run_under_the_observer(tritonrt_package, scratch, (
        "import importlib\nimport renames_itself\nimport tritonrt\n"
        "observer = sys.modules['_tritonrt_observer']\n"
        "renames_itself.f()\nbefore = observer._module_of(renames_itself.__dict__)\n"
        "importlib.reload(renames_itself)\nrenames_itself.f()\n"
        "print(before is None, observer._module_of(renames_itself.__dict__) is not None)\n"))
    assert out == ["True", "True"]


CONSTANT_USES = {
    "imported under another name": ("from cfgmod import VAL as SCALE\n", "SCALE"),
    "computed from another module's value": ("import cfgmod\nSCALE = tl.constexpr(cfgmod.VAL.value + 1)\n", "SCALE"),
}


@pytest.mark.parametrize("use", CONSTANT_USES)
def test_a_constexpr_from_another_module(cli, scratch, use):
    head, name = CONSTANT_USES[use]
    (scratch / "const_kernel.py").write_text(
        KERNEL_HEAD + head + "\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n" + STORE.format(name))
    config = "import triton.language as tl\nVAL = tl.constexpr({})\n"
    edit_between_processes(cli, scratch, f"{scratch / 'const_kernel.py'}:kern", "*fp32,100,128",
                           scratch / "cfgmod.py", config.format(2), config.format(5))


def test_a_default_taken_from_another_module(cli, scratch):
    (scratch / "default_kernel.py").write_text(
        KERNEL_HEAD + "import cfgmod\n\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr = cfgmod.BLOCK):\n"
        "    offs = tl.arange(0, BLOCK)\n" + STORE.format(2))
    edit_between_processes(cli, scratch, f"{scratch / 'default_kernel.py'}:kern", "*fp32,100",
                           scratch / "cfgmod.py", "BLOCK = 64\n", "BLOCK = 128\n")


def configs_shown(cli, scratch, kernel, env=None):
    result = tritonrt(cli, scratch, "signature", kernel, env=env)
    assert result.returncode == 0, result.stderr
    return int(re.search(r"autotune: (\d+) configs?", result.stdout).group(1))


def test_autotune_configs_built_in_another_module(cli, scratch):
    (scratch / "tuned_kernel.py").write_text(
        KERNEL_HEAD + "import cfgmod\n\n\n@triton.autotune(configs=cfgmod.CONFIGS, key=['n'])\n"
        "@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n" + STORE.format(2))
    configs = "import triton\nCONFIGS = [{}]\n"
    one, two = "triton.Config({'BLOCK': 64})", "triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})"
    kernel = f"{scratch / 'tuned_kernel.py'}:kern"
    (scratch / "cfgmod.py").write_text(configs.format(one))
    assert configs_shown(cli, scratch, kernel) == 1
    assert SERVED in tritonrt(cli, scratch, "signature", kernel, env=NO_PYTHON).stderr
    (scratch / "cfgmod.py").write_text(configs.format(two))
    assert configs_shown(cli, scratch, kernel) == 2
    assert configs_shown(cli, scratch, kernel, env={"TRITONRT_INDEX": "off"}) == 2


def test_kernels_of_two_folders_each_with_its_own_helpers(cli, scratch):
    # One process compiles both: the second folder's `import helpers` finds the first folder's
    # module, which a process compiling the second alone would not import.
    calls = []
    for folder, factor in (("first", 2), ("second", 3)):
        (scratch / folder).mkdir()
        (scratch / folder / "helpers.py").write_text(KERNEL_HEAD + f"FACTOR = tl.constexpr({factor})\n")
        (scratch / folder / "kern.py").write_text(
            KERNEL_HEAD + "from helpers import FACTOR\n\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.arange(0, BLOCK)\n" + STORE.format("FACTOR"))
        calls.append({"kernel": f"{scratch / folder / 'kern.py'}:kern", "signature": "*fp32,100,128"})
    (scratch / "calls.json").write_text(json.dumps(calls))
    together = tritonrt(cli, scratch, "bundle", "create", scratch / "both.trb", "--calls", scratch / "calls.json",
                        "--target", "cuda:90")
    # The second kernel's record is refused, and why; a bundle without it is no bundle.
    assert "module 'helpers' is" in together.stderr
    assert together.returncode == 1 and not (scratch / "both.trb").exists()
    assert f"kernel 'kern': of '{scratch / 'second' / 'kern.py'}' was compiled but is not in the index" in \
        together.stderr
    agrees_with_triton(cli, scratch, f"{scratch / 'second' / 'kern.py'}:kern", "*fp32,100,128")


def test_jit_arguments_edited_while_the_module_is_imported(cli, scratch):
    # The module edits its own file as it is imported (as an editor saving mid-import would):
    # what Python ran is not what the file holds, so nothing is recorded under it.
    source = scratch / "self_editing.py"
    body = ("@triton.jit(do_not_specialize=[{}])\ndef kern(p, n, BLOCK: tl.constexpr):\n"
            "    offs = tl.arange(0, BLOCK)\n" + STORE.format(2))
    after = KERNEL_HEAD + body.format("'n'")
    source.write_text(KERNEL_HEAD + f"import pathlib\npathlib.Path(__file__).write_text({after!r})\n" + body.format(""))
    kernel = f"{source}:kern"
    first = compile_in(cli, scratch, kernel, "*fp32,128,128")
    assert "not indexed" in first.stderr and "changed since it was read" in first.stderr
    assert source.read_text() == after
    agrees_with_triton(cli, scratch, kernel, "*fp32,128,128")


def test_a_variable_of_tritons_key_without_a_triton_prefix(cli, scratch):
    kernel = f"{scratch / 'signatures.py'}:plain"
    signature = '*fp32,*fp32:unaligned,4096,1,0.5,True,None,64,"fast"'
    plain = agrees_with_triton(cli, scratch, kernel, signature, {"DISABLE_PTXAS_OPT": "1"})
    unset = agrees_with_triton(cli, scratch, kernel, signature)
    assert "the environment variable DISABLE_PTXAS_OPT changed ('1' then, unset now)" in unset.stderr
    assert hash_of(unset) != hash_of(plain)
    again = agrees_with_triton(cli, scratch, kernel, signature, {"DISABLE_PTXAS_OPT": "1"})
    assert "DISABLE_PTXAS_OPT changed (unset then, '1' now)" in again.stderr


def test_a_data_file_read_at_import(cli, scratch):
    (scratch / "data_kernel.py").write_text(
        KERNEL_HEAD + "import json, pathlib\n"
        "SCALE = tl.constexpr(json.loads((pathlib.Path(__file__).parent / 'scale.json').read_text()))\n\n\n"
        "@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n" + STORE.format("SCALE"))
    edited = edit_between_processes(cli, scratch, f"{scratch / 'data_kernel.py'}:kern", "*fp32,100,128",
                                    scratch / "scale.json", "2", "7")
    assert f"'{scratch / 'scale.json'}' changed since it was compiled" in edited.stderr


def test_an_environment_variable_read_at_import(cli, scratch):
    (scratch / "env_kernel.py").write_text(
        KERNEL_HEAD + "import os\nSCALE = tl.constexpr(int(os.environ.get('MY_SCALE', '2')))\n\n\n"
        "@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n" + STORE.format("SCALE"))
    kernel = f"{scratch / 'env_kernel.py'}:kern"
    unset = agrees_with_triton(cli, scratch, kernel, "*fp32,100,128")
    assert SERVED in compile_in(cli, scratch, kernel, "*fp32,100,128", NO_PYTHON).stderr
    changed = agrees_with_triton(cli, scratch, kernel, "*fp32,100,128", {"MY_SCALE": "5"})
    assert "the environment variable MY_SCALE changed (unset then, '5' now)" in changed.stderr
    assert hash_of(changed) != hash_of(unset)


def test_a_record_names_what_the_kernel_was_made_from(cli, scratch):
    # The kernel of a package: its own file first, its helper module's, the distribution records
    # of the installed packages it imports, where its package is found, Triton's variables.
    hash_of(compile_in(cli, scratch, f"{scratch / 'pkg' / 'scale.py'}:double_kernel", "*fp32,4096,256"))
    [record] = [p for p in (scratch / "index").rglob("kernel")]
    made_from = json.loads(record.read_bytes().split(b"\n", 1)[1])
    paths = [f["path"] for f in made_from["files"]]
    assert paths[0] == str(scratch / "pkg" / "scale.py")
    assert str(scratch / "pkg" / "helpers.py") in paths
    assert any(re.search(r"triton-[\d.]+\.dist-info/RECORD$", p) for p in paths)
    assert [m["name"] for m in made_from["modules"]] == ["pkg"]
    assert made_from["tritonrt"]  # the version that made it; another reads the files anew
    assert "DISABLE_PTXAS_OPT" in made_from["environment"] and made_from["environment"]["DISABLE_PTXAS_OPT"] is None


# Bundles are checked the same way where the sources are there.

def bundle_of(cli, scratch, calls, out, env=None):
    (scratch / "calls.json").write_text(json.dumps(calls))
    made = tritonrt(cli, scratch, "bundle", "create", out, "--calls", scratch / "calls.json", "--target", "cuda:90",
                    env=env)
    assert made.returncode == 0, made.stderr
    return out


def test_a_bundle_named_by_module_is_not_served_where_another_file_would_be_imported(cli, scratch):
    kernel = (KERNEL_HEAD + "\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.arange(0, BLOCK)\n" + STORE.format("{}"))
    for folder, factor in (("bundled", 2), ("here", 3)):
        (scratch / folder).mkdir()
        (scratch / folder / "addmod.py").write_text(kernel.format(factor))
    bundled = {"PYTHONPATH": str(scratch / "bundled")}
    bundle = bundle_of(cli, scratch, [{"kernel": "addmod:kern", "signature": "*fp32,100,128"}], scratch / "a.trb",
                       bundled)
    off = {"TRITONRT_INDEX": "off", "TRITONRT_BUNDLE": str(bundle)}
    served = compile_in(cli, scratch, "addmod:kern", "*fp32,100,128", {**bundled, **off})
    assert "loaded from the bundle" in served.stderr
    here = {"PYTHONPATH": str(scratch / "here")}
    elsewhere = compile_in(cli, scratch, "addmod:kern", "*fp32,100,128", {**here, **off})
    assert f"'addmod', which would be imported from '{scratch / 'here' / 'addmod.py'}', differs" in elsewhere.stderr
    assert hash_of(elsewhere) == hash_of(compile_in(cli, scratch, "addmod:kern", "*fp32,100,128",
                                                    {**here, "TRITONRT_INDEX": "off"}))
    assert hash_of(elsewhere) != hash_of(served)


def test_a_stale_entry_in_one_bundle_does_not_stop_the_search_of_the_next(cli, scratch):
    source = scratch / "stale_kernel.py"
    kernel = (KERNEL_HEAD + "\n\n@triton.jit\ndef kern(p, n, BLOCK: tl.constexpr):\n"
              "    offs = tl.arange(0, BLOCK)\n" + STORE.format("{}"))
    calls = [{"kernel": f"{source}:kern", "signature": "*fp32,100,128"}]
    source.write_text(kernel.format(2))
    older = bundle_of(cli, scratch, calls, scratch / "older.trb")
    source.write_text(kernel.format(3))
    newer = bundle_of(cli, scratch, calls, scratch / "newer.trb")
    both = {**NO_PYTHON, "TRITONRT_INDEX": "off", "TRITONRT_BUNDLE": f"{older}:{newer}"}
    result = compile_in(cli, scratch, f"{source}:kern", "*fp32,100,128", both)
    assert result.returncode == 0, result.stderr
    assert f"the bundle {older} is not used for it" in result.stderr
    assert hash_of(result) == hash_of(compile_in(cli, scratch, f"{source}:kern", "*fp32,100,128",
                                                 {"TRITONRT_INDEX": "off"}))


def test_a_kernel_of_an_installed_library_is_recorded_by_its_distributions(cli, scratch):
    # Liger's kernel module imports torch, whose C extension makes modules of no file of their
    # own (torch._C._monitor): they are torch's, which its distribution record stands for.
    pytest.importorskip("liger_kernel")
    kernel = "liger_kernel.ops.rms_norm:_rms_norm_forward_kernel"
    described = tritonrt(cli, scratch, "signature", kernel)
    assert described.returncode == 0 and "not indexed" not in described.stderr, described.stderr
    [record] = [p for p in (scratch / "index").rglob("kernel")]
    paths = [f["path"] for f in json.loads(record.read_bytes().split(b"\n", 1)[1])["files"]]
    assert paths[0].endswith("liger_kernel/ops/rms_norm.py")
    for distribution in ("liger_kernel", "torch", "triton"):
        assert any(re.search(rf"/{distribution}-[\d.]+\.dist-info/RECORD$", p) for p in paths), (distribution, paths)
    assert SERVED in tritonrt(cli, scratch, "signature", kernel, env=NO_PYTHON).stderr
