"""The tritonrt Python package: what `pip install .` gives (run with TRITONRT_TEST_INSTALLED=1
in an environment it was installed into, as ./dev.sh wheel does), and the same package in a
build tree. Installed, everything must work with no environment variable set."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import INSTALLED, REPO

installed_only = pytest.mark.skipif(not INSTALLED, reason="checks the pip-installed package (TRITONRT_TEST_INSTALLED=1)")


def clean_environment(**extra):
    """This process's environment without anything that tells tritonrt or Python where to look."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith("TRITONRT_") and k not in ("PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX")}
    environment.update(extra)
    return environment


def run_python(code, tritonrt_package, **env):
    """`code` in a fresh interpreter that finds the package under test and nothing else of ours."""
    package_parent = str(Path(tritonrt_package.__file__).parents[1])
    environment = clean_environment(**env) if INSTALLED else clean_environment(PYTHONPATH=package_parent, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300)


def test_version_is_the_headers(tritonrt_package):
    header = (REPO / "include" / "tritonrt" / "version.h").read_text()
    parts = [re.search(rf"#define TRITONRT_VERSION_{p} (\d+)", header).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    assert tritonrt_package.__version__ == ".".join(parts)


def test_dir_and_all_list_the_api_each_name_there(tritonrt_package):
    # The front end (launcher, install, ...) is imported on first use, yet listed, and is there.
    result = run_python("import tritonrt, json; print(json.dumps([dir(tritonrt), tritonrt.__all__])); "
                        "[getattr(tritonrt, n) for n in tritonrt.__all__]", tritonrt_package)
    assert result.returncode == 0, result.stderr
    listed, everything = __import__("json").loads(result.stdout)
    for name in ("launcher", "install", "uninstall", "installed", "Launcher", "CompiledKernel", "__version__"):
        assert name in listed, name
    assert {"launcher", "install", "uninstall", "installed"} <= set(everything)


@installed_only
def test_cmake_package_headers_and_libraries_are_in_the_package(tritonrt_package):
    config = Path(tritonrt_package.cmake_prefix_path) / "tritonrt" / "tritonrtConfig.cmake"
    assert config.is_file(), config
    assert (Path(tritonrt_package.include_dir) / "tritonrt" / "tritonrt.h").is_file()
    libraries = {p.name for p in Path(tritonrt_package.library_dir).iterdir()}
    assert "libtritonrt_python.so" in libraries and any(n.startswith("libtritonrt.so") for n in libraries), libraries
    assert Path(tritonrt_package.cli_path).is_file()


@installed_only
def test_console_script_runs_the_program_with_this_python():
    script = Path(sys.executable).parent / "tritonrt"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=300,
                            env=clean_environment(PATH="/usr/bin:/bin"))
    assert result.returncode == 0, result.stderr
    assert re.search(r"^tritonrt \d+\.\d+\.\d+$", result.stdout, re.M)
    assert re.search(rf"^python {sys.version_info.major}\.{sys.version_info.minor} ", result.stdout, re.M)


@installed_only
def test_the_program_embeds_the_python_it_is_installed_for(tritonrt_package):
    # Run directly, outside the console script, with no venv active and no python3 of this
    # version on PATH: the environment holding the library is the one candidate that serves.
    result = subprocess.run([tritonrt_package.cli_path, "signature", f"{REPO}/tests/kernels/signatures.py:plain"],
                            capture_output=True, text=True, timeout=300,
                            env=clean_environment(PATH="/usr/bin:/bin", TRITONRT_LOG="debug", TRITONRT_INDEX="off"))
    assert result.returncode == 0, result.stderr
    assert "(the environment tritonrt is installed in)" in result.stderr, result.stderr
    assert "kernel      signatures.plain" in result.stdout


def test_ops_register_with_no_environment_variable(tritonrt_package):
    pytest.importorskip("torch", reason="tritonrt.ops needs torch")
    if tritonrt_package.torch_version is None:
        pytest.skip("this build of tritonrt has no operator library (it was built without torch)")
    result = run_python("import torch, tritonrt.ops; print(torch.ops.tritonrt.add.default._schema)", tritonrt_package)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tritonrt::add(Tensor self, Tensor other")


def test_ops_refuse_a_torch_of_another_release(tritonrt_package):
    pytest.importorskip("torch", reason="tritonrt.ops needs torch")
    result = run_python("import torch, tritonrt._build_info as b; b.TORCH_VERSION = '1.13.1'; import tritonrt.ops",
                        tritonrt_package)
    assert result.returncode == 1
    import torch
    assert f"built against torch 1.13.1, and this is torch {torch.__version__}" in result.stderr, result.stderr
    assert "torch.ops.tritonrt" not in result.stderr


def test_ops_of_a_build_without_torch_say_so(tritonrt_package):
    result = run_python("import tritonrt._build_info as b; b.TORCH_VERSION = None; import tritonrt.ops", tritonrt_package)
    assert result.returncode == 1
    assert "ImportError: tritonrt was built without torch" in result.stderr, result.stderr
    assert "TRITONRT_BUILD_TORCH=ON pip install '.[torch]'" in result.stderr, result.stderr
