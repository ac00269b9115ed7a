"""tests/libraries/suites.py, the GPU check that runs kernel libraries' own test suites on
Triton's path and under install(), here on a stand-in library's suite that needs no GPU: the
outcomes compared test by test, a difference failing the check, a source distribution taken
as pip downloads it."""
import json
import os
import subprocess
import sys
import tarfile

import pytest

from conftest import BUILD_DIR, INSTALLED, REPO

# The install() pass loads the front end's extension modules into a plain python, which a
# sanitizer build's cannot be loaded into (pytest_frontend is left out there for the same reason).
pytestmark = pytest.mark.skipif("ASAN_OPTIONS" in os.environ,
                                reason="the sanitizer build's front end does not load into an uninstrumented python")

SUITE = '''
import os
import pytest

def test_passes():
    pass

@pytest.mark.skip(reason="not here")
def test_skipped():
    pass

@pytest.mark.xfail(strict=True)
def test_xfails():
    assert False
'''
DIFFERS = '''
def test_differs():
    assert os.environ["TRITONRT_INSTALL"] == "0", "tritonrt was installed"
'''


def run_suites(source, tmp_path):
    python_path = [] if INSTALLED else [str(BUILD_DIR / "python")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(python_path + [os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(REPO / "tests" / "libraries" / "suites.py"), str(source),
                           "test/test_stand_in.py", "--out", str(tmp_path / "suites.json"), "--seconds", "120"],
                          capture_output=True, text=True, env=env, timeout=600)


def stand_in(tmp_path, text):
    test = tmp_path / "stand-in-1.0" / "test" / "test_stand_in.py"
    test.parent.mkdir(parents=True)
    test.write_text(text)
    return tmp_path / "stand-in-1.0"


def test_equal_outcomes_pass_the_check(tmp_path):
    source = stand_in(tmp_path, SUITE)
    with tarfile.open(tmp_path / "stand-in-1.0.tar.gz", "w:gz") as sdist:
        sdist.add(source, arcname="stand-in-1.0")
    done = run_suites(tmp_path / "stand-in-1.0.tar.gz", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("Triton", "install()"):
        assert any(line.startswith(name) and "1 passed, 1 skipped, 1 xfailed" in line
                   for line in done.stdout.splitlines()), done.stdout
    assert "3 tests ran both ways, 0 outcomes differ; under install() Triton's launcher ran 0 times" in done.stdout
    # Each pass's time on the tests both ran: its tests' durations added, printed and saved.
    result = json.loads((tmp_path / "suites.json").read_text())
    for name in ("Triton", "install()"):
        durations = result["passes"][name]["seconds_per_test"]
        assert set(durations) == set(result["passes"][name]["outcomes"])
        assert result["seconds_of_tests_both_ran"][name] == pytest.approx(sum(durations.values()))
        assert 0 < result["seconds_of_tests_both_ran"][name] < 60
    spent = result["seconds_of_tests_both_ran"]
    assert (f"those tests took {spent['Triton']:.1f} s on Triton's path and {spent['install()']:.1f} s under "
            "install()") in done.stdout


def test_an_outcome_that_differs_fails_the_check_naming_the_test(tmp_path):
    done = run_suites(stand_in(tmp_path, SUITE + DIFFERS), tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("differs: test/test_stand_in.py::test_differs: passed on Triton's path, failed under install()"
            in done.stdout), done.stdout
