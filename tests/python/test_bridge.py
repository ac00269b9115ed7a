"""The bridge (src/python_compiler/bridge/*.py), the Python half of tritonrt's compiler, tested
directly: assembled as the package `_tritonrt_bridge` the way libtritonrt_python.so assembles it
(make_bridge() in src/python_compiler/python_compiler.cpp), without building anything and
without a GPU.

Each test runs the bridge in a Python process of its own (this file run as a script, see
`in_bridge`): the bridge's observer (bridge/observe.py) cannot be undone once it starts (an audit
hook, builtins.__import__ and importlib.import_module replaced, os.environ's class changed), it is
shared with `import tritonrt` (sys.modules["_tritonrt_observer"]), and the kernel modules the
bridge imports stay in sys.modules: in pytest's process all that would reach every later test.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BRIDGE = REPO / "src" / "python_compiler" / "bridge"


def bridge_parts():
    """The parts, in the order C++ executes them: CMakeLists.txt's TRITONRT_BRIDGE_PARTS, which
    cmake/embed_text.cmake embeds in that order."""
    found = re.search(r"set\(TRITONRT_BRIDGE_PARTS ([^)]*)\)", (REPO / "CMakeLists.txt").read_text())
    return found.group(1).split()


def dtype_table():
    """tritonrt's element types as C++ puts them into common.dtypes: (Triton's name, triton.language
    name, torch name, size) of each row of src/common/dtype.cpp's kInfo, in order."""
    text = (REPO / "src" / "common" / "dtype.cpp").read_text()
    table = text[text.index("kInfo = {{"):text.index("}};")]
    return [(n, lang, torch, int(size)) for n, lang, torch, size in
            re.findall(r'\{"(\w+)", "(\w+)", "(\w*)", (\d+)\}', table)]


def make_bridge():
    """The package `_tritonrt_bridge` made as make_bridge() makes it: each part executed (as
    py::exec does, from text) in a module `_tritonrt_bridge.<part>` listed in sys.modules
    before it runs; common given `embedded` (False: the host process is Python) and the dtype
    table right after it runs; each part's __all__ offered by the package. A part that fails
    leaves no `_tritonrt_bridge` module behind."""
    package = types.ModuleType("_tritonrt_bridge")
    package.__path__ = []
    sys.modules["_tritonrt_bridge"] = package
    try:
        for name in bridge_parts():
            part = types.ModuleType(f"_tritonrt_bridge.{name}")
            part.__file__ = f"<tritonrt bridge/{name}.py>"
            sys.modules[f"_tritonrt_bridge.{name}"] = part
            setattr(package, name, part)
            exec((BRIDGE / f"{name}.py").read_text(encoding="utf-8"), part.__dict__)
            if name == "common":
                part.embedded = False
                for type_name, language, torch, size in dtype_table():
                    part.dtypes[type_name] = part.DType(language, torch, size)
            for exported in getattr(part, "__all__", ()):
                setattr(package, exported, getattr(part, exported))
    except BaseException:
        for key in [key for key in sys.modules if key.startswith("_tritonrt_bridge")]:
            sys.modules.pop(key)
        raise
    return package


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory):
    """The user cache folder of the bridge's processes (describe.py keeps the Triton key's
    variables there): one for this file's tests, never the user's."""
    return tmp_path_factory.mktemp("cache-home")


@pytest.fixture
def in_bridge(tmp_path, cache_home):
    """Runs Python code in a new process holding the bridge as `bridge`, and `describe` and
    `raised` (see the end of this file), in the test's folder with Triton's cache in it; returns
    what the code left in `result`."""

    def run(code, **environment):
        out = tmp_path / "result.json"
        env = {**os.environ, "XDG_CACHE_HOME": str(cache_home), "TRITON_CACHE_DIR": str(tmp_path / "triton-cache"),
               **environment}
        done = subprocess.run([sys.executable, __file__, textwrap.dedent(code), str(out)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(out.read_text())

    return run


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path.resolve()


# --- the package --------------------------------------------------------------------------


def test_every_bridge_file_is_a_part_cmake_embeds_with_common_first():
    parts = bridge_parts()
    assert sorted(parts) == sorted(p.stem for p in BRIDGE.glob("*.py"))
    assert parts[0] == "common"  # every other part imports from it


def test_the_package_offers_every_function_the_cpp_side_calls(in_bridge):
    cpp = (REPO / "src" / "python_compiler" / "python_compiler.cpp").read_text()
    called = sorted(set(re.findall(r'bridge_module\(\)\s*\.attr\("(\w+)"\)', cpp)))
    assert {"compile", "kernel_description", "specialization_rules", "run_hook"} <= set(called)
    offered = in_bridge(f"result = [n for n in {called!r} if callable(getattr(bridge, n, None))]")
    assert offered == called


# --- rules --------------------------------------------------------------------------------


def test_specialization_rules_are_the_installed_tritons(in_bridge):
    import triton
    rules = in_bridge("""
        result = json.loads(bridge.specialization_rules()), json.loads(bridge.import_triton())
    """)
    rules, imported = rules
    assert rules["triton_version"] == triton.__version__ == imported["triton"]
    assert {"bool_type", "float_type", "int_one_is_constexpr", "int_divisibility", "pointer_divisibility",
            "pointer_types", "descriptor_flags", "descriptors_in_tuples", "nvmma_layout"} <= set(rules)
    assert (rules["bool_type"], rules["float_type"]) == ("u1", "fp32")
    assert rules["int_divisibility"] == rules["pointer_divisibility"] == 16
    # One [pointer, const pointer] pair per row of tritonrt's dtype table, in its order.
    names = [row[0] for row in dtype_table()]
    assert rules["pointer_types"] == [[f"*{name}", f"*k{name}"] for name in names]


# --- describe -----------------------------------------------------------------------------

PLAIN = """
    import triton
    import triton.language as tl


    @triton.jit
    def add(x_ptr, y_ptr, n, scale: float = 2.5, BLOCK: tl.constexpr = 128, EVEN: tl.constexpr = True):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale, mask=mask)
"""

DECORATED = """
    import triton
    import triton.language as tl


    def widen(nargs):
        nargs["a_desc"].block_shape = [nargs["BLOCK_M"], 32]


    @triton.autotune(configs=[
        triton.Config({"BLOCK_M": 64}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_M": 128}, num_warps=8, num_stages=3, pre_hook=widen),
    ], key=["n"], reset_to_zero=["out_ptr"])
    @triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK_M"] == 0,
                        "N_POW2": lambda args: triton.next_power_of_2(args["n"])})
    @triton.jit
    def tuned(a_desc, out_ptr, n, BLOCK_M: tl.constexpr, EVEN: tl.constexpr, N_POW2: tl.constexpr):
        pass
"""


def test_a_jit_kernel_is_described_with_its_parameters_constexprs_and_defaults(in_bridge, tmp_path):
    kernel = write(tmp_path, "plain_kernel.py", PLAIN)
    described = in_bridge(f"result = describe({str(kernel)!r}, 'add')")
    assert described["name"] == "add" and described["full_name"] == "plain_kernel.add"
    assert described["file"] == str(kernel) and described["decorators"] == []
    params = {p["name"]: p for p in described["params"]}
    assert list(params) == ["x_ptr", "y_ptr", "n", "scale", "BLOCK", "EVEN"]
    assert [n for n, p in params.items() if p["is_constexpr"]] == ["BLOCK", "EVEN"]
    assert params["n"]["default"] == {"kind": "absent"}
    assert params["scale"]["default"] == {"kind": "float", "value": (2.5).hex(), "repr": "2.5"}
    assert params["BLOCK"]["default"] == {"kind": "int", "value": 128, "repr": "128"}
    assert params["EVEN"]["default"] == {"kind": "bool", "value": True, "repr": "True"}


def test_autotune_and_heuristics_are_described_outermost_first_with_configs_in_order(in_bridge, tmp_path):
    kernel = write(tmp_path, "decorated_kernel.py", DECORATED)
    described = in_bridge(f"result = describe({str(kernel)!r}, 'tuned')")
    assert described["name"] == "tuned"
    autotune, heuristics = described["decorators"]
    assert autotune["kind"] == "autotune" and autotune["keys"] == ["n"]
    assert autotune["reset_to_zero"] == ["out_ptr"]
    assert [c["kwargs"] for c in autotune["configs"]] == [{"BLOCK_M": {"kind": "int", "value": 64}},
                                                          {"BLOCK_M": {"kind": "int", "value": 128}}]
    assert [(c["num_warps"], c["num_stages"], c["pre_hook"]) for c in autotune["configs"]] == [(4, 2, False),
                                                                                               (8, 3, True)]
    assert heuristics == {"kind": "heuristics", "type": "Heuristics", "names": ["EVEN", "N_POW2"]}


LIBTUNED = """
    import triton
    import triton.language as tl
    from flag_gems.utils import libtuner


    @libtuner(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((64, 4), (128, 4), (128, 8))],
              key=["n", "m"], strategy=["log", "align32"])
    @triton.jit
    def tuned(x_ptr, n, m, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), n + m)
"""


def test_a_tuners_remembered_choice_is_the_config_its_cache_holds_for_the_key(in_bridge, tmp_path):
    """Triton's Autotuner: the config its cache holds for Triton's key, else none (tritonrt
    tunes); never its own run's to tune."""
    decorated = write(tmp_path, "decorated_kernel.py", DECORATED)
    said = in_bridge(f"""
        tuned = describe({str(decorated)!r}, "tuned")["handle"]
        tuner = bridge.describe.decorator_stacks[tuned][0]
        tuner.cache[(1000, )] = tuner.configs[1]
        result = [bridge.remembered_choice(tuned, 0, [("int", 1000)]), bridge.remembered_choice(tuned, 0, [("int", 7)])]
    """)
    assert said == [[1, False], [None, False]]


@pytest.mark.skipif(importlib.util.find_spec("flag_gems") is None,
                    reason="FlagGems is not installed (requirements-libraries.txt; not in the newest-Triton venv)")
def test_flaggems_libtuners_remembered_choice_is_its_databases_under_its_own_key(in_bridge, tmp_path):
    """FlagGems' LibTuner: the config its database holds under LibTuner's key (each key value
    through its strategy, then the dtypes), matched to its configs by values and options as its
    run matches it; else none, its own run tuning the key."""
    libtuned = write(tmp_path, "libtuned_kernel.py", LIBTUNED)
    said = in_bridge(f"""
        import triton
        lib = describe({str(libtuned)!r}, "tuned")["handle"]
        libtuner = bridge.describe.decorator_stacks[lib][0]
        libtuner.cache[(128, 64, "torch.float16")] = triton.Config({{"BLOCK": 128}}, num_warps=8)  # as read back
        fp16 = ("str", b"torch.float16")
        result = [bridge.remembered_choice(lib, 0, [("int", 100), ("int", 40), fp16]),
                  bridge.remembered_choice(lib, 0, [("int", 128), ("int", 64), fp16]),
                  bridge.remembered_choice(lib, 0, [("int", 300), ("int", 40), fp16])]
    """, GEMS_VENDOR="nvidia", FLAGGEMS_DB_URL="sqlite:///:memory:")
    assert said == [[2, True], [2, True], [None, True]]

def test_a_missing_kernel_name_is_a_kernel_not_found_error(in_bridge, tmp_path):
    kernel = write(tmp_path, "plain_kernel.py", PLAIN)
    said = in_bridge(f"result = raised(describe, {str(kernel)!r}, 'nope')")
    assert said[:2] == ["KernelNotFoundError", f"'{kernel}' has no attribute 'nope'"]


FACTORY = """
    import triton
    import triton.language as tl


    def made(scale):
        SCALE = tl.constexpr(scale)

        @triton.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
        @triton.jit
        def scaled(x_ptr, n, EVEN: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, 4), tl.load(x_ptr + tl.arange(0, 4)) * SCALE)

        return scaled
"""


def test_a_kernel_handed_over_as_an_object_is_described_from_it_kept_current_and_never_indexed(in_bridge, tmp_path):
    write(tmp_path, "factory_kernels.py", FACTORY)
    said = in_bridge("""
        import sys
        sys.path.insert(0, ".")
        import factory_kernels
        kernels = [factory_kernels.made(2.0), factory_kernels.made(3.0)]
        described = [json.loads(bridge.object_kernel_description(k)) for k in kernels]
        handles = [d["handle"] for d in described]
        result = {"described": described, "current": [bridge.is_current(h) for h in handles],
                  "held": [bridge.describe.named[h][2] is k for h, k in zip(handles, kernels)],
                  "dependencies": raised(bridge.dependencies, handles[0])}
    """)
    first, second = said["described"]
    assert first["handle"] != second["handle"]
    assert first["name"] == "scaled" and first["full_name"] == "factory_kernels.made.<locals>.scaled"
    assert first["file"] == str((tmp_path / "factory_kernels.py").resolve()) and first["search_path"] is None
    assert [p["name"] for p in first["params"]] == ["x_ptr", "n", "EVEN"]
    assert first["decorators"] == [{"kind": "heuristics", "type": "Heuristics", "names": ["EVEN"]}]
    assert said["current"] == [True, True] and said["held"] == [True, True]
    assert said["dependencies"][0] == "KernelSourceError" and "handed over as an object" in said["dependencies"][1]


# --- observe: what a kernel was made from -------------------------------------------------

HELPER = """
    import os

    SCALE = float(os.getenv("BRIDGE_TEST_SCALE", "1.0"))
"""

USES_HELPER = """
    import os

    import triton
    import triton.language as tl

    from bridge_test_helper import SCALE

    BLOCK = int(os.environ["BRIDGE_TEST_BLOCK"])
    UNSET = os.environ.get("BRIDGE_TEST_UNSET")


    @triton.jit
    def scaled(x_ptr, n):
        offsets = tl.arange(0, BLOCK)
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) * SCALE, mask=offsets < n)
"""


def test_dependencies_name_the_kernel_file_its_helper_module_and_the_environment_it_read(in_bridge, tmp_path):
    kernel = write(tmp_path, "uses_helper.py", USES_HELPER)
    helper = write(tmp_path, "bridge_test_helper.py", HELPER)
    found = in_bridge(f"""
        handle = describe({str(kernel)!r}, "scaled")["handle"]
        result = json.loads(bridge.dependencies(handle))
    """, BRIDGE_TEST_BLOCK="64", BRIDGE_TEST_SCALE="3.0")
    paths = [f["path"] for f in found["files"]]
    assert paths[0] == str(kernel)  # the kernel's own file first
    assert str(helper) in paths
    entry = found["files"][paths.index(str(helper))]
    assert entry["kind"] == "file" and entry["size"] == helper.stat().st_size and len(entry["sha256"]) == 64
    assert {"BRIDGE_TEST_BLOCK": "64", "BRIDGE_TEST_SCALE": "3.0", "BRIDGE_TEST_UNSET": None}.items() \
        <= found["environment"].items()
    assert "bridge_test_helper" in [m["name"] for m in found["modules"]]


def test_a_relative_import_is_recorded_before_anything_loaded_importlib_util(tmp_path):
    """The observer as `import tritonrt` starts it (tritonrt._observe is observe.py) may run in
    a process that has not loaded importlib.util yet (`python -I -S`): a kernel module's
    `from . import helper` is among what the module imported all the same, so an edit of the
    helper makes the kernel's record stale."""
    package = tmp_path / "relative_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("VALUE = 1\n")
    (package / "kern.py").write_text("from . import helper\n")
    code = textwrap.dedent("""
        import sys, types
        assert "importlib.util" not in sys.modules
        observe = types.ModuleType("observe_under_test")
        observe.__file__ = sys.argv[1]
        sys.modules[observe.__name__] = observe
        exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), observe.__dict__)
        observer = observe.observer()
        sys.path.insert(0, sys.argv[2])
        import relative_pkg.kern
        [record] = [m for m in observer.modules.values() if m.namespace is vars(relative_pkg.kern)]
        print(sorted(module.__name__ for module in record.imports.values()))
    """)
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(BRIDGE / "observe.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "relative_pkg.helper" in done.stdout


def test_a_helper_edited_after_its_import_makes_the_dependencies_refused(in_bridge, tmp_path):
    kernel = write(tmp_path, "uses_helper.py", USES_HELPER)
    helper = write(tmp_path, "bridge_test_helper.py", HELPER)
    said = in_bridge(f"""
        handle = describe({str(kernel)!r}, "scaled")["handle"]
        with open({str(helper)!r}, "a") as f:
            f.write("# edited\\n")
        result = raised(bridge.dependencies, handle)
    """, BRIDGE_TEST_BLOCK="64")
    assert said[0] == "KernelSourceError" and f"'{helper}' changed since it was read" in said[1]


# --- arguments and decorators: heuristics and hooks on stand-in arguments ------------------

# A call's arguments as python_arg (src/python_compiler/kinds/) hands them over: (name, kind, ...).
DESC = ("a_desc", "descriptor", 0x10000, "fp16", [256, 256], [256, 1], [64, 64], "zero")
OUT = ("out_ptr", "pointer", 0x20000, "fp32", "address", None, None, -1, 4096)


def test_a_heuristic_returns_its_value_and_what_it_read(in_bridge, tmp_path):
    kernel = write(tmp_path, "decorated_kernel.py", DECORATED)
    ran = in_bridge(f"""
        DESC, OUT = {DESC!r}, {OUT!r}
        handle = describe({str(kernel)!r}, "tuned")["handle"]
        args = [DESC, OUT, ("n", "int", 1000), ("BLOCK_M", "int", 64)]
        result = [json.loads(bridge.run_heuristic(handle, 1, name, args)) for name in ("EVEN", "N_POW2")]
    """)
    even, pow2 = ran
    assert even == {"value": {"kind": "bool", "value": False}, "reads": [["n", "value"], ["BLOCK_M", "value"]]}
    assert pow2 == {"value": {"kind": "int", "value": 1024}, "reads": [["n", "value"]]}


def test_a_heuristic_that_iterates_its_arguments_has_no_reads_to_memoize_on(in_bridge, tmp_path):
    kernel = write(tmp_path, "iterating.py", """
        import triton
        import triton.language as tl


        @triton.heuristics({"COUNT": lambda args: len([name for name in args])})
        @triton.jit
        def counted(x, COUNT: tl.constexpr):
            pass
    """)
    ran = in_bridge(f"""
        handle = describe({str(kernel)!r}, "counted")["handle"]
        result = json.loads(bridge.run_heuristic(handle, 0, "COUNT", [("x", "int", 5)]))
    """)
    assert ran == {"value": {"kind": "int", "value": 1}, "reads": None}


def test_a_config_pre_hook_that_sets_a_block_shape_is_reported_as_that_change(in_bridge, tmp_path):
    kernel = write(tmp_path, "decorated_kernel.py", DECORATED)
    ran = in_bridge(f"""
        DESC, OUT = {DESC!r}, {OUT!r}
        handle = describe({str(kernel)!r}, "tuned")["handle"]
        args = [DESC, OUT, ("n", "int", 1000)]
        result = json.loads(bridge.run_hook(handle, 0, "config", args, 0, config=1, record=True))
    """)
    # a_desc is parameter 0; BLOCK_M comes from config 1, a constant whose read is not recorded.
    assert ran == {"changes": [[0, [128, 32]]], "reads": [["a_desc", "kind"]], "why": None}


def test_a_hook_that_reads_a_descriptors_shape_runs_on_every_call(in_bridge, tmp_path):
    kernel = write(tmp_path, "reading_hook.py", DECORATED.replace(
        'nargs["a_desc"].block_shape = [nargs["BLOCK_M"], 32]',
        'nargs["a_desc"].block_shape = [nargs["a_desc"].shape[0] // 2, 32]'))
    ran = in_bridge(f"""
        DESC, OUT = {DESC!r}, {OUT!r}
        handle = describe({str(kernel)!r}, "tuned")["handle"]
        result = json.loads(bridge.run_hook(handle, 0, "config", [DESC, OUT, ("n", "int", 1000)], 0, config=1,
                                            record=True))
    """)
    assert ran == {"changes": [[0, [128, 32]]], "reads": None, "why": "reads a_desc.shape"}


# --- compiling (for cuda:90, which needs no GPU) --------------------------------------------


def test_compiling_for_cuda_90_gives_a_cubin_and_its_metadata_then_a_cache_hit(in_bridge, tmp_path):
    kernel = write(tmp_path, "plain_kernel.py", PLAIN)
    compiled = in_bridge(f"""
        handle = describe({str(kernel)!r}, "add")["handle"]
        # [type, key] per parameter as Triton's binder makes them; constexprs encoded as C++ encodes them.
        spec = [["*fp32", "D"], ["*fp32", "D"], ["i32", ""], ["fp32", None], ["constexpr", ["value", 256]],
                ["constexpr", ["default"]]]
        result = []
        for _ in range(2):
            metadata, binary, kind, folder, cached = bridge.compile(handle, "cuda", "90", 32, spec, {{"num_warps": 8}})
            result.append([json.loads(metadata), binary[:4].hex(), kind, folder.decode(), cached])
    """)
    (metadata, magic, kind, folder, cached), again = compiled
    assert (magic, kind, cached) == ("7f454c46", "cubin", False)  # an ELF file, compiled anew
    assert metadata["name"] == "add" and metadata["num_warps"] == 8
    assert metadata["target"]["backend"] == "cuda" and metadata["target"]["arch"] == 90
    assert folder.startswith(str(tmp_path / "triton-cache"))
    assert again[3:] == [folder, True]  # the second time, Triton's cache entry


def test_a_kernel_triton_rejects_is_a_compile_failure_saying_why(in_bridge, tmp_path):
    kernel = write(tmp_path, "bad_kernel.py", """
        import triton
        import triton.language as tl


        @triton.jit
        def bad(x_ptr):
            tl.store(x_ptr + tl.arange(0, 3), 1.0)
    """)
    said = in_bridge(f"""
        handle = describe({str(kernel)!r}, "bad")["handle"]
        result = raised(bridge.compile, handle, "cuda", "90", 32, [["*fp32", "D"]], {{}})
    """)
    kind, message, details = said
    assert kind == "CompileFailure" and message.startswith("CompilationError") and "power of 2" in message
    assert "tl.arange(0, 3)" in details  # Triton's own text, the kernel's line in it


def test_an_architecture_that_is_not_a_number_is_a_target_error(in_bridge, tmp_path):
    said = in_bridge("result = raised(bridge.rules.make_target, 'cuda', 'sm90', 32)")
    assert said[:2] == ["TargetError", "cuda architecture must be a compute capability like 90, got 'sm90'"]


if __name__ == "__main__":  # in_bridge's process: the bridge, then the test's code
    code, result_file = sys.argv[1:]
    bridge = make_bridge()

    def describe(path, name):
        """The description of kernel `name` of the file `path`, as C++ asks for it (bytes)."""
        return json.loads(bridge.kernel_description(os.fsencode(path), name.encode()))

    def raised(call, *args, **kwargs):
        """[type name, message, details] of what `call` raises; None where it returns."""
        try:
            call(*args, **kwargs)
        except Exception as e:
            return [type(e).__name__, str(e), getattr(e, "details", None)]
        return None

    scope = {"bridge": bridge, "json": json, "describe": describe, "raised": raised}
    exec(code, scope)
    Path(result_file).write_text(json.dumps(scope.get("result")))
