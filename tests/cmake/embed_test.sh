#!/bin/sh
# The C API as another project meets it: cmake --install to a temporary prefix;
# a C program built with pkg-config's flags against the installed header and
# library; examples/embed, configured as a separate project with that prefix on
# CMAKE_PREFIX_PATH, built, then run on the fake GPU worker (tests/fake_worker.c)
# twice: it tunes the first time and answers from the cache the second. Run with
# the installed gpubench-tune as its worker, on a machine without a GPU it
# answers from the cache alone. GB_KEEP_TEST_DIR=1 keeps the folder for a look.
#
#   embed_test.sh BUILD_DIR SOURCE_DIR FAKE_WORKER
set -eu
build=$1 src=$2 fake_worker=$3
work=$(mktemp -d /tmp/gb-embed-XXXXXX)
[ -n "${GB_KEEP_TEST_DIR:-}" ] || trap 'rm -rf "$work"' EXIT
fail() { echo "embed_test: $*" >&2; exit 1; }

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
libdir=$(sed -n 's/^libdir=\${prefix}\///p' "$build/gpubench.pc")
for f in include/gpubench/gpubench.h "$libdir/libgpubench.so" "$libdir/pkgconfig/gpubench.pc" \
         bin/gpubench-tune share/gpubench/templates/sgemm.cuh; do
    [ -e "$prefix/$f" ] || fail "cmake --install did not install $f"
done

# A library built with the sanitizers needs its programs built with them too (the
# runtime must come first): scripts/test.sh's second build.
san=""
if ldd "$prefix/$libdir/libgpubench.so" | grep -q libasan; then
    san="-fsanitize=address,undefined"
fi

# pkg-config, from the installed .pc (its paths are relative to itself).
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs gpubench) || fail "pkg-config does not know gpubench"
cat >"$work/version.c" <<'C'
#include <gpubench/gpubench.h>
#include <stdio.h>
int main(void)
{
    int major, minor;
    const char *v = gpubench_version(&major, &minor, NULL);
    printf("%s %d.%d %s\n", v, major, minor, gpubench_strerror(GPUBENCH_ENOTFOUND));
    return major == GPUBENCH_VERSION_MAJOR && minor == GPUBENCH_VERSION_MINOR ? 0 : 1;
}
C
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -pedantic -Wall -Wextra -Werror $san -o "$work/version" "$work/version.c" $flags \
    -Wl,-rpath,"$prefix/$libdir" 2>"$work/version.log" || { cat "$work/version.log" >&2; fail "cc"; }
"$work/version" >"$work/version.out" || fail "the C program saw another version"
grep -q "^0\.1\.0 0\.1 not found$" "$work/version.out" || fail "unexpected: $(cat "$work/version.out")"
# The library exports the API and nothing of the engine inside it.
nm -D --defined-only "$prefix/$libdir/libgpubench.so" | awk '$3 !~ /^(gpubench_|GPUBENCH_)/ {print $3}' \
    >"$work/exports" && [ ! -s "$work/exports" ] || fail "exports beyond the API: $(head -3 "$work/exports")"

# find_package(gpubench) and gpubench::libgpubench.
embed=$work/embed
cmake -S "$src/examples/embed" -B "$embed" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_FLAGS="$san" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; fail "configuring examples/embed failed"; }
cmake --build "$embed" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "build"; }

# Tuned the first time (on the fake worker), from the cache the second.
export GPUBENCH_CACHE="$work/cache" GPUBENCH_LEASE_DIR="$work/leases"
unset GPUBENCH_TEMPLATES
(cd "$work" && GPUBENCH_WORKER=$fake_worker "$embed/embed" 256 256 256 >run1.out 2>run1.err) ||
    { cat "$work/run1.err" >&2; fail "the first run failed"; }
grep -q "^K=256,M=256,N=256  BK=.*(tuned now)$" "$work/run1.out" || fail "run 1: $(cat "$work/run1.out")"
(cd "$work" && GPUBENCH_WORKER=$fake_worker "$embed/embed" 256 256 256 >run2.out 2>run2.err) ||
    { cat "$work/run2.err" >&2; fail "the second run failed"; }
grep -q "(from the cache)$" "$work/run2.out" || fail "run 2 did not answer from the cache"
[ "$(cut -d' ' -f3 "$work/run1.out")" = "$(cut -d' ' -f3 "$work/run2.out")" ] ||
    fail "the cache gave another configuration"

# The installed gpubench-tune as the worker (found beside the library): with a
# GPU it opens it; without one the cache alone answers, for the only device it has.
status=0
(cd "$work" && "$embed/embed" 256 256 256 >run3.out 2>run3.err) || status=$?
case $status in
0) grep -q "(from the cache)$\|(tuned now)$" "$work/run3.out" || fail "run 3: $(cat "$work/run3.out")" ;;
*) cat "$work/run3.err" >&2; fail "with the installed worker, embed exited with $status" ;;
esac
echo "embed_test: ok"
