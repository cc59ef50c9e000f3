#!/usr/bin/env bash
# Runs the Swift suite of a build already made in N processes at once, one per core.
#
#   harness/swift/shards.sh N SCRATCH_PATH [SKIP_REGEX]
#
# The test bundle lists its XCTest tests; test i goes to shard i mod N, which
# spreads a class's slow tests over the shards. Each shard is one run of the
# bundle given its tests (so a sanitizer's start-up is paid N times, not once
# per test as `swift test --parallel` pays it); the first shard also runs the
# Swift Testing tests. Tests whose names match SKIP_REGEX (grep -E) are left
# out. Each shard's output is kept apart and printed when all have ended; the
# run fails if one did. Sanitizer options come from the environment
# (ASAN_OPTIONS, TSAN_OPTIONS), as for `swift test`.
set -euo pipefail
shards=$1 scratch=$2 skip=${3:-}
bundle=$(swift build --show-bin-path --scratch-path "$scratch")/JcodeMobilePackageTests.xctest
[ -x "$bundle" ] || { echo "shards: no test bundle at $bundle (build with --build-tests first)" >&2; exit 1; }
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

"$bundle" --list-tests | grep -E '^[A-Za-z0-9_]+\.[A-Za-z0-9_]+/' > "$logs/all"
if [ -n "$skip" ]; then grep -vE "$skip" "$logs/all" > "$logs/tests" || true; else cp "$logs/all" "$logs/tests"; fi
total=$(wc -l < "$logs/tests")
[ "$total" -gt 0 ] || { echo "shards: the bundle listed no tests" >&2; exit 1; }

for ((s = 0; s < shards; s++)); do
    names=$(awk -v n="$shards" -v s="$s" 'NR % n == s' "$logs/tests" | paste -sd,)
    # XCTest takes its tests as one argument; Linux caps one argument at 128 KiB.
    [ ${#names} -lt 131000 ] || { echo "shards: shard $s names too many tests for one argument; use more shards" >&2; exit 1; }
    { status=0
      "$bundle" "$names" > "$logs/out-$s" 2>&1 || status=$?
      if [ "$s" = 0 ]; then "$bundle" --testing-library swift-testing >> "$logs/out-$s" 2>&1 || status=$?; fi
      echo $status > "$logs/status-$s"; } &
done
wait

status=0
for ((s = 0; s < shards; s++)); do
    echo "== Swift suite, shard $((s + 1)) of $shards"
    cat "$logs/out-$s"
    code=$(cat "$logs/status-$s")
    [ "$code" = 0 ] || { echo "== Swift suite, shard $((s + 1)) of $shards failed ($code)"; status=1; }
done
echo "== Swift suite: $total XCTest tests in $shards shards$([ -n "$skip" ] && echo ", $(( $(wc -l < "$logs/all") - total )) skipped")"
exit $status
