"""A pytest plugin for suites.py, loaded with `-p census`: under TRITONRT_INSTALL=1 it installs
tritonrt before the suite imports anything (as the package's .pth does at start-up), then
keeps each test's outcome and seconds (its phases' durations added), the calls of Triton's
own launcher (CudaLauncher.__call__) and tritonrt's warnings that a kernel went Triton's own
way, and writes them as JSON to the file
TRITONRT_CENSUS names after each test (with the test running, if one is), so that a pass
stopped from outside still tells what it did and where it was."""
import json
import logging
import os

if os.environ.get("TRITONRT_INSTALL") == "1":
    import tritonrt.frontend
    tritonrt.frontend._install_from_environment()

_outcomes = {}
_seconds = {}
_launches = [0]
_fallbacks = set()
_running = [None]


class _Fallbacks(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            _fallbacks.add(record.getMessage())


def pytest_configure(config):
    from triton.backends.nvidia import driver
    launch = driver.CudaLauncher.__call__

    def counted(self, *args, **kwargs):
        _launches[0] += 1
        return launch(self, *args, **kwargs)

    driver.CudaLauncher.__call__ = counted
    logging.getLogger("tritonrt").addHandler(_Fallbacks())


def pytest_runtest_logstart(nodeid, location):
    _running[0] = nodeid
    _write()


def pytest_runtest_logreport(report):
    _seconds[report.nodeid] = _seconds.get(report.nodeid, 0.0) + report.duration
    if report.when == "call" or report.outcome != "passed":
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.when != "call" and report.outcome == "failed":
            outcome = "error"
        else:
            outcome = report.outcome
        if _outcomes.get(report.nodeid) in (None, "passed"):
            _outcomes[report.nodeid] = outcome


def pytest_runtest_logfinish(nodeid, location):
    _running[0] = None
    _write()


def pytest_sessionfinish(session, exitstatus):
    _write()


def _write():
    path = os.environ.get("TRITONRT_CENSUS")
    if path:
        with open(path + ".new", "w") as f:
            json.dump({"outcomes": _outcomes, "seconds_per_test": _seconds, "triton_launches": _launches[0],
                       "fallbacks": sorted(_fallbacks), "running": _running[0]}, f)
        os.replace(path + ".new", path)
