// Package cairn is the Go binding of Cairn, an embeddable machine-learning runtime.
//
// It wraps the C API (capi/include/cairn/cairn.h) with cgo. A Context runs ops; a Tensor is an
// immutable value; errors are *Error values carrying a status code and message, whose text is
// "<CODE>: <message>" (misuse the binding sees, such as a closed handle, is named in Go terms),
// and errors.Is(err, ErrInvalidArgument) and friends match them by code. A libcairn of another
// ABI is an error from NewContext and the other constructors that need the library. The op functions live in
// the generated package cairn.dev/cairn/ops:
//
//	ctx, err := cairn.NewContext()
//	...
//	defer ctx.Close()
//	x, _ := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
//	defer x.Close()
//	y, err := ops.Add(ctx, x, x)
//
// Tracked objects (NewTrackable, NewModule, NewVariable, NewList, NewDict) form the graph that a
// Checkpoint saves and restores; a CheckpointManager keeps numbered checkpoints in a directory
// and a CheckpointReader lists and loads a checkpoint's values. Weights in other formats: the
// reader also opens TensorFlow checkpoints and safetensors, Checkpoint.Restore takes TensorFlow
// checkpoints (Keras' names included) and Checkpoint.Export writes them, and Object.SaveWeights and
// Object.LoadWeights move a module's weights by name in any of the three formats.
//
// Training follows tf.GradientTape and tf.keras: a GradientTape records ops for gradients;
// layers (NewDense, NewConv2D, ..., NewSequential), optimizers (NewOptimizer, with schedules),
// losses (Loss) and metrics (NewMetric) are tracked objects that checkpoints save. A tape pins
// its goroutine to an OS thread until Close: use it on the goroutine that created it.
//
// NewModel is tf.keras.Model for Sequential models: Compile, then Fit (over a Dataset or XY
// tensors, returning a History), Evaluate (Logs), Predict, TrainOnBatch and TestOnBatch.
// Callbacks are built in (NewModelCheckpoint, NewTensorBoard, NewEarlyStopping,
// NewLearningRateScheduler, NewReduceLROnPlateau, NewCSVLogger, NewBackupAndRestore) or written in
// Go (NewCallback over the Callbacks interface; embed BaseCallback). RestoreModel restores a
// checkpoint into a fresh model in one call; Model.Save and LoadModel save and load a whole model.
//
// NewFunction is tf.function: a Go body traced into a graph once per input signature, whose later
// calls replay the graph without running Go code. Cond, WhileLoop and the TensorArray helpers
// (NewTensorArray, TensorArrayWrite, TensorArrayRead) are tf.cond, tf.while_loop and
// tf.TensorArray: eager with Go callbacks, and captured inside a Function's body, where a loop's
// trip count and a cond's branch come from the data at each replay.
//
// Data and logs: OpenRecordWriter and OpenRecordReader read and write TFRecord files; NewExample,
// ParseExample and ParseExamples build and parse tf.train.Example (and SequenceExample) records;
// a SummaryWriter writes TensorBoard event files (scalars, text, histograms, images, audio and the
// graph of a Function); StartProfiler and StopProfiler record what ran, for Chrome's trace viewer
// or TensorBoard.
//
// Input pipelines follow tf.data: a Dataset (NewDatasetRange, NewDatasetCSV, NewDatasetTFRecord,
// NewDatasetFromGenerator, ... then Map, Filter, Shuffle, Batch, Repeat, Prefetch, ...) runs
// through an Iterator, whose Next returns ErrEndOfData at the end and whose state is saved with a
// Checkpoint (it is a Tracked). Go callbacks (map and filter functions, generators, interleave
// functions) may run on Cairn's worker threads, several at once.
//
// Handles are freed by Close. A finalizer frees what was not closed, as a backstop only: native
// memory is invisible to the Go garbage collector, so close what you create. For tensors a Scope
// (NewScope, Scoped) frees everything made inside it, and the binding runs the collector when the
// data of open tensors grew past a GOGC-like goal (SetNativeGCPercent, SetNativeGCMinimum).
// A Context may be used from several goroutines at once; a Tensor is immutable and may be read
// from any goroutine; objects may be read and written from several goroutines; a Checkpoint and
// its manager are used from one goroutine at a time. Close must not race with other uses of the
// same handle.
//
// Linking: cgo asks pkg-config for the flags of "cairn" (cairn.pc, which tools/install writes
// into PREFIX/lib/pkgconfig); set PKG_CONFIG_PATH to that folder when the prefix is not a system
// one. The .pc file's Libs carry an rpath to the prefix's lib folder, so programs run without
// LD_LIBRARY_PATH. Nothing here points into a source checkout.
package cairn

/*
#cgo pkg-config: cairn
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
)

// fakeLibraryABI, when not 0, stands in for the loaded library's cairn_abi_version(): a test's
// way to see what a library of another ABI gets.
var fakeLibraryABI atomic.Uint32

// checkLibrary is the first step of every constructor that does not take a Context (NewContext,
// NewVulkanContext, OpenCheckpointReader, the Vulkan device queries): it refuses, with an error
// naming `fn`, a library or header whose ABI differs from the one this package was generated for.
// Loading the package never fails; the first call that needs the library does.
func checkLibrary(fn string) error {
	library := fakeLibraryABI.Load()
	if library == 0 {
		library = uint32(cABIVersion())
	}
	if err := checkABI(library, uint32(C.CAIRN_ABI_VERSION), HeaderABIVersion); err != nil {
		return newError(CodeFailedPrecondition, fn+": "+err.Error())
	}
	return nil
}

// checkABI compares the library's and the header's ABI versions with the one this package needs.
func checkABI(library, header, want uint32) error {
	if header != want {
		return fmt.Errorf("cairn.h declares ABI version %d but this Go package was generated for %d; "+
			"regenerate it (bindings/gen/generate.py) or use the cairn.h it was made for", header, want)
	}
	if library != want {
		return fmt.Errorf("the loaded libcairn has ABI version %d but this Go package needs %d; "+
			"install the libcairn whose cairn.h this package was built with", library, want)
	}
	return nil
}

// ABIVersion is the ABI version of the loaded library (cairn_abi_version). When it differs from
// HeaderABIVersion, NewContext and the other constructors that need the library return an error.
func ABIVersion() uint32 { return uint32(cABIVersion()) }

// Version is the library's semantic version, e.g. "1.0.0".
func Version() string { return C.GoString(cVersion()) }
