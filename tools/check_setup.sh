#!/usr/bin/env bash
# tools/setup.sh on a machine like a GPU node: apt-get, dpkg and sudo fail (no root, no network).
# With everything present, `setup.sh build` must pass without calling any of them; with a header
# missing, it must say which, and how to point the build at a copy, and exit non-zero.
# Usage: tools/check_setup.sh [BUILD]   (a configured build folder; default build)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shims=$(mktemp -d)
trap 'rm -rf "$shims"' EXIT
for c in apt-get dpkg dpkg-query sudo; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/called"\nexit 1\n' "$c" "$shims" >"$shims/$c"
  chmod +x "$shims/$c"
done
fail() { echo "[check_setup] FAILED: $*" >&2; exit 1; }

# The folder keeps its own configuration: the Hopper plugins as it has them (never switched on, which
# would start minutes of nvcc in a folder it was only given to check).
hopper=$(sed -n 's/^ATTNBENCH_HOPPER_PLUGINS:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null)
export ATTNBENCH_HOPPER_PLUGINS=${hopper:-AUTO}
PATH="$shims:$PATH" ATTNBENCH_BUILD_DIR="$build" tools/setup.sh build >"$shims/out" 2>&1 \
  || { cat "$shims/out"; fail "setup.sh build failed with everything present"; }
[ "$(sed -n 's/^ATTNBENCH_HOPPER_PLUGINS:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null)" = "$hopper" ] \
  || fail "setup.sh build switched the Hopper plugins of the folder it was given ($build)"
[ -f "$shims/called" ] && fail "setup.sh called $(cat "$shims/called") with everything present"

# A compiler that cannot find yaml-cpp's header (the build folder is configured: CMake keeps its own).
printf '#!/bin/sh\nin=$(cat); case "$in" in *yaml-cpp*) exit 1;; esac\nprintf "%%s\\n" "$in" | c++ "$@"\n' \
  >"$shims/cxx"
chmod +x "$shims/cxx"
PATH="$shims:$PATH" CXX="$shims/cxx" ATTNBENCH_BUILD_DIR="$build" tools/setup.sh build >"$shims/out" 2>&1 \
  && { cat "$shims/out"; fail "setup.sh build passed without yaml-cpp's header"; }
grep -q "missing the header <yaml-cpp/yaml.h> (Debian: libyaml-cpp-dev): add its include folder to CPATH" "$shims/out" \
  || { cat "$shims/out"; fail "no message naming the missing header"; }
echo "[check_setup] ok: no apt-get, dpkg or sudo when everything is there; a missing header named"
