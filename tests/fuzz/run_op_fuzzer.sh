#!/usr/bin/env bash
# The op fuzzer (tests/fuzz/op_fuzzer.cc) over every registered op: on the CPU and on Vulkan (when a
# Vulkan device opens; lavapipe here), built plainly and under ASan+UBSan (bazel --config=asan).
# Exits 0 when no run found a problem outside tests/fuzz/op_fuzzer_known.txt; every new problem
# prints a one-line repro (`op_fuzzer --device=D --seed=S --op=OP --trial=K   # description`).
#
#   tests/fuzz/run_op_fuzzer.sh           # CI size (tools/test): about 1-3 minutes on 2 cores
#   tests/fuzz/run_op_fuzzer.sh --full    # 1000 trials per op in all four runs, no per-op time budget
#
# Environment: OP_FUZZ_SEED (default 1: CI runs are reproducible; any number explores new trials),
# OP_FUZZ_RUNS (default "cpu vulkan cpu-asan vulkan-asan"), OP_FUZZ_TRIALS (overrides every run's
# count), OP_FUZZ_OUT (default ${TMPDIR:-/tmp}/cairn-op-fuzz: the two binaries and one log per run),
# OP_FUZZ_REQUIRE_VULKAN=1 (fail instead of skipping the Vulkan runs when no device opens),
# OP_FUZZ_SECONDS (default 360, --full 3600: the whole stage's wall-clock bound after the builds; a
# run still going then is stopped and fails).
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${OP_FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-op-fuzz}"
mkdir -p "$out"
seed="${OP_FUZZ_SEED:-1}"
runs="${OP_FUZZ_RUNS:-cpu vulkan cpu-asan vulkan-asan}"
full=0
[ "${1:-}" = "--full" ] && full=1

# Trials per op and the per-op time budget (seconds) of each run. The CI sizes keep the whole stage
# within a few minutes on 2 shared cores: the Vulkan FFTs cost 0.05-0.25 s a call on lavapipe (a
# VkFFT plan per call, slower under ASan), so the Vulkan runs stop an op at its budget and say so.
declare -A trials budget
if [ "$full" = 1 ]; then
  trials=([cpu]=1000 [vulkan]=1000 [cpu-asan]=1000 [vulkan-asan]=1000)
  budget=([cpu]=600 [vulkan]=600 [cpu-asan]=600 [vulkan-asan]=600)
else
  trials=([cpu]=300 [vulkan]=300 [cpu-asan]=300 [vulkan-asan]=300)
  budget=([cpu]=30 [vulkan]=20 [cpu-asan]=30 [vulkan-asan]=30)
fi

# Sanitizer settings: huge allocations fail (and the op must say so) instead of aborting; leak
# checking is off (children leave with _exit; Mesa's allocations are not ours).
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:abort_on_error=1:symbolize=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

build() {  # build CONFIG_FLAGS... -> copies the binary to $out/op_fuzzer$suffix
  local suffix="$1"; shift
  echo "==> bazel build $* //tests/fuzz:op_fuzzer"
  if ! bazel build "$@" //tests/fuzz:op_fuzzer >"$out/build$suffix.log" 2>&1; then
    tail -n 30 "$out/build$suffix.log"
    return 1
  fi
  install -m 0755 bazel-bin/tests/fuzz/op_fuzzer "$out/op_fuzzer$suffix"
}

need_asan=0
need_plain=0
for r in $runs; do
  case "$r" in *-asan) need_asan=1 ;; *) need_plain=1 ;; esac
done
# tools/test runs the ASan suites just before the fuzzers, so the ASan objects are current: build
# that variant first (the plain one then comes from Bazel's caches).
if [ "$need_asan" = 1 ]; then build _asan --config=asan || exit 1; fi
if [ "$need_plain" = 1 ]; then build "" || exit 1; fi

status=0
summary=()
deadline=$((SECONDS + ${OP_FUZZ_SECONDS:-$([ "$full" = 1 ] && echo 3600 || echo 360)}))
start=$SECONDS
total_trials=0
for r in $runs; do
  device="${r%-asan}"
  bin="$out/op_fuzzer"
  [ "$r" != "$device" ] && bin="$out/op_fuzzer_asan"
  n="${OP_FUZZ_TRIALS:-${trials[$r]}}"
  timeout_trial=10
  [ "$r" != "$device" ] && timeout_trial=30
  if [ "$device" = vulkan ]; then
    "$bin" --device=vulkan --probe >/dev/null 2>&1
    rc=$?
    if [ "$rc" = 77 ]; then
      if [ "${OP_FUZZ_REQUIRE_VULKAN:-0}" = 1 ]; then
        echo "==> $r: no Vulkan device opens (OP_FUZZ_REQUIRE_VULKAN=1)"
        status=1
      else
        echo "==> $r: skipped, no Vulkan device opens"
        summary+=("$r: skipped (no Vulkan device)")
      fi
      continue
    elif [ "$rc" != 0 ]; then
      echo "==> $r: the Vulkan probe failed with status $rc"
      status=1
      continue
    fi
  fi
  log="$out/$r.log"
  echo "==> $r: $n trials per op, seed $seed (log: $log)"
  # The stage's deadline is a safety net: every op is bounded by its budget and trial timeout.
  left=$((deadline - SECONDS))
  if [ "$left" -le 0 ]; then
    echo "==> $r: not run, the stage's time is used up"
    status=1
    continue
  fi
  timeout "$left" "$bin" --device="$device" --seed="$seed" --trials="$n" --op-seconds="${budget[$r]}" \
    --trial-timeout="$timeout_trial" --jobs=2 --known=tests/fuzz/op_fuzzer_known.txt >"$log" 2>&1
  rc=$?
  # New problems (and their repro lines) and the per-run totals; the per-op table stays in the log.
  grep -a -A1 '^FAIL ' "$log" | cut -c1-600
  grep -a -A40 '^FAIL .*crash' "$log" | grep -a '^    |' | head -n 40
  grep -a 'stopped: op time budget' "$log" | sed 's/^/    budget: /'
  last="$(grep -a '^op_fuzzer ' "$log" | tail -n 1)"
  echo "    $last"
  summary+=("$r: ${last:-no summary (status $rc)}")
  n_run=$(sed -n 's/^op_fuzzer .* ops, \([0-9]*\) trials.*/\1/p' <<<"$last")
  total_trials=$((total_trials + ${n_run:-0}))
  if [ "$rc" != 0 ]; then status=1; fi
done

echo "op fuzzer summary:"
printf '  %s\n' "${summary[@]}"
echo "op fuzzer: ${#summary[@]} runs, $total_trials trials, $((SECONDS - start)) s after the builds, $([ "$status" = 0 ] && echo "no new problems" || echo "FAILED (see the FAIL lines and repros above)")"
exit "$status"
