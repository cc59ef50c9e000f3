#!/bin/sh
# test_install.sh — what a C host project gets from `make install`.
#
# Installs into a fresh temporary prefix (not one the dynamic loader searches),
# builds harness/c/tiny_host.c with nothing but
#     cc tiny_host.c $(pkg-config --cflags --libs jcode_mobile)
# and checks that
#   * the host runs with no LD_LIBRARY_PATH and loads the installed library;
#   * valgrind --leak-check=full with the installed suppression file (named by
#     the .pc file) reports nothing: exit status 0.
# Run from the repository root (make test-install does). Needs pkg-config,
# valgrind and a built lib/. No network; each run is bounded by `timeout`.
set -eu

CC=${CC:-cc}
MAKE=${MAKE:-make}
repo=$(pwd)
prefix=$(mktemp -d "${TMPDIR:-/tmp}/jcode_mobile_prefix.XXXXXX")
trap 'rm -rf "$prefix"' EXIT INT TERM

fail() {
    echo "test-install: FAIL: $*" >&2
    exit 1
}

$MAKE --no-print-directory -s install PREFIX="$prefix" >/dev/null

# What the prefix holds.
for f in lib/libjcode_mobile.so.1 lib/libjcode_mobile.so include/jcode_mobile.h lib/pkgconfig/jcode_mobile.pc \
    share/jcode_mobile/valgrind.supp; do
    [ -e "$prefix/$f" ] || fail "make install did not install $f"
done

# What pkg-config tells a host.
PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export PKG_CONFIG_PATH
version=$(pkg-config --modversion jcode_mobile)
[ "$version" = "0.7.0" ] || fail "pkg-config --modversion: expected 0.7.0, got $version"
supp=$(pkg-config --variable=valgrind_suppressions jcode_mobile)
[ "$supp" = "$prefix/share/jcode_mobile/valgrind.supp" ] ||
    fail "pkg-config --variable=valgrind_suppressions: expected $prefix/share/jcode_mobile/valgrind.supp, got '$supp'"

# Build the host outside the checkout, from pkg-config's flags only.
cp "$repo/harness/c/tiny_host.c" "$prefix/tiny_host.c"
cd "$prefix"
# shellcheck disable=SC2046 # pkg-config's output is meant to be split into words
$CC -std=c99 -Wall -Wextra -Werror -pedantic tiny_host.c $(pkg-config --cflags --libs jcode_mobile) -o tiny_host ||
    fail "tiny_host does not build with \$(pkg-config --cflags --libs jcode_mobile)"

# Run it as a host would: no LD_LIBRARY_PATH, no hint from this repository.
unset LD_LIBRARY_PATH JCODE_MOBILE_LIB
loaded=$(ldd ./tiny_host | awk '$1 == "libjcode_mobile.so.1" { print ($3 == "not" ? "not found" : $3) }')
[ "$loaded" = "$prefix/lib/libjcode_mobile.so.1" ] ||
    fail "tiny_host loads libjcode_mobile.so.1 from '$loaded', expected $prefix/lib/libjcode_mobile.so.1"
out=$(timeout 60 ./tiny_host) || fail "tiny_host exited with status $? without LD_LIBRARY_PATH"
[ "$out" = "tiny_host: jcode_mobile 0.7.0 works" ] || fail "tiny_host printed '$out'"

# The command a host developer types, with the installed suppressions.
log="$prefix/valgrind.log"
if ! timeout 300 valgrind --error-exitcode=9 --leak-check=full --suppressions="$supp" ./tiny_host >"$log" 2>&1; then
    cat "$log" >&2
    fail "valgrind with the installed suppressions exited non-zero"
fi
grep -q "ERROR SUMMARY: 0 errors" "$log" || { cat "$log" >&2; fail "valgrind reported errors"; }

echo "test-install: make install PREFIX=<tmp> + pkg-config: the host builds, loads the library without" \
    "LD_LIBRARY_PATH, and is clean under valgrind with the installed suppressions"
