package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"iter"
	"runtime"
	"unsafe"
)

// ErrEndOfData is what Iterator.Next returns at the end of the data (TensorFlow's
// OutOfRangeError), again on every later call: errors.Is(err, ErrEndOfData). The error Next
// returns also matches ErrOutOfRange, and its text is the library's ("OUT_OF_RANGE:
// range(0, 3, 1): end of data"). A GeneratorFunc returns ErrEndOfData to end its dataset.
var ErrEndOfData = &endOfData{&Error{Code: CodeOutOfRange, Message: "end of data"}}

// endOfData is the end-of-data status: an *Error (errors.As reaches it) that ErrEndOfData matches.
type endOfData struct{ err *Error }

func (e *endOfData) Error() string { return e.err.Error() }

func (e *endOfData) Unwrap() error { return e.err }

func (e *endOfData) Is(target error) bool { return target == ErrEndOfData }

// DatasetElement is one element of a dataset: its components' names and tensors, in the spec's
// order. The tensors are the caller's: Close closes them all. Names is shared by the elements of
// one iterator: do not modify it.
type DatasetElement struct {
	Names   []string
	Tensors []*Tensor
}

// Len is the number of components.
func (e *DatasetElement) Len() int { return len(e.Tensors) }

// Get is the component named name; NOT_FOUND listing the names when there is none.
func (e *DatasetElement) Get(name string) (*Tensor, error) {
	for i, n := range e.Names {
		if n == name {
			return e.Tensors[i], nil
		}
	}
	return nil, newError(CodeNotFound, fmt.Sprintf("DatasetElement.Get: no component %q (the components are %q)", name, e.Names))
}

// Close closes every tensor of the element. Closing twice does nothing.
func (e *DatasetElement) Close() {
	if e != nil {
		closeTensors(e.Tensors)
	}
}

// Iterator runs a Dataset (Dataset.Iterate). It is a tracked object (ObjectKindIterator): put it
// on a checkpoint beside the model and optimizer and it saves and restores with them; after a
// restore the elements continue exactly as an uninterrupted run's, whatever the parallelism.
// It is a view of an Object like Module, so it is a Tracked. Next may be called from several
// goroutines at once (each element goes to one caller).
type Iterator struct {
	*Object
	names []string
}

func (it *Iterator) object() *Object {
	if it == nil {
		return nil
	}
	return it.Object
}

// Iterate is an iterator over d from its first element. Close it when done: that stops its
// background threads (a checkpoint holding it keeps only the object).
func (d *Dataset) Iterate() (*Iterator, error) {
	if err := checkOpen("Dataset.Iterate", "dataset", d); err != nil {
		return nil, err
	}
	names, err := d.names()
	if err != nil {
		return nil, err
	}
	var out *C.cairn_object
	err = cDatasetIterate(d.handle(), &out)
	runtime.KeepAlive(d)
	if err != nil {
		return nil, err
	}
	return &Iterator{Object: newObject(out), names: names}, nil
}

// Next is the next element (close it), or an error: ErrEndOfData at the end (again on every later
// call); another error for an element that failed (it names the stage and the element, which is
// skipped: the next call goes on with the element after it); FAILED_PRECONDITION after Close.
func (it *Iterator) Next() (*DatasetElement, error) {
	if err := checkOpen("Iterator.Next", "iterator", it); err != nil {
		return nil, err
	}
	outs := make([]*C.cairn_tensor, len(it.names)+1) // Go memory holding only C pointers
	err := cIteratorNext(it.handle(), unsafe.SliceData(outs), C.size_t(len(it.names)))
	runtime.KeepAlive(it)
	if err != nil {
		if cerr, ok := err.(*Error); ok && cerr.Code == CodeOutOfRange {
			return nil, &endOfData{cerr}
		}
		return nil, err
	}
	e := &DatasetElement{Names: it.names, Tensors: make([]*Tensor, len(it.names))}
	for i := range e.Tensors {
		e.Tensors[i] = newTensor(outs[i])
	}
	return e, nil
}

// All is Next as a range-over-func sequence: it yields each
// element, or a failed element's error (and goes on), and stops at the end of the data or when
// the loop breaks. The elements are the loop's to close.
//
//	for e, err := range it.All() { ... }
func (it *Iterator) All() iter.Seq2[*DatasetElement, error] {
	return func(yield func(*DatasetElement, error) bool) {
		for {
			e, err := it.Next()
			if errors.Is(err, ErrEndOfData) {
				return
			}
			if !yield(e, err) {
				return
			}
			if err != nil && it.handle() == nil {
				return // closed: every later Next would fail the same way
			}
		}
	}
}

// Position is the number of elements delivered since the start (restored with a state); -1 after Close.
func (it *Iterator) Position() int64 {
	n := int64(cIteratorPosition(it.handle()))
	runtime.KeepAlive(it)
	return n
}

// Save is the iterator's state as bytes (what a checkpoint stores; its length is the state's size).
func (it *Iterator) Save() ([]byte, error) {
	if err := checkOpen("Iterator.Save", "iterator", it); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	var n C.size_t
	err := cIteratorSave(it.handle(), &p, &n)
	runtime.KeepAlive(it)
	if err != nil {
		return nil, err
	}
	defer cFree(p)
	return copyBytes(p, n), nil
}

// Restore replaces the position with a saved state of an iterator over the same pipeline: the next
// element is the one the saved iterator would have returned next. INVALID_ARGUMENT naming both
// pipelines when the state is another pipeline's; DATA_LOSS for corrupt bytes.
func (it *Iterator) Restore(state []byte) error {
	if err := checkOpen("Iterator.Restore", "iterator", it); err != nil {
		return err
	}
	p := C.CBytes(append(state, 0)) // never a NULL pointer, also for an empty state
	defer C.free(p)
	err := cIteratorRestore(it.handle(), p, C.size_t(len(state)))
	runtime.KeepAlive(it)
	return err
}

// Dataset is a new handle to the dataset the iterator runs (close it).
func (it *Iterator) Dataset() (*Dataset, error) {
	if err := checkOpen("Iterator.Dataset", "iterator", it); err != nil {
		return nil, err
	}
	var out *C.cairn_dataset
	err := cIteratorDataset(it.handle(), &out)
	runtime.KeepAlive(it)
	return datasetOrError(out, err)
}

// Stop stops the iterator's background threads and waits for them; later Nexts are
// FAILED_PRECONDITION. The handle stays open (a checkpoint may still save the state). Calling it
// again does nothing.
func (it *Iterator) Stop() error {
	if err := checkOpen("Iterator.Stop", "iterator", it); err != nil {
		return err
	}
	err := cIteratorClose(it.handle())
	runtime.KeepAlive(it)
	return err
}

// Close stops the iterator (Stop) and drops the handle; a checkpoint that holds the iterator keeps
// the object. Closing twice does nothing.
func (it *Iterator) Close() {
	if it == nil || it.Object == nil || it.handle() == nil {
		return
	}
	_ = it.Stop()
	it.Object.Close()
}
