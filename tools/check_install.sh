#!/usr/bin/env bash
# The out-of-tree path, end to end: installs attnbench from BUILD into a fresh prefix, builds
# examples/custom-cuda-attention against the installed package (find_package(attnbench)), and runs
# the installed attnbench with the example's plugin: `list` must show it next to the bundled six,
# and the example's check sweep must run (on a machine without a GPU its rows are `unsupported`,
# with the reason). docs/backends.md's plugin code is built and run the same way, as written.
# With a GPU, WORK keeps the check report.
# Usage: tools/check_install.sh [BUILD] [WORK]   (defaults: build, a temporary folder)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-$(mktemp -d)}
mkdir -p "$work"
say() { echo "[check_install] $*" >&2; }

nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { say "no nvcc: cannot build the CUDA example"; exit 1; }
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)

say "installing $build into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
say "building the example out of tree"
cmake -S examples/custom-cuda-attention -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_PREFIX_PATH="$work/prefix;$torch_prefix" >"$work/example-configure.log" 2>&1 \
  || { tail -30 "$work/example-configure.log"; exit 1; }
cmake --build "$work/example" >"$work/example-build.log" 2>&1 || { tail -40 "$work/example-build.log"; exit 1; }

# docs/backends.md's plugin, its CMake and C++ blocks as written, built the same way.
say "building docs/backends.md's plugin"
mkdir -p "$work/readme"
awk '/^## The bundled Hopper plugins/{exit} {print}' docs/backends.md >"$work/readme/section.md"
awk '/^```cmake/{on=1; next} /^```/{on=0} on' "$work/readme/section.md" >"$work/readme/CMakeLists.txt"
awk '/^```cpp/{on=1; next} /^```/{on=0} on' "$work/readme/section.md" >"$work/readme/mine_backend.cpp"
cmake -S "$work/readme" -B "$work/readme/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix;$torch_prefix" \
  >"$work/readme-configure.log" 2>&1 || { tail -30 "$work/readme-configure.log"; exit 1; }
cmake --build "$work/readme/build" >"$work/readme-build.log" 2>&1 || { tail -40 "$work/readme-build.log"; exit 1; }

export ATTNBENCH_PLUGIN_PATH="$work/example/plugins:$work/readme/build/plugins"
list=$("$work/prefix/bin/attnbench" list)
echo "$list"
for name in naive inplace math efficient flash cudnn wmma mine; do
  grep -q "^$name " <<<"$list" || { say "installed attnbench does not list '$name'"; exit 1; }
done
say "the example's check sweep with the installed attnbench (and docs/backends.md's plugin)"
"$work/prefix/bin/attnbench" run examples/custom-cuda-attention/check.yaml --force \
  --backends wmma,flash,mine -o "$work/check.csv" --no-summary
"$work/prefix/bin/attnbench" summary "$work/check.csv" | sed -n 1,8p
say "the installed plot command (share/attnbench/plots.py)"
"$work/prefix/bin/attnbench" plot "$work/check.csv" -o "$work/plots"
ls "$work/plots"/check.counts.png >/dev/null
say "ok"
