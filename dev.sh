#!/usr/bin/env bash
# tritonrt's developer entry point: sets everything up on a fresh Debian machine, then builds
# and runs what was asked. Safe to re-run: every step is skipped when already done.
#
#   ./dev.sh example   set up, build, run build/examples/tritonrt_example
#   ./dev.sh test      set up, build, run every test: ctest + pytest with the pinned Triton
#                      (.venv, build/), then the CPU tests + pytest with the newest Triton
#                      and no torch (.venv-latest, build-latest/), then `fuzz`,
#                      `sanitize`, `consumers` and `wheel` below, then a summary (with each
#                      set-up step's and stage's time, and how many of its compiles ccache served)
#   ./dev.sh fuzz      build the libFuzzer harnesses of tests/fuzz with clang (build-fuzz/),
#                      run each for a bounded time on a copy of its seed corpus, as many at
#                      a time as CTEST_PARALLEL_LEVEL says (default: the cores)
#   ./dev.sh sanitize  build with AddressSanitizer + UBSan against .venv, without torch
#                      (build-asan/), run the CPU tests + pytest there
#   ./dev.sh consumers install build/, move the install, and build and run the projects of
#                      tests/consumers against it (build-consumers/)
#   ./dev.sh wheel     the READMEs' install and build blocks as written (wheel-check), in a
#                      fresh virtual environment without torch (build-wheel/venv): the core,
#                      a C++ program on it, the torch parts, examples/custom_op; then the
#                      installed package's tests
#   ./dev.sh setup     set up and build only
#
# Overrides (all optional):
#   TRITONRT_DEV_PYTHON   base interpreter for the virtual environments (default: Python 3.12)
#   TRITONRT_DEV_NO_APT=1 never call apt-get (missing packages become an error)
#   TRITONRT_FUZZ_SECONDS seconds each fuzzer runs (default 20)
#   CMAKE_BUILD_TYPE      default RelWithDebInfo
#   CMAKE_BUILD_PARALLEL_LEVEL, CTEST_PARALLEL_LEVEL   honoured by cmake / ctest

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

VENV=.venv                          # requirements.txt: what the GPU machine runs
BUILD=build
VENV_LATEST=.venv-latest            # requirements-latest.txt: newest Triton, no torch
BUILD_LATEST=build-latest
BUILD_ASAN=build-asan               # .venv, AddressSanitizer + UBSan, no torch
BUILD_FUZZ=build-fuzz               # tests/fuzz alone, built with clang
FUZZ_CCACHE_LOG=$BUILD_FUZZ/dev-ccache-stats.log  # the ccache counters of its build in `test`
BUILD_CONSUMERS=build-consumers     # an install of build/, moved, and tests/consumers built against it
BUILD_WHEEL=build-wheel             # a fresh venv with the READMEs' pip installs, and what they build on it
BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo}
JOBS=${CTEST_PARALLEL_LEVEL:-$(nproc)}
# make: the READMEs' CMake commands use CMake's default generator. ccache: the builds of one run
# share what they compile alike (see use_ccache).
APT_PACKAGES=(cmake g++ make ninja-build ccache nlohmann-json3-dev libgtest-dev libcli11-dev libfmt-dev)
# For `fuzz`: clang with libFuzzer and its sanitizer runtimes, and llvm-symbolizer for the stacks.
FUZZ_APT_PACKAGES=(clang-14 libclang-rt-14-dev llvm-14)
FUZZ_CXX=clang++-14
FUZZ_SYMBOLIZER=/usr/lib/llvm-14/bin/llvm-symbolizer
FUZZ_HARNESSES=(metadata target signature bridge bundle index calls)  # tests/fuzz/fuzz_<name>.cpp, corpus/<name>/
FUZZ_SECONDS=${TRITONRT_FUZZ_SECONDS:-20}
# Any undefined behaviour stops the program, as an ASan report does, so no test can pass over it.
SANITIZE_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'dev.sh: %s\n' "$*" >&2; exit 1; }

# use_ccache: compiles through ccache where it is installed (CMake reads these variables at each
# first configure, pip's builds included); build folders of one checkout share their entries
# (the same source compiled with the same flags): build-latest/ nearly all of build/'s, the
# consumers' subproject and the two pip builds the core in Release (run_consumers gives the
# subproject pip's compiler). A pip build's files that include pybind11 or torch are not
# shared: its build environment has a fresh path each time.
use_ccache() {
  if command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CCACHE_NOHASHDIR=true
  fi
}

# ccache_tally: "HITS CALLS" of cacheable compiles, from ccache's counters ("ID<TAB>COUNT" lines) on its input.
ccache_tally() {
  awk -F '\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ { hit += $2 }
    $1 == "cache_miss" { miss += $2 } END { print hit + 0, hit + miss }'
}

# ccache_log_counts LOG: "HITS CALLS" of the compiles whose counters ccache logged in LOG (its
# stats_log: a counter ID a line); "0 0" where there is none.
ccache_log_counts() {
  if [[ -f $1 ]]; then
    sed 's/$/\t1/' "$1" | ccache_tally
  else
    echo 0 0
  fi
}

# ccache_counts: "HITS CALLS", ccache's counts of cacheable compiles so far ("0 0" without it),
# less those of build-fuzz/'s background build (FUZZ_CCACHE_LOG, see start_setup_fuzz; one of
# its compiles ending while both are read may count on the wrong side). They count every other
# compile through ccache on the machine, another user's beside this run too.
ccache_counts() {
  local hits calls fuzz_hits fuzz_calls
  if command -v ccache >/dev/null; then
    read -r hits calls < <(ccache --print-stats | ccache_tally)
    read -r fuzz_hits fuzz_calls < <(ccache_log_counts "$FUZZ_CCACHE_LOG")
    echo $((hits - fuzz_hits)) $((calls - fuzz_calls))
  else
    echo 0 0
  fi
}

# ccache_note HITS CALLS [HITS_NOW CALLS_NOW]: ", ccache: H of N compiles hit" for the compiles
# from HITS CALLS to HITS_NOW CALLS_NOW (default: ccache_counts now); nothing where there were none.
ccache_note() {
  local hits=${3:-} calls=${4:-}
  [[ -n $hits ]] || read -r hits calls < <(ccache_counts)
  ((calls > $2)) && printf ', ccache: %d of %d compiles hit' $((hits - $1)) $((calls - $2))
  return 0
}

# SUMMARY: the lines the summary prints: the set-up steps' (those that did work), then the stages'.
SUMMARY=()

# timed_setup WHAT COMMAND...: runs a set-up step, then adds a summary line with its duration
# and how many of its compiles ccache answered.
timed_setup() {
  local what=$1 begun hits calls
  shift
  begun=$(date +%s)
  read -r hits calls < <(ccache_counts)
  "$@"
  SUMMARY+=("$(printf '%-4s  %-44s  set-up [%d s%s]' ok "$what" $(($(date +%s) - begun)) \
    "$(ccache_note "$hits" "$calls")")")
}

# The programs under test read these to pick an interpreter; each build must use its own venv.
clean_env() { env -u VIRTUAL_ENV -u CONDA_PREFIX -u TRITONRT_PYTHON -u PYTHONHOME -u PYTHONPATH "$@"; }

# --- system packages -------------------------------------------------------------------------

apt_install() {
  local missing=() pkg
  command -v dpkg-query >/dev/null || return 0  # not Debian: CMake will say what is missing
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  [[ ${TRITONRT_DEV_NO_APT:-0} == 1 ]] && die "missing system packages: ${missing[*]} (TRITONRT_DEV_NO_APT=1)"
  local sudo=()
  if ((EUID != 0)); then
    command -v sudo >/dev/null || die "missing system packages: ${missing[*]} (run as root or install sudo)"
    sudo=(sudo)
  fi
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timed_setup "apt-get install (${#missing[@]} packages)" apt_get_install "${sudo[@]}" "${missing[@]}"
}

# apt_get_install [sudo] PACKAGES...: package lists may be absent or stale on a fresh machine:
# they are refreshed only when an install fails.
apt_get_install() {
  local sudo=()
  [[ $1 == sudo ]] && { sudo=(sudo); shift; }
  "${sudo[@]}" apt-get install -y --no-install-recommends "$@" ||
    { "${sudo[@]}" apt-get update && "${sudo[@]}" apt-get install -y --no-install-recommends "$@"; }
}

# Usable base interpreter: Python >= 3.10 with venv and the headers CMake's Development.Embed needs.
python_usable() {
  "$1" - <<'EOF' >/dev/null 2>&1
import os, sys, sysconfig, venv, ensurepip
assert sys.version_info >= (3, 10)
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
EOF
}

# find_base_python: sets BASE_PYTHON. Called as it is, not in a $(...): the summary line of
# apt_install's step is added in this shell, and a failure ends the run here.
find_base_python() {
  if [[ -n ${TRITONRT_DEV_PYTHON:-} ]]; then
    python_usable "$TRITONRT_DEV_PYTHON" || die "TRITONRT_DEV_PYTHON=$TRITONRT_DEV_PYTHON is not a usable Python >= 3.10"
    BASE_PYTHON=$TRITONRT_DEV_PYTHON
    return
  fi
  local candidate
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 python3.12 python3.13 python3.11 \
                   python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && python_usable "$candidate"; then
      BASE_PYTHON=$(command -v "$candidate")
      return
    fi
  done
  # Debian's own python3 (3.11 on bookworm) works once its venv and header packages are in.
  apt_install python3 python3-venv python3-dev
  python_usable /usr/bin/python3 || die "no usable Python >= 3.10 found; set TRITONRT_DEV_PYTHON"
  BASE_PYTHON=/usr/bin/python3
}

check_cuda_headers() {
  # The core needs only the driver API's headers (cuda.h); libcuda is loaded at run time.
  [[ -n ${CUDAToolkit_ROOT:-} ]] || command -v nvcc >/dev/null || [[ -f /usr/local/cuda/include/cuda.h ]] ||
    die "the CUDA toolkit was not found (expected /usr/local/cuda or nvcc on PATH; or set CUDAToolkit_ROOT)"
}

# --- virtual environments --------------------------------------------------------------------

# ensure_venv DIR REQUIREMENTS [NO_DEPS_REQUIREMENTS]: creates DIR if needed; reinstalls only when
# the requirements files (or the interpreter) changed since the last successful install, recorded
# in a stamp. The second file is installed without dependencies (see requirements-libraries.txt).
ensure_venv() {
  local venv=$1 requirements=$2 no_deps=${3:-} stamp="$1/.dev-requirements.sha256"
  if [[ -L $venv && ! -e $venv ]]; then
    rm "$venv"  # a dangling link
  fi
  if [[ -e $venv ]] && ! "$venv/bin/python" -c pass >/dev/null 2>&1; then
    [[ -f $venv/pyvenv.cfg ]] || die "$venv exists but is not a virtual environment; move it away"
    say "$venv is broken: recreating it"
    rm -rf "$venv"
  fi
  if [[ ! -e $venv ]]; then
    [[ -n ${BASE_PYTHON:-} ]] || find_base_python
    say "creating $venv with $BASE_PYTHON"
    "$BASE_PYTHON" -m venv "$venv"
  fi
  local want
  want=$( { cat "$requirements" ${no_deps:+"$no_deps"}; "$venv/bin/python" -c 'import sys; print(sys.version)'; } |
    sha256sum | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    return
  fi
  timed_setup "$venv/ (pip install -r $requirements${no_deps:+ $no_deps})" install_requirements "$@"
  echo "$want" >"$stamp"
}

install_requirements() {
  local venv=$1 requirements=$2 no_deps=${3:-}
  say "installing $requirements into $venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$requirements"
  if [[ -n $no_deps ]]; then
    say "installing $no_deps into $venv (without their dependencies)"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --no-deps -r "$no_deps"
  fi
}

# --- configure and build ---------------------------------------------------------------------

# ensure_build DIR VENV [CMAKE ARGS...]: configure_and_build DIR against VENV's Python, a set-up step.
ensure_build() { timed_setup "$1/ (configure, build)" configure_and_build "$1" "$ROOT/$2/bin/python" "${@:3}"; }

# configure_and_build DIR PYTHON [CMAKE ARGS...]: configures DIR with Ninja, BUILD_TYPE and the
# extra CMAKE ARGS against PYTHON (only when not yet configured that way; ninja re-runs CMake
# by itself when a CMakeLists.txt changes), then builds BUILD_TARGETS (everything when unset).
# .ci/gpu-run builds build-gpu/ with it, against the GPU machine's own python3.
configure_and_build() {
  local dir=$1 python=$2 cache="$1/CMakeCache.txt" args_stamp="$1/.dev-cmake-args"
  shift 2
  if ! [[ -f $dir/build.ninja && -f $cache ]] ||
     [[ $(sed -n 's/^Python_EXECUTABLE:[A-Z]*=//p' "$cache") != "$python" ]] ||
     ! grep -q "^CMAKE_BUILD_TYPE:STRING=$BUILD_TYPE\$" "$cache" ||
     [[ $(cat "$args_stamp" 2>/dev/null) != "$*" ]]; then
    if [[ -f $cache ]] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=Ninja\$" "$cache"; then
      rm -rf "$cache" "$dir/CMakeFiles"  # configured by another generator: start over
    fi
    say "configuring $dir (Python: $python)"
    rm -f "$args_stamp"  # a configure that fails still leaves its values in CMakeCache.txt
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DPython_EXECUTABLE="$python" "$@" || return
    printf '%s' "$*" >"$args_stamp"
  fi
  [[ -f $dir/.gitignore ]] || echo '*' >"$dir/.gitignore"  # keeps build dirs out of `git status`
  say "building $dir${BUILD_TARGETS:+ (${BUILD_TARGETS})}"
  # shellcheck disable=SC2086  # a space-separated list of targets
  cmake --build "$dir" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
}

# warn_if_disk_short: says so up front where the checkout's file system has less room than a
# first `test` run writes (measured on a fresh clone: 6 GB of venvs, 5 GB of build folders, a
# 5 GB venv for the wheel check, up to 5 GB of ccache), instead of a failing write far into it.
free_gb() { df -Pk "$ROOT" | awk 'NR == 2 { print int($4 / 1048576) }'; }

warn_if_disk_short() {
  local free_gb
  free_gb=$(free_gb)
  if ((free_gb < 20)); then
    printf 'dev.sh: warning: %s GB free on the file system of %s; a first `./dev.sh test` writes about 20 GB\n' \
      "$free_gb" "$ROOT" >&2
  fi
}

# make_room_for_wheel: the wheel check downloads and installs torch with CUDA's libraries into a
# fresh venv, about 9 GB at its peak. Where less is free (CI's disk filled there once), the
# folders of the stages that already ran go first, each said (the next run rebuilds them;
# none where a stage failed, so that its log stays), then pip's cache of downloads.
make_room_for_wheel() {
  local need_gb=10 dir
  for dir in "$BUILD_FUZZ" "$BUILD_ASAN" "$BUILD_LATEST" "$VENV_LATEST" pip-cache; do
    (($(free_gb) >= need_gb)) && return
    if [[ $dir == pip-cache ]]; then
      say "$(free_gb) GB free, the wheel check needs about $need_gb: emptying pip's cache"
      "$VENV/bin/python" -m pip cache purge >/dev/null 2>&1 || true
    elif [[ -e $dir ]] && ((!FAILED)); then  # once a stage failed, every folder stays, with its log
      say "$(free_gb) GB free, the wheel check needs about $need_gb: removing $dir (the next run rebuilds it)"
      rm -rf "$dir"
    fi
  done
  (($(free_gb) >= need_gb)) ||
    printf 'dev.sh: warning: %s GB free for the wheel check, which needs about %s GB\n' "$(free_gb)" "$need_gb" >&2
}

setup_system() {
  warn_if_disk_short
  apt_install "${APT_PACKAGES[@]}"
  check_cuda_headers
  use_ccache
}

setup_pinned() {
  ensure_venv "$VENV" requirements.txt requirements-libraries.txt
  ensure_build "$BUILD" "$VENV"
}

setup_latest() {
  ensure_venv "$VENV_LATEST" requirements-latest.txt
  # pybind11's headers from .venv where both pin the same release: the same files under one
  # path, so that ccache serves build-latest/ what build/ compiled with them (most tests, the
  # compiler module, the front end: their compile commands are build/'s to the byte).
  local pybind11=$VENV_LATEST
  [[ $(version_of "$VENV" pybind11) == "$(version_of "$VENV_LATEST" pybind11)" ]] && pybind11=$VENV
  ensure_build "$BUILD_LATEST" "$VENV_LATEST" -Dpybind11_DIR="$("$pybind11/bin/python" -m pybind11 --cmakedir)"
}

# The pinned environment, instrumented; torch stays out (its libraries are not instrumented,
# and a Python process would have to preload the ASan runtime to load the operator library).
setup_asan() {
  local link=-fsanitize=address,undefined
  ensure_venv "$VENV" requirements.txt requirements-libraries.txt
  # -O1 and line tables only (enough for ASan's stacks): an instrumented file compiles in
  # half the time of -O2 -g (autotune.cpp: 23 s against 48 s on one core of CI's kind). The
  # GPU tests are not built: they never run here. (-Og compiles faster still, but leaves
  # standard-library instantiations uninlined that libtritonrt's export map then exports.)
  ensure_build "$BUILD_ASAN" "$VENV" -DTRITONRT_BUILD_TORCH=OFF -DTRITONRT_BUILD_BENCHMARKS=OFF \
    -DTRITONRT_BUILD_GPU_TESTS=OFF -DCMAKE_CXX_FLAGS="$SANITIZE_FLAGS" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link" -DCMAKE_MODULE_LINKER_FLAGS="$link"
}

# tests/fuzz is a project of its own (no Python, no CUDA): the parsers' sources and the harnesses.
setup_fuzz() {
  apt_install "${APT_PACKAGES[@]}" "${FUZZ_APT_PACKAGES[@]}"
  timed_setup "$BUILD_FUZZ/ (configure, build)" configure_and_build_fuzz
}

# start_setup_fuzz, finish_setup_fuzz: setup_fuzz, built in the background for `test`. It
# needs no venv, so it builds while .venv's packages download and unpack, which keep at most
# one core busy; its output waits in build-fuzz/dev-build.log and is printed when it is done.
# The job is a process group of its own, ended whole (cmake, ninja, the compilers) where the
# run exits or is interrupted before finish_setup_fuzz: a re-run never finds a second ninja in
# build-fuzz/. Its compiles log their ccache counters in FUZZ_CCACHE_LOG, which ccache_counts
# leaves out of the steps beside it.
start_setup_fuzz() {
  apt_install "${APT_PACKAGES[@]}" "${FUZZ_APT_PACKAGES[@]}"
  mkdir -p "$BUILD_FUZZ"
  rm -f "$FUZZ_CCACHE_LOG"
  FUZZ_SETUP_BEGUN=$(date +%s)
  set -m  # job control: the next job starts in a process group of its own
  # set -e in the job: each step a command of its own, so that a failed one ends it (bash
  # ignores set -e inside an `a && b` list).
  (
    set -e
    export CCACHE_STATSLOG=$ROOT/$FUZZ_CCACHE_LOG
    configure_and_build_fuzz
    date +%s >"$BUILD_FUZZ/.dev-built-at"
  ) </dev/null >"$BUILD_FUZZ/dev-build.log" 2>&1 &
  FUZZ_SETUP_PID=$!
  set +m
  trap stop_setup_fuzz EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# stop_setup_fuzz: ends the background build's process group where it still runs.
stop_setup_fuzz() {
  kill -- -"$FUZZ_SETUP_PID" 2>/dev/null || true
}

finish_setup_fuzz() {
  local status=0 hits calls
  wait "$FUZZ_SETUP_PID" || status=$?
  trap - EXIT INT TERM
  cat "$BUILD_FUZZ/dev-build.log"
  ((status == 0)) || die "building $BUILD_FUZZ failed (exit $status; log: $BUILD_FUZZ/dev-build.log)"
  read -r hits calls < <(ccache_log_counts "$FUZZ_CCACHE_LOG")
  SUMMARY+=("$(printf '%-4s  %-44s  set-up [%d s%s, beside the steps above]' ok "$BUILD_FUZZ/ (configure, build)" \
    $(($(cat "$BUILD_FUZZ/.dev-built-at") - FUZZ_SETUP_BEGUN)) "$(ccache_note 0 0 "$hits" "$calls")")")
}

configure_and_build_fuzz() {
  local cache="$BUILD_FUZZ/CMakeCache.txt"
  if ! [[ -f $BUILD_FUZZ/build.ninja && -f $cache ]] || ! grep -q "^CMAKE_CXX_COMPILER:.*/$FUZZ_CXX\$" "$cache"; then
    rm -rf "$cache" "$BUILD_FUZZ/CMakeFiles"  # a compiler is chosen once per build dir
    say "configuring $BUILD_FUZZ (compiler: $FUZZ_CXX)"
    cmake -S tests/fuzz -B "$BUILD_FUZZ" -G Ninja -DCMAKE_CXX_COMPILER="$FUZZ_CXX"
  fi
  [[ -f $BUILD_FUZZ/.gitignore ]] || echo '*' >"$BUILD_FUZZ/.gitignore"
  say "building $BUILD_FUZZ"
  cmake --build "$BUILD_FUZZ"
}

# --- tests -----------------------------------------------------------------------------------

FAILED=0

version_of() {
  "$1/bin/python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$2" 2>/dev/null || echo none
}

# junit_counts VENV RESULTS...: "N passed, N failed, N skipped" from pytest's JUnit reports, added up.
junit_counts() {
  "$1/bin/python" - "${@:2}" <<'EOF'
import sys, xml.etree.ElementTree as ET
n = f = e = s = 0
for path in sys.argv[1:]:
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    counts = [int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")]
    n, f, e, s = n + counts[0], f + counts[1], e + counts[2], s + counts[3]
print(f"{n - f - e - s} passed, {f + e} failed, {s} skipped")
EOF
}

# run_ctest LABEL BUILD_DIR VENV [CTEST ARGS...]: ctest (pytest included: it is registered in
# tests/CMakeLists.txt), then one line for the summary.
run_ctest() {
  local label=$1 dir=$2 venv=$3
  shift 3
  # pytest runs as CTest tests of its own (tests/CMakeLists.txt), each with a JUnit report.
  local log="$dir/dev-ctest.log" status=0 results
  rm -f "$dir"/pytest-results*.xml
  say "ctest $* in $dir ($label)"
  (cd "$dir" && clean_env ctest --output-on-failure -j "$JOBS" "$@") 2>&1 | tee "$log" || status=$?

  local ctest_result="no result" pytest_result="NOT RUN" failed total skipped
  if read -r failed total < <(sed -En 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1 \2/p' "$log" | tail -1); then
    skipped=$(grep -Ec '\*\*\*Skipped|Not Run \(Disabled\)' "$log" || true)
    ctest_result="$((total - failed - skipped)) passed, $failed failed, $skipped skipped"
  fi
  results=("$dir"/pytest-results-*.xml)
  if [[ -f $dir/pytest-results-main.xml && -f $dir/pytest-results-store.xml ]]; then
    pytest_result=$(junit_counts "$venv" "${results[@]}")
  else
    status=1  # both halves must run: a build without them registered is a failure here
  fi
  ((status == 0)) || FAILED=1
  SUMMARY+=("$(printf '%-4s  %-44s  ctest: %-32s  pytest: %s' "$( ((status == 0)) && echo ok || echo FAIL)" \
    "$label" "$ctest_result" "$pytest_result")")
}

# run_sanitize: the CPU tests and pytest in build-asan, under the environment they need there.
run_sanitize() {
  # detect_leaks=0: CPython does not free what it allocates before exit; every test would fail.
  # use_sigaltstack=0: LLVM (in Triton) swaps a thread's signal stack for its own; ASan fails to unmap that one at thread exit.
  # abort_on_error=1: a report ends the process with SIGABRT, which no test expects (the CLI's own errors exit 1 or 2).
  local -x ASAN_OPTIONS=detect_leaks=0:use_sigaltstack=0:abort_on_error=1
  # print_stacktrace=1: UBSan reports say where; abort_on_error=1 as above.
  local -x UBSAN_OPTIONS=print_stacktrace=1:abort_on_error=1
  # A Triton cache of its own, emptied each run: kernels are compiled (LLVM and all) under ASan every time.
  local -x TRITON_CACHE_DIR="$ROOT/$BUILD_ASAN/triton-cache"
  # test_ops.py needs the operator library, which needs torch, which this build leaves out.
  local -x PYTEST_ADDOPTS="--ignore=$ROOT/tests/python/test_ops.py"
  rm -rf "$TRITON_CACHE_DIR"
  # pytest_frontend loads the front end's extension modules into an uninstrumented python.
  run_ctest "$BUILD_ASAN/ (ASan+UBSan, triton $(version_of "$VENV" triton))" "$BUILD_ASAN" "$VENV" -L cpu \
    -E pytest_frontend
}

# start_fuzz HARNESS: starts build-fuzz/fuzz_HARNESS in the background for FUZZ_SECONDS on a
# scratch copy of its seed corpus (the repository's is never written), and files it in
# FUZZING (fuzz_all's) as "HARNESS BEGUN" under its process id. A failing input is saved as
# build-fuzz/crashes/HARNESS-*; `build-fuzz/fuzz_HARNESS FILE` runs it again.
start_fuzz() {
  local harness=$1 corpus="$BUILD_FUZZ/corpus/$1" log="$BUILD_FUZZ/fuzz_$1.log"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$BUILD_FUZZ/crashes"
  cp tests/fuzz/corpus/"$harness"/* "$corpus"/
  say "fuzzing $harness for ${FUZZ_SECONDS}s (log: $log)"
  ASAN_SYMBOLIZER_PATH=$FUZZ_SYMBOLIZER "$BUILD_FUZZ/fuzz_$harness" -max_total_time="$FUZZ_SECONDS" -timeout=5 \
    -rss_limit_mb=2048 -artifact_prefix="$BUILD_FUZZ/crashes/$harness-" "$corpus" >"$log" 2>&1 &
  FUZZING[$!]="$harness $(date +%s)"
}

# finish_next_fuzz: waits for the first of the fuzzers in FUZZING to end, takes it out, and
# finish_fuzz. Each is looked at first: bash's `wait -n` misses a job that ended before it
# was called (a fuzzer that fails at once, while the next one is started).
finish_next_fuzz() {
  local pid status=0 waited
  ((${#FUZZING[@]})) || die "finish_next_fuzz: no fuzzer is running"
  while :; do
    for pid in "${!FUZZING[@]}"; do
      kill -0 "$pid" 2>/dev/null && continue
      wait "$pid" || status=$?
      # shellcheck disable=SC2086  # "HARNESS BEGUN"
      finish_fuzz ${FUZZING[$pid]} "$status"
      unset "FUZZING[$pid]"
      return
    done
    waited=0
    wait -n || waited=$?  # until one of them ends (its status is read again above)
    ((waited != 127)) || die "finish_next_fuzz: the fuzzers started are not this shell's jobs"
  done
}

# finish_fuzz HARNESS BEGUN STATUS: the line of an ended fuzzer for the summary, in
# FUZZ_LINES (fuzz_all's) under HARNESS.
finish_fuzz() {
  local harness=$1 corpus="$BUILD_FUZZ/corpus/$1" log="$BUILD_FUZZ/fuzz_$1.log" status=$3 result seeds
  seeds=$(find tests/fuzz/corpus/"$harness" -type f | wc -l)
  if ((status == 0)); then
    result="$(sed -En 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1 runs in \2 s/p' "$log"), $seeds seeds -> $(find "$corpus" -type f | wc -l) inputs, no failure"
  else
    FAILED=1
    tail -n 60 "$log"
    result="FAILED (exit $status): $(sed -En 's/.*Test unit written to (.*)/\1/p' "$log" | tail -1)"
  fi
  FUZZ_LINES[$harness]=$(printf '%-4s  %-44s  fuzz: %s  [%d s]' "$( ((status == 0)) && echo ok || echo FAIL)" \
    "$BUILD_FUZZ/fuzz_$harness (${FUZZ_SECONDS}s)" "$result" $(($(date +%s) - $2)))
}

# build_project SOURCE DIR PREFIX_PATH [CMAKE ARGS...]: configures the CMake project SOURCE in
# DIR (Ninja, Release) against the installs on PREFIX_PATH, and builds it, both under
# clean_env. The projects built on an installed tritonrt: tests/consumers here, and
# examples/custom_op and tests/consumers/embedded in .ci/gpu-run's wheel stage too.
build_project() {
  local source=$1 dir=$2 prefix_path=$3
  shift 3
  clean_env cmake -S "$source" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix_path" "$@" &&
    clean_env cmake --build "$dir"
}

# run_consumers: installs build/ into a scratch prefix and moves it (nothing may depend on
# where it was installed), runs the installed CLI from there, then configures, builds and runs
# each project of tests/consumers against it (the torch one where build/ has torch), then one
# line for the summary.
run_consumers() {
  local dir="$ROOT/$BUILD_CONSUMERS" log="$ROOT/$BUILD_CONSUMERS/consumers.log" status=0 done=()
  local kernels="$ROOT/examples/kernels/vector_ops.py" python="$ROOT/$VENV/bin/python" consumer
  local -x TRITONRT_CACHE_DIR="$dir/index"  # compiled here, not served by an index of earlier runs
  rm -rf "$dir"
  mkdir -p "$dir"
  echo '*' >"$dir/.gitignore"
  say "consumers: install $BUILD/, move it, build tests/consumers against it (log: $log)"
  local torch_prefix pip_cxx=${CXX:-}
  torch_prefix=$("$python" -c "import torch; print(torch.utils.cmake_prefix_path)" 2>/dev/null || true)
  # The compiler a pip build picks: a user's CXX, else scikit-build-core sets CXX to Python's
  # sysconfig CXX (up to its first flag), such as g++, where CMake alone takes c++ (the same
  # compiler on Debian). ccache hashes the compiler's name: with the same one, the subproject's
  # Release core (the pip builds' flags) is compiled once for it and both pip builds of `wheel`.
  # Where Python cannot say, c++: the consumers build all the same (their core not shared with pip's).
  [[ -n $pip_cxx ]] || pip_cxx=$("$python" -c 'import sysconfig, itertools
print(" ".join(itertools.takewhile(lambda w: not w.startswith("-"), (sysconfig.get_config_var("CXX") or "c++").split())))') ||
    pip_cxx=c++
  {
    cmake --install "$BUILD" --prefix "$dir/installed" && mv "$dir/installed" "$dir/moved" &&
      clean_env "$dir/moved/bin/tritonrt" compile "$kernels:add_kernel" --target cuda:90 \
        --signature '*fp32,*fp32,*fp32,4096,1024' && done+=("installed CLI")
  } >>"$log" 2>&1 || status=1
  for consumer in core torch subproject; do
    ((status == 0)) || break
    [[ $consumer == torch && ( -z $torch_prefix || ! -f $dir/moved/lib/cmake/tritonrt/tritonrtTorchTargets.cmake ) ]] && continue
    {
      echo "--- $consumer"
      CXX=$pip_cxx build_project "tests/consumers/$consumer" "$dir/$consumer" "$dir/moved;$torch_prefix" \
        -DTRITONRT_SOURCE_DIR="$ROOT" -DPython_EXECUTABLE="$python" -DTRITONRT_BUILD_TORCH=OFF &&
        clean_env "$dir/$consumer/consumer" "$kernels"
    } >>"$log" 2>&1 && done+=("$consumer") || status=1
  done
  ((status == 0)) && { check_embedded_consumer "$dir" >>"$log" 2>&1 && done+=("embedded") || status=1; }
  ((status == 0)) || { FAILED=1; tail -n 40 "$log"; }
  SUMMARY+=("$(printf '%-4s  %-44s  %s' "$( ((status == 0)) && echo ok || echo FAIL)" \
    "$BUILD_CONSUMERS/ (moved install of $BUILD/)" "built and ran: ${done[*]:-nothing}")")
}

# check_embedded_consumer DIR: tests/consumers/embedded (a copy, whose kernels it touches)
# built against DIR/moved with tritonrt_add_kernels: run with no Python and no .py file where
# it runs, every hash it prints is the one `tritonrt compile` gives; touching a kernel's
# source rebuilds its bundle, a build with nothing changed does nothing, and a bundle made
# again or in a second build folder has the first build's bytes; the same program linking
# tritonrt as an archive runs alone in an empty folder under `env -i`. Its bundles and the
# hashes they are checked against are compiled by .venv's Python, named (under clean_env the
# tool would pick one itself).
check_embedded_consumer() {
  local dir=$1 src=$1/embedded-src build=$1/embedded cli=$1/moved/bin/tritonrt out line kernel target hash
  local signature want first python="$ROOT/$VENV/bin/python"
  echo "--- embedded"
  rm -rf "$src" && cp -r tests/consumers/embedded "$src" || return 1
  build_project "$src" "$build" "$dir/moved" -DPython_EXECUTABLE="$python" || return 1
  out=$(cd / && clean_env env TRITONRT_PYTHON=/nonexistent/python TRITONRT_LIBPYTHON=/nonexistent/libpython.so \
    TRITONRT_CACHE_DIR="$dir/empty-index" "$build/consumer" /nonexistent/app/kernels.py) || { echo "$out"; return 1; }
  echo "$out"
  first=$out
  grep -q "^embedded bundles: 1$" <<<"$out" || { echo "expected one embedded bundle"; return 1; }
  [[ $(grep -c "^add_kernel \|^tuned_scale " <<<"$out") == 6 ]] || { echo "expected 6 hashes"; return 1; }
  while read -r kernel target hash; do
    case $kernel in
      add_kernel) signature='*fp32,*fp32,*fp32,1048576,1024' ;;
      tuned_scale) continue ;;
      *) continue ;;
    esac
    want=$(clean_env TRITONRT_PYTHON="$python" "$cli" compile "$src/kernels.py:$kernel" --target "$target" \
      --signature "$signature" --json |
      "$python" -c 'import json, sys; print(json.load(sys.stdin)["hash"])') || return 1
    [[ $hash == "$want" ]] || { echo "$kernel for $target: embedded $hash, tritonrt compile $want"; return 1; }
  done <<<"$out"
  for block in 256 1024; do  # each config of the autotuned kernel, compiled as its .fn with the config's BLOCK
    for target in cuda:80 cuda:90; do
      want=$(clean_env TRITONRT_PYTHON="$python" "$cli" compile "$src/kernels.py:tuned_scale.fn" --target "$target" \
        --signature "*fp32,*fp32,1048576,2.0,$block" --json |
        "$python" -c 'import json, sys; print(json.load(sys.stdin)["hash"])') || return 1
      grep -q "^tuned_scale $target $want$" <<<"$out" || { echo "tuned_scale BLOCK=$block for $target: $want not embedded"; return 1; }
    done
  done
  # One file: the program linking tritonrt as an archive, its kernels embedded by a static
  # library, copied alone into an empty folder and run with an empty environment: no
  # libtritonrt, no libpython, the same kernels as the program above.
  ! ldd "$build/one_file" | grep -E "libtritonrt|libpython" || { echo "one_file needs a library of tritonrt"; return 1; }
  rm -rf "$dir/alone" && mkdir "$dir/alone" && cp "$build/one_file" "$dir/alone/" || return 1
  out=$(cd "$dir/alone" && env -i ./one_file /nonexistent/app/kernels.py) || { echo "$out"; return 1; }
  echo "$out"
  [[ "$(grep -E "^(add_kernel|tuned_scale) " <<<"$out")" == "$(grep -E "^(add_kernel|tuned_scale) " <<<"$first")" &&
    $out == *"embedded bundles: 1"* ]] || { echo "one_file does not hold the kernels the program above holds"; return 1; }
  out=$("$cli" bundle list "$build/consumer") || return 1
  echo "$out"
  grep -q "kernels:tuned_scale" <<<"$out" || { echo "bundle list does not show the embedded kernels"; return 1; }
  # A library that embeds a bundle, loaded and unloaded: its kernels are still served.
  out=$(cd / && clean_env env TRITONRT_PYTHON=/nonexistent/python TRITONRT_LIBPYTHON=/nonexistent/libpython.so \
    TRITONRT_CACHE_DIR="$dir/empty-index" "$build/unloader" "$build/libplugin.so" /nonexistent/app/kernels.py) ||
    { echo "$out"; echo "the unloaded library's bundle could not be read"; return 1; }
  echo "$out"
  grep -q "^after dlclose: add_kernel with 5 parameters, 1 embedded bundle(s)$" <<<"$out" || return 1
  # Nothing changed: nothing to do. A kernel's source touched: its bundle made again.
  out=$(clean_env cmake --build "$build") || return 1
  echo "$out"
  [[ $out == *"no work to do"* ]] || { echo "a build with nothing changed did something"; return 1; }
  cp "$build/tritonrt_kernels/consumer/calls.trb" "$dir/first-build.trb" || return 1
  touch "$src/kernels.py"
  out=$(clean_env cmake --build "$build") || return 1
  echo "$out"
  grep -q "compiling the kernels of" <<<"$out" || { echo "touching kernels.py did not rebuild the bundle"; return 1; }
  # Two builds of one tree embed the same bytes: the bundle made again above (in the build's
  # own index, which held it) and a second build folder's (a fresh index) are the first's.
  cmp "$dir/first-build.trb" "$build/tritonrt_kernels/consumer/calls.trb" ||
    { echo "the bundle made again differs from the first build's"; return 1; }
  clean_env cmake -S "$src" -B "$dir/embedded-again" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$dir/moved" -DPython_EXECUTABLE="$python" >/dev/null &&
    clean_env cmake --build "$dir/embedded-again" --target consumer || return 1
  cmp "$dir/first-build.trb" "$dir/embedded-again/tritonrt_kernels/consumer/calls.trb" ||
    { echo "a second build folder's bundle differs from the first's"; return 1; }
}

# readme_block FILE NAME: the fenced block that follows the line `<!-- wheel-check: NAME -->`
# in FILE, as written there (run_wheel runs or writes the README's own text, never a copy).
readme_block() {
  local text
  # The fence must be the marker's next line, and close: anything else is no block at all.
  text=$(awk -v marker="<!-- wheel-check: $2 -->" '
    { sub(/\r$/, "") }
    inside && /^```/ { closed = 1; exit }
    inside { print; next }
    armed { if (/^```/) { inside = 1; armed = 0; next } exit }
    $0 == marker { armed = 1 }
    END { if (!closed) exit 1 }' "$1") && [[ -n $text ]] ||
    { echo "dev.sh: $1 has no closed block right under <!-- wheel-check: $2 -->" >&2; return 1; }
  printf '%s\n' "$text"
}

# in_venv VENV DIR NAME FILE: runs README block NAME of FILE with bash in DIR, VENV activated
# as a user's shell would have it (its bin/ first on PATH).
in_venv() {
  local venv=$1 dir=$2 block
  block=$(readme_block "$4" "$3") || return 1
  echo "--- $4, block $3, in $dir:"
  echo "$block"
  (cd "$dir" && clean_env VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" bash -euo pipefail -c "$block")
}

# run_wheel: what a pip user does, with the READMEs' commands as written. A fresh virtual
# environment without torch; `pip install .` (the core: no torch downloaded, timed) and the
# quick start's compile; the README's minimal C++ program built on tritonrt.cmake_prefix_path with no CMAKE_CXX_STANDARD;
# `import tritonrt.ops` refused with its reason; then the torch parts added as the README says,
# the quick start's Python program (no GPU: Triton's interpreter runs it), examples/custom_op built and tested in a copy as its README says (a torch install whose
# build environment is gone: the exported targets must name no path of it), and pytest against
# the installed package (TRITONRT_TEST_INSTALLED=1); then one line for the summary.
run_wheel() {
  local dir="$ROOT/$BUILD_WHEEL" log="$ROOT/$BUILD_WHEEL/wheel.log" status=0 step="creating the venv"
  local venv="$ROOT/$BUILD_WHEEL/venv" results="$ROOT/$BUILD_WHEEL/pytest-results.xml" pytest_result
  local core_seconds=0 torch_seconds=0 refusal
  rm -rf "$dir"
  mkdir -p "$dir/my_app"
  echo '*' >"$dir/.gitignore"
  [[ -n ${BASE_PYTHON:-} ]] || find_base_python
  say "wheel: the READMEs' install commands in a fresh venv, then test the installed package (log: $log)"
  {
    "$BASE_PYTHON" -m venv "$venv" && step="README: install-core" && SECONDS=0 &&
      in_venv "$venv" "$ROOT" install-core README.md && core_seconds=$SECONDS &&
      step="no torch after the core install" &&
      clean_env "$venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is not None)' &&
      step="README: quickstart-compile" && in_venv "$venv" "$ROOT" quickstart-compile README.md &&
      step="README: the minimal C++ program" &&
      readme_block README.md my_app/CMakeLists.txt >"$dir/my_app/CMakeLists.txt" &&
      readme_block README.md my_app/main.cpp >"$dir/my_app/main.cpp" &&
      mkdir -p "$dir/examples" && cp -r "$ROOT/examples/kernels" "$dir/examples/kernels" &&
      in_venv "$venv" "$dir" my_app README.md &&
      step="import tritonrt.ops without torch" &&
      refusal=$(clean_env "$venv/bin/python" -c "import tritonrt.ops" 2>&1 || true) && echo "$refusal" &&
      [[ $refusal == *"ImportError: tritonrt was built without torch"* ]] &&
      step="README: install-torch" && SECONDS=0 && in_venv "$venv" "$ROOT" install-torch README.md &&
      torch_seconds=$SECONDS && step="README: quickstart.py" &&
      readme_block README.md quickstart.py >"$dir/quickstart.py" && in_venv "$venv" "$dir" quickstart README.md &&
      step="the exported targets name no path of the gone build environment" &&
      ! grep -nE '(INTERFACE|IMPORTED)_[A-Z_]+ "(/|[^"]*;/)' \
        "$venv"/lib/python*/site-packages/tritonrt/lib/cmake/tritonrt/*Targets*.cmake &&
      step="examples/custom_op/README.md: custom-op" &&
      cp -r "$ROOT/examples/custom_op" "$dir/custom_op" && rm -rf "$dir/custom_op/build" &&
      in_venv "$venv" "$dir/custom_op" custom-op examples/custom_op/README.md && step="pytest" &&
      clean_env "$venv/bin/pip" install $(grep -E "^(pytest|numpy)==" requirements.txt)
  } >>"$log" 2>&1 || status=1
  if ((status == 0)); then
    # From the venv's folder: nothing of the source tree is importable but what the tests name.
    (cd "$dir" && clean_env TRITONRT_TEST_INSTALLED=1 MY_OPS_DIR="$dir/custom_op/build" "$venv/bin/python" -m pytest \
      "$ROOT/tests/python/test_package.py" "$ROOT/tests/python/test_ops.py" "$ROOT/tests/python/test_cli.py" \
      "$ROOT/examples/custom_op/test_my_ops.py" -q -p no:cacheprovider --junitxml="$results") >>"$log" 2>&1 ||
      status=1
  fi
  if [[ -f $results ]]; then
    pytest_result=$(junit_counts "$venv" "$results")
  else
    status=1
    pytest_result="NOT RUN ($step failed)"
  fi
  # Made anew each run: where all passed, its 5 GB (torch, CUDA's libraries) go, so that runs
  # in one place or in several clones do not fill the disk; a failing one stays to be looked at.
  ((status == 0)) && rm -rf "$venv"
  ((status == 0)) || { FAILED=1; tail -n 40 "$log"; }
  SUMMARY+=("$(printf '%-4s  %-44s  pip install . %ss, .[torch] %ss; pytest: %s' \
    "$( ((status == 0)) && echo ok || echo FAIL)" "$BUILD_WHEEL/ (READMEs' commands, fresh venv)" \
    "$core_seconds" "$torch_seconds" "$pytest_result")")
}

# timed STAGE ARGS...: runs a stage function, adding its duration (and how many of its compiles
# ccache answered) to the summary line it wrote.
timed() {
  local begun hits calls
  begun=$(date +%s)
  read -r hits calls < <(ccache_counts)
  "$@"
  SUMMARY[-1]+="  [$(($(date +%s) - begun)) s$(ccache_note "$hits" "$calls")]"
}

# fuzz_all: each fuzzer runs on one core, so they run JOBS at a time (CTEST_PARALLEL_LEVEL,
# else the cores), each for its FUZZ_SECONDS, the next started as soon as one ends; their
# lines in the summary in FUZZ_HARNESSES' order.
fuzz_all() {
  local harness
  local -A FUZZING=() FUZZ_LINES=()  # start_fuzz's and finish_fuzz's
  for harness in "${FUZZ_HARNESSES[@]}"; do
    ((${#FUZZING[@]} < JOBS)) || finish_next_fuzz
    start_fuzz "$harness"
  done
  while ((${#FUZZING[@]})); do finish_next_fuzz; done
  for harness in "${FUZZ_HARNESSES[@]}"; do SUMMARY+=("${FUZZ_LINES[$harness]}"); done
}

# summary LOGS...: the summary lines; exits 1, naming LOGS, when a step failed.
summary() {
  local took=$(($(date +%s) - STARTED))
  echo
  say "summary"
  printf '%s\n' "${SUMMARY[@]}"
  printf 'took %d min %02d s in all (set-up and builds included)\n' $((took / 60)) $((took % 60))
  if ((FAILED)); then
    echo "FAILED (full logs: $*)"
    exit 1
  fi
  echo "all tests passed"
}

test_all() {
  # 1. The pinned environment (what the GPU machine runs): every test; GPU tests skip without a GPU.
  timed run_ctest "$BUILD/ (triton $(version_of "$VENV" triton), torch $(version_of "$VENV" torch))" "$BUILD" "$VENV"
  # 2. The newest Triton, without torch: the core's CPU tests and pytest. The front end's tests
  # (pytest_frontend) compare with Triton 3.6's own launch path, the GPU machine's, and read its
  # internals (the binder, the driver's launcher): they run in 1. only, but for those of
  # descriptors inside tuples (pytest_frontend_tuples), which the newest Triton launches.
  timed run_ctest "$BUILD_LATEST/ (triton $(version_of "$VENV_LATEST" triton), no torch)" "$BUILD_LATEST" \
    "$VENV_LATEST" -L cpu -E '^pytest_frontend$'
  # 3. The parsers of outside text, fuzzed; 4. the CPU tests under AddressSanitizer + UBSan.
  fuzz_all
  timed run_sanitize
  # 5. The package as its users consume it: from CMake, and from pip.
  timed run_consumers
  make_room_for_wheel
  timed run_wheel
  summary "$BUILD/dev-ctest.log, $BUILD_LATEST/dev-ctest.log, $BUILD_FUZZ/fuzz_*.log, $BUILD_ASAN/dev-ctest.log," \
    "$BUILD_CONSUMERS/consumers.log, $BUILD_WHEEL/wheel.log"
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

main() {
  set -euo pipefail
  cd "$ROOT"
  STARTED=$(date +%s)
  case ${1:-} in
    example)
      setup_system
      BUILD_TARGETS=tritonrt_example setup_pinned  # the example and what it loads, no tests or benchmarks
      say "running $BUILD/examples/tritonrt_example"
      clean_env "$BUILD/examples/tritonrt_example"
      ;;
    test)
      setup_system
      start_setup_fuzz
      setup_pinned
      setup_latest
      finish_setup_fuzz
      setup_asan
      test_all
      ;;
    fuzz)
      setup_fuzz
      fuzz_all
      summary "$BUILD_FUZZ/fuzz_*.log"
      ;;
    sanitize)
      setup_system
      setup_asan
      run_sanitize
      summary "$BUILD_ASAN/dev-ctest.log"
      ;;
    consumers)
      setup_system
      setup_pinned
      run_consumers
      summary "$BUILD_CONSUMERS/consumers.log"
      ;;
    wheel)
      setup_system
      make_room_for_wheel
      run_wheel
      summary "$BUILD_WHEEL/wheel.log"
      ;;
    setup)
      setup_system
      setup_pinned
      setup_latest
      ;;
    -h | --help | help)
      usage
      ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

# Executed, dev.sh runs main. Sourced (`. ./dev.sh`, as .ci/gpu-run does), it only defines its
# variables and functions: it sets no shell option, changes no folder and runs nothing.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
