"""Fixtures the Python tests share."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# These tests check tritonrt's path through Python and Triton's cache (the CLI's and the
# operators' processes inherit this); tritonrt's own index would serve their calls without
# either on a second run. test_index.py, which tests the index, turns it on where it runs.
os.environ.setdefault("TRITONRT_INDEX", "off")


@pytest.fixture(scope="session")
def cli():
    """The tritonrt binary under test: $TRITONRT_BUILD_DIR/tools/tritonrt (default: <repo>/build)."""
    path = Path(os.environ.get("TRITONRT_BUILD_DIR", REPO / "build")) / "tools" / "tritonrt"
    if not path.is_file():
        pytest.fail(f"the tritonrt binary is not built: {path} (build first, or set TRITONRT_BUILD_DIR)")
    return path
