#!/usr/bin/env bash
# MpiCollective under mpirun on loopback (tests/mpi/mpi_collective_test.cc) and the C API's
# cairn_mpi_* (capi_mpi_test.c): 2 and 4 ranks, with the flags FORMATS.md gives for root on 2 shared
# cores, each run bounded by `timeout`; then the multi-worker strategy (multi_worker_test.cc; the
# digits MLP with fit, multi_worker_digits.c; a rank killed during a step and the job restarted
# from fit's sharded backup); then sharded checkpoints (sharded_checkpoint_test.cc:
# save on 4 ranks, kill -9 of one rank during a save, resume on 2); then the missing-plugin case in
# one process without mpirun. In between, the Go, Rust and Java versions of the digits program
# (see check_binding below).
# Prints SKIP when Open MPI is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v mpirun >/dev/null; then
  echo "SKIP: tests/mpi: no mpirun (install openmpi-bin and libopenmpi-dev: tools/setup)"
  exit 0
fi
targets=(//tests/mpi:mpi_collective_test //tests/mpi:capi_mpi_test //tests/mpi:multi_worker_test
         //tests/mpi:multi_worker_digits //tests/mpi:sharded_checkpoint_test)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
test_bin=bazel-bin/tests/mpi/mpi_collective_test
# The C program finds the plugin beside itself (the lookup libcairn.so uses), with no variable set.
beside=$(mktemp -d)
trap 'rm -rf "$beside"' EXIT
cp bazel-bin/tests/mpi/capi_mpi_test bazel-bin/runtime/distribute/mpi/libcairn_mpi.so "$beside/"
export CAIRN_MPI_PLUGIN="$PWD/bazel-bin/runtime/distribute/mpi/libcairn_mpi.so"
. tests/mpi/mpirun_flags.sh

for ranks in 2 4; do
  echo "== $ranks ranks"
  timeout 120 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" "$test_bin" --no-colors=true --minimal=true
  (unset CAIRN_MPI_PLUGIN; export CAIRN_MPI_TEST_CKPT_DIR="$beside/capi_ckpt_$ranks"
   timeout 120 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" -x CAIRN_MPI_TEST_CKPT_DIR "$beside/capi_mpi_test")
done

for ranks in 2 4; do
  echo "== multi-worker strategy, $ranks ranks"
  timeout 120 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" bazel-bin/tests/mpi/multi_worker_test --no-colors=true --minimal=true
done

# The digits MLP: one process without a strategy, then 2 ranks of a multi-worker strategy with the
# same global batch, each rank starting from its own random init, the replica check on. Same
# accuracy (within 0.01: the sums across ranks round differently), identical weights on both
# ranks, and only rank 0 printing progress and writing TensorBoard events.
digits=(bazel-bin/tests/mpi/multi_worker_digits --data examples/data/digits.csv --epochs 5)
single=$(timeout 120 "${digits[@]}" --single | sed -n 's/^single: accuracy //p')
logs="$beside/logs"
timeout 120 mpirun -np 2 "${CAIRN_MPIRUN_FLAGS[@]}" --tag-output "${digits[@]}" --logdir "$logs" >"$beside/digits.out"
cat "$beside/digits.out"
grep -q '^\[1,0\]<stdout>:weights identical on 2 ranks' "$beside/digits.out"
grep -q '^\[1,0\]<stdout>:Epoch 5/5' "$beside/digits.out"
if grep -q '^\[1,1\]<stdout>:Epoch' "$beside/digits.out"; then echo "FAIL: rank 1 printed progress"; exit 1; fi
ls "$logs"/rank0/train/events.out.tfevents.* >/dev/null
if [ -e "$logs/rank1" ]; then echo "FAIL: rank 1 wrote TensorBoard events"; exit 1; fi
multi=$(sed -n 's/^\[1,0\]<stdout>:rank 0 of 2: accuracy \([0-9.]*\).*/\1/p' "$beside/digits.out")
echo "digits test accuracy: one process $single, 2 ranks $multi"
awk -v a="$single" -v b="$multi" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0.9 && d <= 0.01) }'

echo "== a rank lost during a step, then a restart: fit resumes from the last sharded backup exactly"
# 3 epochs of 45 batches, a backup every 10: rank 1 dies before its 70th batch (the backup of batch
# 60 is committed), the job fails; started again, each rank runs the 75 batches after the backup,
# and the weights equal those of a run that was never interrupted.
lost=(bazel-bin/tests/mpi/multi_worker_digits --data examples/data/digits.csv --epochs 3 --save-freq 10)
timeout 120 mpirun -np 2 "${CAIRN_MPIRUN_FLAGS[@]}" --tag-output "${lost[@]}" --backup "$beside/whole" >"$beside/whole.out"
if timeout 120 mpirun -np 2 "${CAIRN_MPIRUN_FLAGS[@]}" --tag-output "${lost[@]}" --backup "$beside/backup" --die 1:70 \
  >"$beside/lost.out" 2>&1; then
  echo "FAIL: the job whose rank 1 was killed succeeded"; exit 1
fi
grep -q '^\[1,1\]<stdout>:rank 1: killing itself before batch 70' "$beside/lost.out"
shards=$(ls "$beside/backup"/ckpt-60.shard-*-of-2-* | wc -l)  # one per rank, beside the index ckpt-60
[ -f "$beside/backup/ckpt-60" ] && [ "$shards" = 2 ] || { echo "FAIL: no sharded backup of batch 60"; ls "$beside/backup"; exit 1; }
timeout 120 mpirun -np 2 "${CAIRN_MPIRUN_FLAGS[@]}" --tag-output "${lost[@]}" --backup "$beside/backup" >"$beside/resumed.out"
weights() { sed -n 's/^\[1,0\]<stdout>:weights identical on 2 ranks: //p' "$1"; }
whole=$(weights "$beside/whole.out") resumed=$(weights "$beside/resumed.out")
echo "weights: uninterrupted $whole, killed and resumed $resumed"
[ -n "$whole" ] && [ "$whole" = "$resumed" ] || { echo "FAIL: the resumed run's weights differ"; exit 1; }
grep -q '^\[1,0\]<stdout>:rank 0 of 2: .* batches 75$' "$beside/resumed.out" ||
  { echo "FAIL: the restart did not resume after batch 60"; grep 'batches' "$beside/resumed.out"; exit 1; }
if [ -e "$beside/backup" ]; then echo "FAIL: the backup was not removed after fit ended"; exit 1; fi

# The bindings' versions of the digits program (Go: bindings/go/examples/multiworker, Rust: the cairn
# crate's example multi_worker, Java: MultiWorker in the Java tests' tree), built once against a
# prefix tools/install fills (a fixed one, so that reruns reuse Go's and cargo's caches): on 2 ranks
# the same accuracy as the C program's one process within 0.01, identical weights, progress from
# rank 0 only; then the sharded checkpoint they saved restored in one process without MPI, giving
# that accuracy again.
bindings_prefix="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/mpi-bindings-prefix"
tools/install --prefix "$bindings_prefix" >"$beside/install.log" 2>&1 || { cat "$beside/install.log" >&2; exit 1; }
# check_binding NAME PROGRAM...: the checks above for one binding's program.
check_binding() {
  local name=$1 out="$beside/$1.out" ckpt="$beside/$1-ckpt" accuracy restored
  shift
  echo "== $name: the digits MLP on 2 ranks, a sharded checkpoint restored in one process"
  timeout 60 mpirun -np 2 "${CAIRN_MPIRUN_FLAGS[@]}" --tag-output "$@" --data examples/data/digits.csv \
    --epochs 5 --dir "$ckpt" >"$out" || { cat "$out"; echo "FAIL: $name under mpirun"; exit 1; }
  grep -q '^\[1,0\]<stdout>:weights identical on 2 ranks' "$out" &&
    grep -q '^\[1,0\]<stdout>:Epoch 5/5' "$out" || { cat "$out"; echo "FAIL: $name: no progress or weights line"; exit 1; }
  if grep -q '^\[1,1\]<stdout>:Epoch' "$out"; then echo "FAIL: $name: rank 1 printed progress"; exit 1; fi
  accuracy=$(sed -n 's/^\[1,0\]<stdout>:rank 0 of 2: accuracy \([0-9.]*\).*/\1/p' "$out")
  restored=$(timeout 60 "$@" --data examples/data/digits.csv --restore "$ckpt" | sed -n 's/^restored: accuracy //p')
  echo "$name: one process (C) $single, 2 ranks $accuracy, restored in one process $restored"
  awk -v a="$single" -v b="$accuracy" -v c="$restored" \
    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.01 && b == c) }' || { echo "FAIL: $name: accuracies"; exit 1; }
}
# The Go and Rust programs build side by side (a cold build is most of this part's time; Java's
# source launcher compiles its one file when it runs). Rust gets a target directory of its own:
# test_rust's builds, against another prefix, stay as they are.
(export PATH="/usr/local/go/bin:$PATH" GOTOOLCHAIN=local CGO_ENABLED=1
 export PKG_CONFIG_PATH="$bindings_prefix/lib/pkgconfig" CGO_CPPFLAGS="-I$bindings_prefix/include"
 cd bindings/go && go build -o "$beside/go-multiworker" ./examples/multiworker) &
go_build=$!
(export PKG_CONFIG_PATH="$bindings_prefix/lib/pkgconfig" CARGO_TARGET_DIR="$PWD/bindings/rust/target/mpi"
 cd bindings/rust && cargo build -q --offline -p cairn --example multi_worker)
wait "$go_build"
# Go and Rust link the installed libcairn.so, so they find the installed plugin beside it (tools/install
# puts libcairn_mpi.so there) with CAIRN_MPI_PLUGIN unset; Java loads libcairn from its jar, so it
# names the plugin.
(unset CAIRN_MPI_PLUGIN; check_binding Go "$beside/go-multiworker")
(unset CAIRN_MPI_PLUGIN; check_binding Rust bindings/rust/target/mpi/debug/examples/multi_worker)
check_binding Java java -cp "$bindings_prefix/share/java/cairn.jar" bindings/java/example/MultiWorker.java

echo "== sharded checkpoints: save on 4 ranks, kill -9 of rank 1 during a save, resume on 2"
ckpt_dir="$beside/ckpt"
shard_bin=bazel-bin/tests/mpi/sharded_checkpoint_test
timeout 120 mpirun -np 4 "${CAIRN_MPIRUN_FLAGS[@]}" "$shard_bin" save "$ckpt_dir"
if timeout 120 mpirun -np 4 "${CAIRN_MPIRUN_FLAGS[@]}" "$shard_bin" crash "$ckpt_dir" >/dev/null 2>&1; then
  echo "tests/mpi: the job with a killed rank succeeded" >&2
  exit 1
fi
timeout 120 mpirun -np 2 "${CAIRN_MPIRUN_FLAGS[@]}" "$shard_bin" resume "$ckpt_dir"

echo "== no plugin"
CAIRN_MPI_TEST_MISSING=1 CAIRN_MPI_PLUGIN=/nonexistent/libcairn_mpi.so \
  timeout 60 "$test_bin" --no-colors=true --minimal=true --test-case="a missing plugin*"
echo "tests/mpi: passed"
