"""The code's dependencies are the ones the "Layers" table of CONTRIBUTING.md states.

Every `#include "folder/..."` in a layer's folder must name its own folder or one the table's
"May include" column lists for it; public headers (include/tritonrt) include only each other.
The built libraries export their public API only (the internals are no one's interface).
Run alone: `pytest tests/python/test_structure.py`.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD_DIR

REPO = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ("*.h", "*.cpp", "*.inc")


def layer_table():
    """{folder: set of folders it may include}, read from CONTRIBUTING.md's Layers table."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Layers"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    table = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        folders = re.findall(r"`src/(\w+)/`", cells[0])
        allowed = set(re.findall(r"`(\w+)`", cells[1]))
        for folder in folders:
            table[folder] = allowed
    return table


def includes(path):
    return INCLUDE.findall(path.read_text())


def source_folders():
    """The folders of src/ that hold sources (a copy of the tree may keep emptied ones)."""
    return sorted(p.name for p in (REPO / "src").iterdir()
                  if p.is_dir() and any(f for pattern in SOURCES for f in p.rglob(pattern)))


def test_the_table_names_every_folder_of_src():
    assert set(layer_table()) == set(source_folders())


@pytest.mark.parametrize("folder", source_folders())
def test_a_layer_includes_only_what_the_table_allows(folder):
    allowed = layer_table()[folder] | {folder, "tritonrt"}
    upward = []
    for pattern in SOURCES:
        for path in (REPO / "src" / folder).rglob(pattern):
            for header in includes(path):
                if "/" in header and header.split("/")[0] not in allowed:
                    upward.append(f"{path.relative_to(REPO)} includes {header}")
    assert not upward, f"src/{folder} may include {sorted(allowed)}:\n" + "\n".join(upward)


def reached_headers(path, seen=None):
    """The project headers `path` includes, directly or through other headers (paths under
    src/ or include/, as written: "folder/file.h")."""
    seen = set() if seen is None else seen
    for header in includes(path):
        if header in seen:
            continue
        for root in (REPO / "src", REPO / "include"):
            if (root / header).is_file():
                seen.add(header)
                reached_headers(root / header, seen)
    return seen


def test_the_call_path_reaches_no_store():
    """src/function/ knows a kernel's records only through the compiler layer: no header of
    src/store/ is among what its files include, directly or not (the stores are consulted
    in one place, src/compiler/compiler.cpp, behind store/kernel_records.h)."""
    reaching = sorted(f"{path.relative_to(REPO)} reaches {header}"
                      for pattern in SOURCES
                      for path in (REPO / "src" / "function").rglob(pattern)
                      for header in reached_headers(path)
                      if header.startswith("store/"))
    assert not reaching, "\n".join(reaching)


PYTHON_HEADER = re.compile(r'^\s*#\s*include\s+[<"](Python\.h|pybind11/[^>"]+)[>"]', re.M)


def test_only_the_compiler_module_and_the_extension_include_python():
    """Python's headers are included in two folders only: src/python_compiler/ (the module that
    runs the bridge) and src/python_extension/ (the extension modules of the Python package); the
    core, the tools and the operators compile without them."""
    including = sorted({path.relative_to(REPO).parts[1] if path.parts[len(REPO.parts)] == "src"
                        else str(path.relative_to(REPO))
                        for top in ("src", "include", "tools", "ops")
                        for pattern in SOURCES
                        for path in (REPO / top).rglob(pattern)
                        if PYTHON_HEADER.search(path.read_text())})
    assert including == ["python_compiler", "python_extension"]


def test_the_front_end_reaches_the_core_through_its_contract_only():
    """src/python_extension/ includes the public headers, its own, and of the core only the
    contract made for it (function/front_end_abi.h), which itself reaches public headers only."""
    private = sorted(f"{path.relative_to(REPO)} includes {header}"
                     for pattern in SOURCES
                     for path in (REPO / "src" / "python_extension").rglob(pattern)
                     for header in includes(path)
                     if "/" in header and header.split("/")[0] not in ("tritonrt", "python_extension")
                     and header != "function/front_end_abi.h")
    assert not private, "\n".join(private)
    contract = REPO / "src" / "function" / "front_end_abi.h"
    assert sorted(h for h in reached_headers(contract) if not h.startswith("tritonrt/")) == []


def test_public_headers_include_only_public_headers():
    outside = [f"{path.relative_to(REPO)} includes {header}"
               for path in (REPO / "include" / "tritonrt").glob("*.h")
               for header in includes(path)
               if not header.startswith("tritonrt/")]
    assert not outside, "\n".join(outside)


def test_operators_use_only_the_public_api():
    private = [f"{path.relative_to(REPO)} includes {header}"
               for pattern in SOURCES
               for path in (REPO / "ops").rglob(pattern)
               for header in includes(path)
               if "/" in header and not header.startswith("tritonrt/")]
    assert not private, "\n".join(private)


def library_sources(text, target):
    """The sources an add_library(<target> ...) of CMakeLists.txt lists."""
    listing = text[text.index(f"add_library({target} "):]
    return listing[:listing.index(")")]


def test_the_python_front_end_stays_out_of_the_core_library():
    """src/python_extension is built into the Python package's extension modules only, never into
    libtritonrt (which C++ programs link without Python)."""
    text = (REPO / "CMakeLists.txt").read_text()
    core = library_sources(text, "tritonrt_helpers") + library_sources(text, "tritonrt_objects")
    assert "src/" in core and "src/python_extension" not in core
    frontend = (REPO / "src" / "python_extension" / "CMakeLists.txt").read_text()
    assert "MODULE" in frontend and "tritonrt_core" not in frontend.replace("tritonrt::core", "")


def symbols(library, *flags):
    """The demangled dynamic symbols of `library` that nm lists with `flags`."""
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run(["nm", "-D", "-C", *flags, str(library)], check=True, capture_output=True, text=True)
    return [line.split(None, 2)[-1] for line in out.stdout.splitlines() if line.strip()]


def exported_detail(library):
    """The names of tritonrt::detail that `library` exports (functions, variables, template
    instantiations, typeinfo and vtables)."""
    found = []
    for name in symbols(library, "--defined-only"):
        at = name.find("tritonrt::")
        if at >= 0 and name.startswith("tritonrt::detail::", at):
            found.append(name)
    return found


@pytest.fixture(scope="module")
def library_dir(tritonrt_package):
    return Path(tritonrt_package.library_dir)


def test_the_core_library_exports_its_public_api_only(library_dir):
    """libtritonrt exports tritonrt::, not tritonrt::detail:: (tests and benchmarks that reach
    inside link the internals statically), nor the standard library's instantiations."""
    core = library_dir / "libtritonrt.so"
    exported = symbols(core, "--defined-only")
    assert any(name.startswith("tritonrt::JitFunction::get(") for name in exported)
    assert any(name == "typeinfo for tritonrt::CompileError" for name in exported)
    assert exported_detail(core) == []
    # Every name is tritonrt's own (no return type in front: a template instantiation of
    # the standard library's reads "tritonrt::X* std::..."), and none of JitFunction's hidden
    # implementation.
    prefixes = ("tritonrt::", "typeinfo for tritonrt::", "typeinfo name for tritonrt::", "vtable for tritonrt::")
    foreign = [n for n in exported if not n.startswith(prefixes) or " " in n.split("(")[0].split(" for ")[-1]]
    assert foreign == ["tritonrt_front_end_api"]  # the Python front end's contract, a C name
    assert [n for n in exported if "get_live" in n] == []
    assert [n for n in exported if "JitFunction::Impl" in n.split("(")[0]] == []


def test_the_compiler_module_exports_its_entry_point_and_imports_nothing_of_the_core(library_dir):
    """The module takes what it shares with the core through CompilerHost: nothing of tritonrt
    is left for the loader to bind (a process that holds the internals statically has no
    libtritonrt to bind it to)."""
    module = library_dir / "libtritonrt_python.so"
    defined = [n for n in symbols(module, "--defined-only") if not n.startswith("_")]
    assert "tritonrt_make_compiler" in defined
    assert [n for n in defined if "tritonrt" in n and n != "tritonrt_make_compiler"] == []
    assert [n for n in symbols(module, "--undefined-only") if "tritonrt" in n] == []


def test_the_torch_adapter_exports_its_own_api_only(library_dir):
    adapter = next((p for p in (library_dir / "libtritonrt_torch.so", BUILD_DIR / "src" / "torch" / "libtritonrt_torch.so")
                    if p.is_file()), None)
    if adapter is None:
        pytest.skip("the torch adapter is not built here (TRITONRT_BUILD_TORCH)")
    exported = symbols(adapter, "--defined-only")
    assert any(name.startswith("tritonrt::torch::") for name in exported)
    assert exported_detail(adapter) == []
    assert [n for n in exported if n.startswith("tritonrt::") and not n.startswith("tritonrt::torch::")] == []
