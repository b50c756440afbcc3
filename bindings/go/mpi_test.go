package cairn_test

// Mpi, NewMultiWorkerStrategy and CheckpointManager.Shard in one process, without mpirun: bad
// input, then a missing plugin (ErrUnavailable naming where it looked), then, when
// CAIRN_MPI_PLUGIN names the plugin, a world of one process. Several ranks run under mpirun in
// tests/mpi/run.sh (examples/multiworker).

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"cairn.dev/cairn"
)

func TestMpiBadInput(t *testing.T) {
	ctx := newContext(t)
	_, err := cairn.NewMpi(nil, time.Second)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewMpi: context is nil")
	_, err = cairn.NewMpi(ctx, 0)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewMpi: the timeout 0s is below 1 ms")
	_, err = cairn.NewMpiFromComm(ctx, nil, -time.Second)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewMpiFromComm: the timeout")

	var none *cairn.Mpi
	if none.Rank() != -1 || none.Size() != 0 {
		t.Errorf("a nil Mpi: rank %d, size %d", none.Rank(), none.Size())
	}
	none.Close()
	wantCode(t, none.Barrier(), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Mpi.Barrier: mpi is nil")
	one := must(cairn.NewTensor(ctx, nil, []float32{1}))
	defer one.Close()
	_, err = none.AllReduce(cairn.ReductionSum, one)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Mpi.AllReduce: mpi is nil")
	_, err = none.AllGather(one)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Mpi.AllGather: mpi is nil")
	_, err = none.Broadcast(-1, one)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Mpi.Broadcast: root -1 is not a rank")
	_, err = cairn.NewMultiWorkerStrategy(ctx, nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewMultiWorkerStrategy: mpi is nil")

	manager := newShardManager(t, ctx, t.TempDir())
	ok(t, manager.Shard(nil)) // unsharded again: nothing to undo
	var closedManager *cairn.CheckpointManager
	wantCode(t, closedManager.Shard(nil), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument,
		"CheckpointManager.Shard: manager is nil")
}

// TestMpi runs the missing plugin first: a successful load is kept for the process, and MPI
// cannot start again once the world of one is closed, so both live in this one test.
func TestMpi(t *testing.T) {
	plugin := os.Getenv("CAIRN_MPI_PLUGIN")
	ctx := newContext(t, cairn.WithSeed(1))

	missing := filepath.Join(t.TempDir(), "libcairn_mpi.so")
	t.Setenv("CAIRN_MPI_PLUGIN", missing)
	_, err := cairn.NewMpi(ctx, time.Second)
	wantCode(t, err, cairn.CodeUnavailable, cairn.ErrUnavailable, missing+" (")
	_, err = cairn.NewMpiFromComm(ctx, nil, time.Second)
	wantCode(t, err, cairn.CodeUnavailable, cairn.ErrUnavailable, "cannot load the MPI plugin")

	if plugin == "" {
		t.Skip("a world of one: CAIRN_MPI_PLUGIN does not name libcairn_mpi.so (tests/mpi/run.sh sets it)")
	}
	t.Setenv("CAIRN_MPI_PLUGIN", plugin)
	mpi := must(cairn.NewMpi(ctx, 10*time.Second))
	worldOfOne(t, ctx, mpi)
	mpi.Close()
	mpi.Close()
	if mpi.Rank() != -1 || mpi.Size() != 0 {
		t.Errorf("a closed Mpi: rank %d, size %d", mpi.Rank(), mpi.Size())
	}
	wantCode(t, mpi.Barrier(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "Mpi.Barrier: mpi is closed")
}

// worldOfOne checks each collective, the strategy and a sharded save on a communicator of one.
func worldOfOne(t *testing.T, ctx *cairn.Context, mpi *cairn.Mpi) {
	if mpi.Rank() != 0 || mpi.Size() != 1 {
		t.Fatalf("rank %d of %d, want 0 of 1", mpi.Rank(), mpi.Size())
	}
	value := must(cairn.NewTensor(ctx, []int64{2}, []float32{1.5, -2}))
	defer value.Close()
	for name, call := range map[string]func() (*cairn.Tensor, error){
		"AllReduce": func() (*cairn.Tensor, error) { return mpi.AllReduce(cairn.ReductionMax, value) },
		"Broadcast": func() (*cairn.Tensor, error) { return mpi.Broadcast(0, value) },
		"AllGather": func() (*cairn.Tensor, error) { return mpi.AllGather(value) },
	} {
		out := must(call())
		if got := must(cairn.Read[float32](out)); len(got) != 2 || got[0] != 1.5 || got[1] != -2 {
			t.Errorf("%s: %v", name, got)
		}
		out.Close()
	}
	ok(t, mpi.Barrier())
	_, err := mpi.Broadcast(1, value)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")

	s := must(cairn.NewMultiWorkerStrategy(ctx, mpi, cairn.WithReplicaCheck(true)))
	defer s.Close()
	if s.NumReplicas() != 1 {
		t.Errorf("multi-worker strategy: %d replicas on %v", s.NumReplicas(), s.Devices())
	}

	dir := t.TempDir()
	manager := newShardManager(t, ctx, dir)
	ok(t, manager.Shard(mpi))
	path := must(manager.Save())
	if shards, _ := filepath.Glob(path + ".shard-0-of-1-*"); len(shards) != 1 {
		t.Errorf("sharded save %s: shard files %v", path, shards)
	}
	restored := must(cairn.NewVariable(ctx, must(cairn.NewTensor(ctx, []int64{3}, []float32{0, 0, 0}))))
	defer restored.Close()
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"v": restored}))
	defer ckpt.Close()
	status := must(ckpt.Restore(path))
	status.Close()
	if got := must(cairn.Read[float32](must(restored.Read()))); got[2] != 3 {
		t.Errorf("restored from the sharded checkpoint: %v", got)
	}
}

// newShardManager is a manager over dir saving a checkpoint of {"v": [1, 2, 3]}.
func newShardManager(t *testing.T, ctx *cairn.Context, dir string) *cairn.CheckpointManager {
	t.Helper()
	v := must(cairn.NewVariable(ctx, must(cairn.NewTensor(ctx, []int64{3}, []float32{1, 2, 3}))))
	t.Cleanup(v.Close)
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"v": v}))
	t.Cleanup(ckpt.Close)
	m := must(cairn.NewCheckpointManager(ckpt, dir))
	t.Cleanup(m.Close)
	return m
}
