#!/usr/bin/env bash
# tritonrt's developer entry point: sets everything up on a fresh Debian machine, then builds
# and runs what was asked. Safe to re-run: every step is skipped when already done.
#
#   ./dev.sh example   set up, build, run build/examples/tritonrt_example
#   ./dev.sh test      set up, build, run every test: ctest + pytest with the pinned Triton
#                      (.venv, build/), then the CPU tests + pytest with the newest Triton
#                      and no torch (.venv-latest, build-latest/), then a summary
#   ./dev.sh setup     set up and build only
#
# Overrides (all optional):
#   TRITONRT_DEV_PYTHON   base interpreter for the virtual environments (default: Python 3.12)
#   TRITONRT_DEV_NO_APT=1 never call apt-get (missing packages become an error)
#   CMAKE_BUILD_TYPE      default RelWithDebInfo
#   CMAKE_BUILD_PARALLEL_LEVEL, CTEST_PARALLEL_LEVEL   honoured by cmake / ctest
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"

VENV=.venv                          # requirements.txt: what the GPU machine runs
BUILD=build
VENV_LATEST=.venv-latest            # requirements-latest.txt: newest Triton, no torch
BUILD_LATEST=build-latest
BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo}
JOBS=${CTEST_PARALLEL_LEVEL:-$(nproc)}
APT_PACKAGES=(cmake g++ ninja-build nlohmann-json3-dev libgtest-dev)

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'dev.sh: %s\n' "$*" >&2; exit 1; }

# The programs under test read these to pick an interpreter; each build must use its own venv.
clean_env() { env -u VIRTUAL_ENV -u TRITONRT_PYTHON -u PYTHONHOME -u PYTHONPATH "$@"; }

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
  # Package lists may be absent or stale on a fresh machine: refresh them only when needed.
  "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}" ||
    { "${sudo[@]}" apt-get update && "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; }
}

# Usable base interpreter: Python >= 3.10 with venv and the headers CMake's Development.Embed needs.
python_usable() {
  "$1" - <<'EOF' >/dev/null 2>&1
import os, sys, sysconfig, venv, ensurepip
assert sys.version_info >= (3, 10)
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))
EOF
}

find_base_python() {
  if [[ -n ${TRITONRT_DEV_PYTHON:-} ]]; then
    python_usable "$TRITONRT_DEV_PYTHON" || die "TRITONRT_DEV_PYTHON=$TRITONRT_DEV_PYTHON is not a usable Python >= 3.10"
    echo "$TRITONRT_DEV_PYTHON"
    return
  fi
  local candidate
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 python3.12 python3.13 python3.11 \
                   python3.10 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && python_usable "$candidate"; then
      command -v "$candidate"
      return
    fi
  done
  # Debian's own python3 (3.11 on bookworm) works once its venv and header packages are in.
  apt_install python3 python3-venv python3-dev >&2
  python_usable /usr/bin/python3 || die "no usable Python >= 3.10 found; set TRITONRT_DEV_PYTHON"
  echo /usr/bin/python3
}

check_cuda_headers() {
  # The core needs only the driver API's headers (cuda.h); libcuda is loaded at run time.
  [[ -n ${CUDAToolkit_ROOT:-} ]] || command -v nvcc >/dev/null || [[ -f /usr/local/cuda/include/cuda.h ]] ||
    die "the CUDA toolkit was not found (expected /usr/local/cuda or nvcc on PATH; or set CUDAToolkit_ROOT)"
}

# --- virtual environments --------------------------------------------------------------------

# ensure_venv DIR REQUIREMENTS: creates DIR if needed; reinstalls only when the requirements
# file (or the interpreter) changed since the last successful install, recorded in a stamp.
ensure_venv() {
  local venv=$1 requirements=$2 stamp="$1/.dev-requirements.sha256"
  if [[ -L $venv && ! -e $venv ]]; then
    rm "$venv"  # a dangling link
  fi
  if [[ -e $venv ]] && ! "$venv/bin/python" -c pass >/dev/null 2>&1; then
    [[ -f $venv/pyvenv.cfg ]] || die "$venv exists but is not a virtual environment; move it away"
    say "$venv is broken: recreating it"
    rm -rf "$venv"
  fi
  if [[ ! -e $venv ]]; then
    [[ -n ${BASE_PYTHON:-} ]] || BASE_PYTHON=$(find_base_python)
    say "creating $venv with $BASE_PYTHON"
    "$BASE_PYTHON" -m venv "$venv"
  fi
  local want
  want=$( { cat "$requirements"; "$venv/bin/python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    return
  fi
  say "installing $requirements into $venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet -r "$requirements"
  echo "$want" >"$stamp"
}

# --- configure and build ---------------------------------------------------------------------

# ensure_build DIR VENV: configures DIR with Ninja against VENV's Python (only when not yet
# configured that way; ninja re-runs CMake by itself when a CMakeLists.txt changes), then builds.
ensure_build() {
  local dir=$1 python="$ROOT/$2/bin/python" cache="$1/CMakeCache.txt"
  if ! [[ -f $dir/build.ninja && -f $cache ]] ||
     ! grep -Eq "^Python_EXECUTABLE:[A-Z]+=$python\$" "$cache" ||
     ! grep -q "^CMAKE_BUILD_TYPE:STRING=$BUILD_TYPE\$" "$cache"; then
    if [[ -f $cache ]] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=Ninja\$" "$cache"; then
      rm -rf "$cache" "$dir/CMakeFiles"  # configured by another generator: start over
    fi
    say "configuring $dir (Python: $python)"
    cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DPython_EXECUTABLE="$python"
  fi
  [[ -f $dir/.gitignore ]] || echo '*' >"$dir/.gitignore"  # keeps build dirs out of `git status`
  say "building $dir"
  cmake --build "$dir"
}

setup_system() {
  apt_install "${APT_PACKAGES[@]}"
  check_cuda_headers
}

setup_pinned() {
  ensure_venv "$VENV" requirements.txt
  ensure_build "$BUILD" "$VENV"
}

setup_latest() {
  ensure_venv "$VENV_LATEST" requirements-latest.txt
  ensure_build "$BUILD_LATEST" "$VENV_LATEST"
}

# --- tests -----------------------------------------------------------------------------------

SUMMARY=()
FAILED=0

version_of() {
  "$1/bin/python" -c "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))" "$2" 2>/dev/null || echo none
}

# run_ctest LABEL BUILD_DIR VENV [CTEST ARGS...]: ctest (pytest included: it is registered in
# tests/CMakeLists.txt), then one line for the summary.
run_ctest() {
  local label=$1 dir=$2 venv=$3
  shift 3
  local log="$dir/dev-ctest.log" results="$dir/pytest-results.xml" status=0
  rm -f "$results"
  say "ctest $* in $dir ($label)"
  (cd "$dir" && clean_env ctest --output-on-failure -j "$JOBS" "$@") 2>&1 | tee "$log" || status=$?

  local ctest_result="no result" pytest_result="NOT RUN" failed total skipped
  if read -r failed total < <(sed -En 's/.* ([0-9]+) tests failed out of ([0-9]+).*/\1 \2/p' "$log" | tail -1); then
    skipped=$(grep -Ec '\*\*\*Skipped|Not Run \(Disabled\)' "$log" || true)
    ctest_result="$((total - failed - skipped)) passed, $failed failed, $skipped skipped"
  fi
  if [[ -f $results ]]; then
    pytest_result=$("$venv/bin/python" - "$results" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
n, f, e, s = (int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
print(f"{n - f - e - s} passed, {f + e} failed, {s} skipped")
EOF
)
  else
    status=1  # pytest must run: a build without it registered is a failure here
  fi
  ((status == 0)) || FAILED=1
  SUMMARY+=("$(printf '%-4s  %-44s  ctest: %-32s  pytest: %s' "$( ((status == 0)) && echo ok || echo FAIL)" \
    "$label" "$ctest_result" "$pytest_result")")
}

test_all() {
  # 1. The pinned environment (what the GPU machine runs): every test; GPU tests skip without a GPU.
  run_ctest "$BUILD/ (triton $(version_of "$VENV" triton), torch $(version_of "$VENV" torch))" "$BUILD" "$VENV"
  # 2. The newest Triton, without torch: the core's CPU tests and pytest.
  run_ctest "$BUILD_LATEST/ (triton $(version_of "$VENV_LATEST" triton), no torch)" "$BUILD_LATEST" \
    "$VENV_LATEST" -L cpu
  echo
  say "summary"
  printf '%s\n' "${SUMMARY[@]}"
  if ((FAILED)); then
    echo "FAILED (full logs: $BUILD/dev-ctest.log, $BUILD_LATEST/dev-ctest.log)"
    exit 1
  fi
  echo "all tests passed"
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

case ${1:-} in
  example)
    setup_system
    setup_pinned
    say "running $BUILD/examples/tritonrt_example"
    clean_env "$BUILD/examples/tritonrt_example"
    ;;
  test)
    setup_system
    setup_pinned
    setup_latest
    test_all
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
