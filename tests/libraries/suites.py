"""Kernel libraries' own test suites as tritonrt's check: a selection of a library's test files
run twice, in fresh processes with empty caches (Triton's, tritonrt's index), once on Triton's
own path and once with TRITONRT_INSTALL=1, then compared test by test. It fails where an
outcome differs, and where a launch went through Triton's own launcher under install() with no
warning from tritonrt saying why. Needs a GPU and the library installed; the tests come from
the library's source distribution (its `test/` folder).

    PYTHONPATH=build/python python tests/libraries/suites.py SOURCE [FILE ...]
        [--out suites.json] [--seconds S]

SOURCE is the library's source distribution, as `pip download --no-deps --no-binary :all:
liger-kernel==0.8.5` fetches it (a .tar.gz, unpacked here) or unpacked; FILE its test files
(default: LIGER_FILES); --seconds bounds each pass (default 240: then it is interrupted, and
the tests it finished are compared). Prints, per pass,
the outcomes counted, its wall time and the calls of Triton's launcher, then the tests whose
outcomes differ and the time the tests both passes ran took in each (their phases' durations
added: compiles and tuning included, the suite's imports not); writes the JSON.
"""
import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Both passes of these finished in under 7 minutes on one H100 (group_norm's tests, which
# compile a kernel per shape, are left out to keep the check well under 10).
LIGER_FILES = ["test/transformers/test_rms_norm.py", "test/transformers/test_softmax.py",
               "test/transformers/test_layer_norm.py", "test/transformers/test_geglu.py"]
PASSES = {"Triton": "0", "install()": "1"}


def run_pass(name, source, files, seconds):
    """{"outcomes": {test: outcome}, "triton_launches": n, "fallbacks": [...], "seconds": wall,
    "finished": bool} of one pass."""
    with tempfile.TemporaryDirectory() as scratch:
        census = Path(scratch) / "census.json"
        env = {**os.environ, "TRITON_CACHE_DIR": f"{scratch}/triton", "TRITONRT_CACHE_DIR": f"{scratch}/tritonrt",
               "TRITONRT_INSTALL": PASSES[name], "TRITONRT_CENSUS": str(census),
               # absolute: the pass runs in the source's folder
               "PYTHONPATH": os.pathsep.join([str(HERE), *(os.path.abspath(p) for p in
                                                          os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)])}
        command = [sys.executable, "-m", "pytest", "-q", "-p", "census", "-p", "no:cacheprovider",
                   "-o", "log_cli=false", *files]
        begun = time.perf_counter()
        with subprocess.Popen(command, cwd=source, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, start_new_session=True) as process:
            try:
                output, finished = process.communicate(timeout=seconds)[0], True
            except subprocess.TimeoutExpired:
                # Interrupted as a user would, pytest ends its session; what does not end soon
                # (a test's child processes) is killed, the census left as the last test wrote it.
                process.send_signal(signal.SIGINT)
                try:
                    output = process.communicate(timeout=20)[0]
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    output = process.communicate()[0]
                finished = False
        wall = time.perf_counter() - begun
        if not census.exists():
            tail = "\n".join(output.strip().splitlines()[-15:])
            stopped = "" if finished else f" (stopped after {seconds:.0f} s)"
            return {"outcomes": {}, "triton_launches": None, "fallbacks": [], "seconds": wall, "finished": finished,
                    "problem": f"the pass left no census{stopped}:\n{tail}"}
        result = json.loads(census.read_text())
        result.update(seconds=wall, finished=finished)
        return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("files", nargs="*", default=LIGER_FILES)
    parser.add_argument("--out", type=Path, default=Path("suites.json"))
    parser.add_argument("--seconds", type=float, default=240)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as unpacked:
        if options.source.name.endswith(".tar.gz"):
            with tarfile.open(options.source) as sdist:
                sdist.extractall(unpacked, filter="data")
            options.source = next(Path(unpacked).iterdir())
        return check(parser, options)


def check(parser, options):
    missing = [f for f in options.files if not (options.source / f).is_file()]
    if missing:
        parser.error(f"not in {options.source}: {', '.join(missing)}")
    try:
        import torch
        device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    except ImportError:
        device = "no torch"
    print(f"{device} | {options.source.name} | {len(options.files)} test files | "
          f"fresh caches per pass")
    print(f"{'pass':<11} {'tests':>6}  {'outcomes':<48} {'seconds':>8} {'Triton launcher calls':>22}", flush=True)
    results = {}
    for name in PASSES:  # each told as it ends: a caller's own time limit may end this one
        r = results[name] = run_pass(name, options.source, options.files, options.seconds)
        counts = collections.Counter(r["outcomes"].values())
        shown = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        stopped = "" if r["finished"] else f"  (stopped after {options.seconds:.0f} s" + (
            f", in {r['running']})" if r.get("running") else ")")
        print(f"{name:<11} {len(r['outcomes']):>6}  {shown:<48} {r['seconds']:8.1f} {str(r['triton_launches']):>22}"
              f"{stopped}", flush=True)
        if "problem" in r:
            print(f"    {r['problem']}", flush=True)
    triton, installed = results["Triton"]["outcomes"], results["install()"]["outcomes"]
    both = sorted(set(triton) & set(installed))
    differing = [(t, triton[t], installed[t]) for t in both if triton[t] != installed[t]]
    for test, before, after in differing:
        print(f"    differs: {test}: {before} on Triton's path, {after} under install()")
    launched = results["install()"]["triton_launches"]
    fallbacks = results["install()"]["fallbacks"]
    for line in fallbacks:
        print(f"    {line[:200]}")
    unexplained = bool(launched) and not fallbacks
    print(f"{len(both)} tests ran both ways, {len(differing)} outcomes differ; under install() Triton's launcher ran "
          f"{launched} times{' with no reason logged' if unexplained else ''}")
    spent = {name: sum(r.get("seconds_per_test", {}).get(t, 0.0) for t in both) for name, r in results.items()}
    if spent["Triton"]:
        print(f"those tests took {spent['Triton']:.1f} s on Triton's path and {spent['install()']:.1f} s under "
              f"install() ({spent['install()'] / spent['Triton']:.2f}x)")
    options.out.parent.mkdir(parents=True, exist_ok=True)
    options.out.write_text(json.dumps({"device": device, "source": options.source.name,
                                       "files": options.files, "passes": results, "differing": differing,
                                       "seconds_of_tests_both_ran": spent},
                                      indent=2))
    ok = both and not differing and not unexplained and all("problem" not in r for r in results.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
