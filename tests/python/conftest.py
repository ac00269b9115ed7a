"""Fixtures the Python tests share.

They test a build tree, $TRITONRT_BUILD_DIR (default: <repo>/build), or with
TRITONRT_TEST_INSTALLED=1 the tritonrt package installed in the running Python's environment
(pip install .): its `tritonrt` console script and `import tritonrt.ops` from site-packages.
"""

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INSTALLED = os.environ.get("TRITONRT_TEST_INSTALLED") == "1"
BUILD_DIR = Path(os.environ.get("TRITONRT_BUILD_DIR", REPO / "build"))

# These tests check tritonrt's path through Python and Triton's cache (the CLI's and the
# operators' processes inherit this); tritonrt's own index would serve their calls without
# either on a second run. test_index.py, which tests the index, turns it on where it runs.
os.environ.setdefault("TRITONRT_INDEX", "off")


@pytest.fixture(scope="session")
def cli():
    """The tritonrt program under test: the build's tools/tritonrt, or the installed console script."""
    if INSTALLED:
        path = Path(sys.executable).parent / "tritonrt"
        if not path.is_file():
            pytest.fail(f"no tritonrt console script beside {sys.executable}: is the package installed here?")
        return path
    path = BUILD_DIR / "tools" / "tritonrt"
    if not path.is_file():
        pytest.fail(f"the tritonrt binary is not built: {path} (build first, or set TRITONRT_BUILD_DIR)")
    return path


@pytest.fixture(scope="session")
def tritonrt_package():
    """The tritonrt Python package under test: the build's (python/ of the build dir) or the installed one."""
    if not INSTALLED:
        package_dir = BUILD_DIR / "python"
        if not (package_dir / "tritonrt" / "__init__.py").is_file():
            pytest.fail(f"the tritonrt package is not built: {package_dir} (build first, or set TRITONRT_BUILD_DIR)")
        if str(package_dir) not in sys.path:
            sys.path.insert(0, str(package_dir))
    import tritonrt
    return tritonrt
