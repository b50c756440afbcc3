package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// ---- Collectives across processes over MPI, multi-worker training (docs/mpi.md) ----

// Mpi is this process's place in an MPI communicator (cairn_mpi): one member per process,
// launched by mpirun, whose collectives combine tensors across the processes. libcairn does not
// link MPI: the first NewMpi loads the plugin libcairn_mpi.so from $CAIRN_MPI_PLUGIN, else beside
// libcairn.so, else the loader's path, and fails with ErrUnavailable naming where it looked.
//
// Every process must issue the same collectives in the same order with the same dtypes and
// shapes; ranks that disagree all get ErrInvalidArgument. A call that waits longer than the
// timeout fails with ErrDeadlineExceeded naming the call and the rank; the Mpi then refuses every
// call (ErrFailedPrecondition): end the job. Calls are serialized, so any goroutine may make them.
// Close it when done; MPI is finalized when the last user of Cairn's initialization (an Mpi, a
// strategy or a sharded CheckpointManager made from it) is freed, and cannot start again.
type Mpi struct {
	ptr *C.cairn_mpi
	ctx *Context
}

// NewMpi joins the job's communicator (a private copy of MPI_COMM_WORLD), initializing MPI unless
// the process already has. timeout bounds how long each collective waits for the other ranks (at
// least 1 ms). Without mpirun it is a world of one process. Errors: ErrUnavailable without the
// plugin or MPI, ErrFailedPrecondition when MPI cannot start (again), ErrInvalidArgument for a
// timeout below 1 ms.
func NewMpi(ctx *Context, timeout time.Duration) (*Mpi, error) {
	return newMpi("NewMpi", ctx, timeout, func(ms C.int64_t, out **C.cairn_mpi) error {
		return cMpiInit(ctx.handle(), ms, out)
	})
}

// NewMpiFromComm uses the communicator of a host that already runs MPI (the host initializes and
// finalizes MPI; Cairn works on a private copy): comm is the host's MPI_Comm, which Open MPI
// defines as a pointer. Errors: as NewMpi; ErrFailedPrecondition when MPI is not initialized.
func NewMpiFromComm(ctx *Context, comm unsafe.Pointer, timeout time.Duration) (*Mpi, error) {
	return newMpi("NewMpiFromComm", ctx, timeout, func(ms C.int64_t, out **C.cairn_mpi) error {
		return cMpiAdopt(ctx.handle(), comm, ms, out)
	})
}

func newMpi(fn string, ctx *Context, timeout time.Duration, create func(C.int64_t, **C.cairn_mpi) error) (*Mpi, error) {
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	if timeout < time.Millisecond {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: the timeout %v is below 1 ms", fn, timeout))
	}
	var ptr *C.cairn_mpi
	err := create(C.int64_t(timeout.Milliseconds()), &ptr)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	m := &Mpi{ptr: ptr, ctx: ctx}
	runtime.SetFinalizer(m, (*Mpi).Close)
	return m, nil
}

// Close frees the handle (finalizing MPI when it was the last user of Cairn's initialization).
// Closing twice does nothing.
func (m *Mpi) Close() {
	if m == nil || m.ptr == nil {
		return
	}
	runtime.SetFinalizer(m, nil)
	cMpiFree(m.ptr)
	m.ptr = nil
}

func (m *Mpi) handle() *C.cairn_mpi {
	if m == nil {
		return nil
	}
	return m.ptr
}

// Rank is this process's rank, 0 .. Size-1 (-1 once closed).
func (m *Mpi) Rank() int {
	r := int(cMpiRank(m.handle()))
	runtime.KeepAlive(m)
	return r
}

// Size is the number of processes (0 once closed).
func (m *Mpi) Size() int {
	n := int(cMpiSize(m.handle()))
	runtime.KeepAlive(m)
	return n
}

// AllReduce is the reduction of value across the processes, a new tensor of its dtype and shape
// on its device, the same on every rank. Float16 and bfloat16 reduce in float32; the mean of
// integers truncates. ErrInvalidArgument for a dtype that does not reduce or ranks that disagree.
func (m *Mpi) AllReduce(reduction Reduction, value *Tensor) (*Tensor, error) {
	return m.collective("Mpi.AllReduce", value, func(out **C.cairn_tensor) error {
		return cMpiAllReduce(m.ptr, C.cairn_reduction(reduction), value.handle(), out)
	})
}

// Broadcast is rank root's value on every rank (each passes a tensor of the same dtype and
// shape). ErrInvalidArgument for a root outside 0 .. Size-1, a string tensor or ranks that
// disagree.
func (m *Mpi) Broadcast(root int, value *Tensor) (*Tensor, error) {
	if root < 0 || root > int(^uint32(0)>>1) {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("Mpi.Broadcast: root %d is not a rank", root))
	}
	return m.collective("Mpi.Broadcast", value, func(out **C.cairn_tensor) error {
		return cMpiBroadcast(m.ptr, C.int32_t(root), value.handle(), out)
	})
}

// AllGather is every rank's value concatenated along dimension 0 in rank order (a scalar gives a
// vector of Size elements). ErrInvalidArgument for a string tensor or ranks that disagree.
func (m *Mpi) AllGather(value *Tensor) (*Tensor, error) {
	return m.collective("Mpi.AllGather", value, func(out **C.cairn_tensor) error {
		return cMpiAllGather(m.ptr, value.handle(), out)
	})
}

// Barrier returns once every rank has called it.
func (m *Mpi) Barrier() error {
	if err := checkOpen("Mpi.Barrier", "mpi", m); err != nil {
		return err
	}
	err := cMpiBarrier(m.ptr)
	runtime.KeepAlive(m)
	return err
}

// collective checks m and value, then runs call, which sets the new tensor.
func (m *Mpi) collective(fn string, value *Tensor, call func(out **C.cairn_tensor) error) (*Tensor, error) {
	if err := checkOpen(fn, "mpi", m, "value", value); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := call(&out)
	runtime.KeepAlive(m)
	runtime.KeepAlive(value)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// MultiWorkerOption configures NewMultiWorkerStrategy (the fields of cairn_multi_worker_options).
type MultiWorkerOption func(*C.cairn_multi_worker_options)

// WithReplicaCheck turns on the debug check: after every training step of a model compiled with
// the strategy, a checksum of every weight is compared across the workers, and a difference fails
// the step with ErrInternal naming the first variable that differs (also on when the environment
// has CAIRN_CHECK_REPLICAS=1). It costs a copy of every weight and one all-gather per step.
func WithReplicaCheck(on bool) MultiWorkerOption {
	return func(o *C.cairn_multi_worker_options) { o.check_replicas = cBool(on) }
}

// NewMultiWorkerStrategy is tf.distribute.MultiWorkerMirroredStrategy: a Strategy whose replicas
// are the processes of mpi, this process's one replica (ID = its rank) on ctx's CPU. A model made
// and compiled in its Scope trains with Fit unchanged under mpirun: each dataset element is a
// global batch of which every worker trains on its rows, the weights are broadcast from rank 0
// before the first step, the gradients are summed across the workers, and only rank 0 prints
// progress and runs the callbacks that write. Every worker must make the same calls with the same
// data. The strategy shares mpi's communicator and timeout (mpi may be closed first); its
// collectives and mpi's calls must come in the same order on every rank. ErrInvalidArgument for a
// nil mpi or one of another context.
func NewMultiWorkerStrategy(ctx *Context, mpi *Mpi, options ...MultiWorkerOption) (*Strategy, error) {
	if err := checkOpen("NewMultiWorkerStrategy", "context", ctx, "mpi", mpi); err != nil {
		return nil, err
	}
	opts := (*C.cairn_multi_worker_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_multi_worker_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cMultiWorkerOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	for _, set := range options {
		set(opts)
	}
	var ptr *C.cairn_strategy
	err := cMultiWorkerStrategyCreate(ctx.handle(), mpi.ptr, opts, &ptr)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(mpi)
	if err != nil {
		return nil, err
	}
	return wrapStrategy(ptr, ctx), nil
}

// Shard shards every later save across the processes of mpi (nil: one file per save again).
// Every rank then calls Save (or SaveNumber with the same number), each on its own manager over
// the same directory, which every rank must see (one machine's disk, or a shared filesystem).
// Each rank writes its share of the values as a shard file beside the checkpoint, and rank 0
// commits the index at the checkpoint's path once every shard is durable: a failure or crash of
// any rank before that leaves the previous checkpoints listed and intact. Sharded saves are
// synchronous. The index is the checkpoint: Checkpoint.Restore and RestoreModel take its path,
// in any number of processes, with or without MPI. The manager holds the communicator until it is
// closed or sharded anew.
func (m *CheckpointManager) Shard(mpi *Mpi) error {
	if err := checkOpen("CheckpointManager.Shard", "manager", m); err != nil {
		return err
	}
	if mpi != nil && mpi.ptr == nil {
		return handleError("CheckpointManager.Shard", "mpi", false)
	}
	err := cCheckpointManagerShard(m.ptr, mpi.handle())
	runtime.KeepAlive(m)
	runtime.KeepAlive(mpi)
	return err
}
