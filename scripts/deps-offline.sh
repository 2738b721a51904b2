#!/bin/sh
# On a machine with no network: unpacks the packages that scripts/deps-bundle.sh
# downloaded (.deps/debs) into a prefix (.deps/root, never /), then builds
# gpubench against it and runs every test (--build-only: no tests). Extra
# arguments go to cmake. The tools find the bundle's libraries through their
# RPATH, except those loaded in turn (libgsl's libgslcblas): run them with
# LD_LIBRARY_PATH=.deps/root/usr/lib/x86_64-linux-gnu.
#
#   scripts/deps-offline.sh [--build-only] [BUILD_DIR] [cmake -D options...]
set -eu
cd "$(dirname "$0")/.."
build_only=0
if [ "${1:-}" = "--build-only" ]; then
    build_only=1
    shift
fi
root="$PWD/.deps/root"
ls .deps/debs/*.deb >/dev/null 2>&1 || {
    echo "deps-offline: no packages in .deps/debs: run scripts/deps-bundle.sh first" >&2
    exit 1
}
mkdir -p "$root"
for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root"; done

# The bundle's libraries for the tools and tests run here: the build RPATH names
# the libraries the binaries link, but not what those load in turn (libgsl's
# libgslcblas), which the loader looks for on its own path.
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# pkg-config from the bundle when the machine has none.
if ! command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG="$root/usr/bin/pkgconf"
    set -- "$@" -DPKG_CONFIG_EXECUTABLE="$root/usr/bin/pkgconf"
fi
dir="${1:-build-offline}"
[ $# -gt 0 ] && shift
scripts/build.sh "$dir" -DGB_DEPS_PREFIX="$root" "$@"
[ "$build_only" = 1 ] || ctest --test-dir "$dir" --output-on-failure
