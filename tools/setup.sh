#!/usr/bin/env bash
# One entry point for a fresh machine: looks for what the build needs (commands on PATH, headers
# the compiler finds), installs only what is missing (apt-get, when it can; else it says what is
# missing and how to point the build at a copy; tools/check_setup.sh tests both), then
# configures and builds in build/, and
#   tools/setup.sh run [CONFIG]   runs a sweep (default configs/seed.yaml; configs/tiny.yaml on a
#                                 machine without a GPU), prints its summary and
#                                 draws its plots (results/<config>.plots/)
#   tools/setup.sh test           runs the whole test suite (GPU tests skip themselves without CUDA),
#                                 the install check and the Slurm check
#   tools/setup.sh build          only builds
#   tools/setup.sh device-deps    fills .whl/ (git-ignored) with what the Hopper plugins need on a
#                                 machine without network (the H200): the fa3-fwd wheel, the
#                                 cuDNN frontend's headers and FlashInfer's (with its CUTLASS and
#                                 CCCL, xz-packed); tools/device_run.sh installs them there
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:-run}
build=${ATTNBENCH_BUILD_DIR:-build}
say() { echo "[setup] $*" >&2; }

# What the build needs, looked for where it is used (a command on PATH, a header the compiler
# finds), never by asking dpkg: on a GPU node cmake and ninja often come from a venv or a module.
# Only what is missing is installed, with apt-get where it can be; else setup says what is missing
# and how to point the build at a copy.
missing=()  # "package|what is missing|how to point at a copy"
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_header() {  # the compiler finds <$1> on its own include path (CPATH counts)
  printf '#include <%s>\n' "$1" | ${CXX:-c++} -x c++ -std=c++17 -E - >/dev/null 2>&1
}
have_cmd cmake || missing+=("cmake|the cmake command|put a cmake >= 3.22 on PATH (pip install cmake)")
have_cmd ninja || missing+=("ninja-build|the ninja command|put ninja on PATH (pip install ninja)")
have_cmd "${CXX:-c++}" || missing+=("g++|a C++17 compiler|set CXX to one")
if have_cmd "${CXX:-c++}"; then
  for need in "libboost-dev|boost/dll.hpp" "libyaml-cpp-dev|yaml-cpp/yaml.h" "libcli11-dev|CLI/CLI.hpp" \
              "nlohmann-json3-dev|nlohmann/json.hpp" "libbenchmark-dev|benchmark/benchmark.h" \
              "libgtest-dev|gtest/gtest.h"; do
    have_header "${need#*|}" || missing+=("${need%%|*}|the header <${need#*|}>|add its include folder to CPATH and its prefix to CMAKE_PREFIX_PATH")
  done
fi
# Google Benchmark's compare.py, which one test runs on attnbench's export (skipped without it).
[ "$action" = test ] && [ ! -f /usr/share/benchmark/compare.py ] \
  && missing+=("libbenchmark-tools|Google Benchmark's compare.py|none needed: its test skips itself")
if ((${#missing[@]})); then
  packages=(); for m in "${missing[@]}"; do packages+=("${m%%|*}"); done
  sudo=""; [ "$(id -u)" -ne 0 ] && have_cmd sudo && sudo="sudo -n"
  if have_cmd apt-get && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; } \
     && say "installing ${packages[*]}" && $sudo apt-get update -qq >/dev/null 2>&1 \
     && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${packages[@]}" >/dev/null 2>&1; then
    :
  else
    say "cannot install what is missing here (no apt-get, no root, or no network):"
    for m in "${missing[@]}"; do
      rest=${m#*|}; say "  missing ${rest%%|*} (Debian: ${m%%|*}): ${rest#*|}"
    done
    # compare.py alone is optional; anything else stops the build here, not in CMake
    for m in "${missing[@]}"; do [ "${m%%|*}" = libbenchmark-tools ] || exit 1; done
  fi
fi

# $ATTNBENCH_VENV=DIR: the Python packages (torch, matplotlib, ...) go into a virtual environment
# there, made if missing, instead of the Python on PATH; the build and the Python backends use it.
if [ -n "${ATTNBENCH_VENV:-}" ]; then
  if [ ! -x "$ATTNBENCH_VENV/bin/python3" ]; then
    say "making a virtual environment in $ATTNBENCH_VENV"
    python3 -m venv "$ATTNBENCH_VENV" || { say "python3 -m venv failed (Debian: apt-get install python3-venv)"; exit 1; }
  fi
  export PATH="$ATTNBENCH_VENV/bin:$PATH"  # its python3 first, for this script and CMake
fi
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("2.11.0") else 1)' 2>/dev/null; then
  say "installing torch==2.11.0 (LibTorch comes from its wheel)"
  python3 -m pip install -q torch==2.11.0
fi
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
if ! python3 -c 'import matplotlib' 2>/dev/null; then
  say "installing matplotlib (attnbench plot draws with it)"
  python3 -m pip install -q matplotlib
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
  say "installing PyYAML (tools/layer_mix.py reads a report's sweep with it)"
  python3 -m pip install -q pyyaml
fi
# Whether pip's package index answers, asked once in a few seconds (a GPU node often has no
# network): the optional wheels below are then skipped in one line, with no pip retries.
index_reachable() {
  python3 - "${PIP_INDEX_URL:-https://pypi.org/simple/}" <<'PY' 2>/dev/null
import sys, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=4)
except Exception:
    sys.exit(1)
PY
}
optional=()
python3 -c 'import importlib.metadata as m; m.version("nvidia-cudnn-frontend")' 2>/dev/null \
  || optional+=("nvidia-cudnn-frontend==1.32.0|cudnn-fe")
python3 -c 'import importlib.metadata as m; m.version("flashinfer-python")' 2>/dev/null \
  || optional+=("flashinfer-python==0.7.2.post1|flashinfer")
if [ ${#optional[@]} -gt 0 ] && ! index_reachable; then
  skipped=(); for o in "${optional[@]}"; do skipped+=("${o#*|}"); done
  say "no package index reachable: the optional plugins ${skipped[*]} will be skipped (their header wheels are not installed)"
  optional=()
fi
# The cudnn-fe plugin's headers (header-only; cuDNN itself comes with torch) and the flashinfer
# plugin's (FlashInfer is header-only in C++; the wheel is pure Python plus flashinfer/data: its
# include/, CUTLASS and CCCL; --no-deps: its Python dependencies are not needed to compile the
# kernels). Without them the plugin is skipped at configure time, never the build.
for o in "${optional[@]}"; do
  say "installing ${o%%|*} (the ${o#*|} plugin's headers)"
  python3 -m pip install -q --no-deps --retries 0 --timeout 10 "${o%%|*}" 2>/dev/null \
    || say "${o%%|*} not installed: ${o#*|} will be skipped"
done
# FLA (pure Python and Triton), for the linear-attention backends' CPU test: their kernels run
# under Triton's interpreter (tests/linear_backends_cpu_test.py; skipped without it). --no-deps:
# its one import beyond torch and triton is einops.
if [ "$action" = test ] && ! python3 -c 'import fla, einops' 2>/dev/null; then
  say "installing fla-core 0.6.0 and einops (the linear-attention backends' CPU test)"
  python3 -m pip install -q --no-deps --retries 0 --timeout 10 fla-core==0.6.0 einops 2>/dev/null \
    || say "fla-core not installed: the FLA part of that test skips itself"
fi
if [ "$action" = test ] && ! python3 -c 'import scipy' 2>/dev/null; then
  say "installing scipy (Google Benchmark's compare.py, run by a test, needs it)"
  python3 -m pip install -q scipy
fi

if [ "$action" = device-deps ]; then
  # For the H200 (python 3.12, no network): the fa3-fwd wheel, and the frontend's include folder.
  mkdir -p .whl
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_24_x86_64 --platform manylinux_2_28_x86_64 -d .whl fa3-fwd==0.0.3
  site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -rf .whl/cudnn-frontend && mkdir -p .whl/cudnn-frontend && cp -r "$site/include" .whl/cudnn-frontend/
  # FlashInfer's headers, only the folders the plugin includes (62 MB, 3.6 MB packed)
  (cd "$site/flashinfer/data" && tar cJf - include cutlass/include cutlass/tools/util/include \
    cccl/cub cccl/thrust cccl/libcudacxx/include spdlog/include) >.whl/flashinfer-data.tar.xz
  grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
  du -sh .whl
  exit 0
fi

# cudnn-fe and flashinfer (minutes of nvcc: FlashInfer's sm_90a kernels) are built where they can
# run (AUTO); $ATTNBENCH_HOPPER_PLUGINS=ON builds them anyway, so that the tests of their host code
# run on a machine without a GPU (CI asks that: .ci/run), OFF never. An existing build keeps its
# own choice unless the variable asks another.
hopper=${ATTNBENCH_HOPPER_PLUGINS:-AUTO}
case $hopper in AUTO|ON|OFF) ;; *) say "ATTNBENCH_HOPPER_PLUGINS is AUTO, ON or OFF, not '$hopper'"; exit 2 ;; esac
if [ ! -f "$build/build.ninja" ]; then
  say "configuring $build/ (Hopper plugins: $hopper)"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
    -DPython3_EXECUTABLE="$(command -v python3)" \
    -DATTNBENCH_HOPPER_PLUGINS=$hopper >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
elif [ -n "${ATTNBENCH_HOPPER_PLUGINS:-}" ] && ! grep -qx "ATTNBENCH_HOPPER_PLUGINS:STRING=$hopper" "$build/CMakeCache.txt"; then
  say "configuring $build/ again with the Hopper plugins $hopper"
  cmake -S . -B "$build" -DATTNBENCH_HOPPER_PLUGINS=$hopper >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; exit 1; }
fi
# `run` builds only what a run needs (the executables and the plugins); `test` and `build` all.
targets=(); [ "$action" = run ] && targets=(attnbench_runnable)
say "building (ninja -C $build ${targets[*]}; the whole log in $build.build.log)"
# Progress as it goes: every tenth step and the last, on stderr; the full output in the log.
progress() {
  local line
  while IFS= read -r line; do
    [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
    if (( BASH_REMATCH[1] % 10 == 0 || BASH_REMATCH[1] == BASH_REMATCH[2] )); then
      say "[${BASH_REMATCH[1]}/${BASH_REMATCH[2]}] ${line##* }"
    fi
  done
}
ninja -C "$build" -j"$(nproc)" "${targets[@]}" 2>&1 | tee "$build.build.log" | progress \
  || { grep -E "error|FAILED" -A5 "$build.build.log" | head -80; echo "build failed: $build.build.log" >&2; exit 1; }

case $action in
  build) ;;
  run)
    # No GPU here: the study's sweep would take minutes on the CPU; a newcomer's first run gets
    # the seconds-long sweep (name a config to run another).
    default=configs/seed.yaml
    if ! nvidia-smi -L >/dev/null 2>&1; then
      default=configs/tiny.yaml
      [ -z "${2:-}" ] && say "no GPU: running $default (tools/setup.sh run configs/seed.yaml for the study's sweep)"
    fi
    config=${2:-$default}
    output=results/$(basename "$config" .yaml).csv
    "$build/attnbench" run "$config" --force -o "$output" && status=0 || status=$?
    "$build/attnbench" plot "$output"  # the pictures, beside the report in <stem>.plots/
    exit $status ;;
  test)
    # Every check runs to the end, whatever an earlier one found; then what failed, and exit 1.
    failed=()
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)" || failed+=("ctest (the tests above marked Failed)")
    tools/check_install.sh "$build" || failed+=("tools/check_install.sh (install, the out-of-tree example)")
    tools/slurm_check.sh "$build" || failed+=("tools/slurm_check.sh (a one-node Slurm array and its merge)")
    if ((${#failed[@]})); then
      say "FAILED:"; for f in "${failed[@]}"; do say "  $f"; done
      exit 1
    fi
    say "every check passed"
    ;;
  *) echo "usage: tools/setup.sh run [CONFIG] | test | build" >&2; exit 2 ;;
esac
