"""The code's dependencies are the ones the README's "Layers" table states.

Every `#include "folder/..."` in a layer's folder must name its own folder or one the table's
"May include" column lists for it; public headers (include/tritonrt) include only each other.
Run alone: `pytest tests/python/test_structure.py`.
"""
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = ("*.h", "*.cpp", "*.inc")


def layer_table():
    """{folder: set of folders it may include}, read from the README's Layers table."""
    text = (REPO / "README.md").read_text()
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


def test_the_python_front_end_stays_out_of_the_core_library():
    """src/frontend is built into the Python package's extension modules only, never into
    libtritonrt (which C++ programs link without Python)."""
    text = (REPO / "CMakeLists.txt").read_text()
    core = text[text.index("add_library(tritonrt_core SHARED"):]
    core = core[:core.index(")")]
    assert "src/" in core and "src/frontend" not in core
    frontend = (REPO / "src" / "frontend" / "CMakeLists.txt").read_text()
    assert "MODULE" in frontend and "tritonrt_core" not in frontend.replace("tritonrt::core", "")
