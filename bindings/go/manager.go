package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// CheckpointManager is a tf.train.CheckpointManager: it saves a checkpoint into a directory as
// "<name>-<N>", keeps the newest max_to_keep of them and records them in the directory's state
// file. Use it from one goroutine at a time, like its checkpoint.
type CheckpointManager struct {
	ptr *C.cairn_checkpoint_manager
}

// ManagerOption sets a field of cairn_checkpoint_manager_options; unset fields keep their
// defaults.
type ManagerOption func(*managerConfig)

type managerConfig struct {
	name            *string
	maxToKeep       *int64
	keepEveryNHours *float64
}

// WithCheckpointName sets the file name prefix (default "ckpt").
func WithCheckpointName(name string) ManagerOption {
	return func(c *managerConfig) { c.name = &name }
}

// WithMaxToKeep sets how many checkpoints are kept (default 5); -1 keeps all, 0 is an error.
func WithMaxToKeep(n int64) ManagerOption {
	return func(c *managerConfig) { c.maxToKeep = &n }
}

// WithKeepCheckpointEveryNHours also keeps one checkpoint per this many hours (default 0: off).
func WithKeepCheckpointEveryNHours(hours float64) ManagerOption {
	return func(c *managerConfig) { c.keepEveryNHours = &hours }
}

// NewCheckpointManager creates a manager saving ckpt into directory (created if missing). It
// reads the directory's state file, or rebuilds the list by scanning for intact checkpoints when
// the state is missing or damaged, and removes temporary files an interrupted save left behind.
// The manager holds its own reference to the checkpoint.
func NewCheckpointManager(ckpt *Checkpoint, directory string, options ...ManagerOption) (*CheckpointManager, error) {
	if err := checkOpen("NewCheckpointManager", "checkpoint", ckpt); err != nil {
		return nil, err
	}
	var cfg managerConfig
	for _, set := range options {
		set(&cfg)
	}
	opts := (*C.cairn_checkpoint_manager_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_checkpoint_manager_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cCheckpointManagerOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, err
	}
	if cfg.name != nil {
		name := C.CString(*cfg.name)
		defer C.free(unsafe.Pointer(name))
		opts.checkpoint_name = name
	}
	if cfg.maxToKeep != nil {
		opts.max_to_keep = C.int64_t(*cfg.maxToKeep)
	}
	if cfg.keepEveryNHours != nil {
		opts.keep_checkpoint_every_n_hours = C.double(*cfg.keepEveryNHours)
	}
	dir := C.CString(directory)
	defer C.free(unsafe.Pointer(dir))
	var out *C.cairn_checkpoint_manager
	err := cCheckpointManagerCreate(ckpt.handle(), dir, opts, &out)
	runtime.KeepAlive(ckpt)
	if err != nil {
		return nil, err
	}
	m := &CheckpointManager{ptr: out}
	runtime.SetFinalizer(m, (*CheckpointManager).Close)
	return m, nil
}

// Close frees the manager, waiting for a background save. Closing twice does nothing.
func (m *CheckpointManager) Close() {
	if m == nil || m.ptr == nil {
		return
	}
	runtime.SetFinalizer(m, nil)
	cCheckpointManagerFree(m.ptr)
	m.ptr = nil
}

func (m *CheckpointManager) handle() *C.cairn_checkpoint_manager {
	if m == nil {
		return nil
	}
	return m.ptr
}

// Save saves "<directory>/<name>-<N>" with N the incremented save_counter, then applies
// max_to_keep; it returns the path.
func (m *CheckpointManager) Save() (string, error) {
	return m.save(-1)
}

// SaveNumber is Save with N = number (>= 0) instead of the save counter.
func (m *CheckpointManager) SaveNumber(number int64) (string, error) {
	if number < 0 {
		return "", newError(CodeInvalidArgument, "CheckpointManager.SaveNumber: the checkpoint number is negative")
	}
	return m.save(number)
}

func (m *CheckpointManager) save(number int64) (string, error) {
	if err := checkOpen("CheckpointManager.Save", "manager", m); err != nil {
		return "", err
	}
	var path *C.char
	err := cCheckpointManagerSave(m.handle(), C.int64_t(number), &path)
	runtime.KeepAlive(m)
	return takeString(path, err)
}

// Latest is the newest checkpoint's path, or "" when there is none (Checkpoint.Restore("")
// then restores nothing).
func (m *CheckpointManager) Latest() string {
	s := C.GoString(cCheckpointManagerLatest(m.handle()))
	runtime.KeepAlive(m)
	return s
}

// Checkpoints lists the paths of the checkpoints the manager keeps, oldest first.
func (m *CheckpointManager) Checkpoints() []string {
	p := m.handle()
	paths := make([]string, int(cCheckpointManagerCount(p)))
	for i := range paths {
		paths[i] = C.GoString(cCheckpointManagerPath(p, C.size_t(i)))
	}
	runtime.KeepAlive(m)
	return paths
}
