package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

// The dataset trampolines in callbacks.go.
extern cairn_status *cairnGoDataCall(void *user_data, cairn_context *ctx, cairn_tensor **inputs, size_t n_inputs,
                                     cairn_tensor **outputs, size_t n_outputs);
extern cairn_status *cairnGoGenerator(void *user_data, cairn_context *ctx, int64_t index, cairn_tensor **outputs,
                                      size_t n_outputs, cairn_bool *got);
extern cairn_status *cairnGoDatasetFn(void *user_data, cairn_context *ctx, cairn_tensor **element, size_t n,
                                      cairn_dataset **out);
extern void cairnGoDataRelease(void *user_data);

static cairn_status *cairn_go_data_shim(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs,
                                        size_t n_inputs, cairn_tensor **outputs, size_t n_outputs) {
  return cairnGoDataCall(user_data, ctx, (cairn_tensor **)inputs, n_inputs, outputs, n_outputs);
}

static cairn_status *cairn_go_dataset_fn_shim(void *user_data, cairn_context *ctx, cairn_tensor *const *element,
                                              size_t n, cairn_dataset **out) {
  return cairnGoDatasetFn(user_data, ctx, (cairn_tensor **)element, n, out);
}

// Each wrapper hands the C API the Go callback behind the runtime/cgo handle `h` (stored only in
// C memory, as an integer) and has the runtime delete the handle (release) when the last dataset
// using it is freed.
static cairn_status *cairn_go_dataset_map(const cairn_dataset *in, const char *name, uintptr_t h,
                                          cairn_map_options *o, cairn_dataset **out) {
  o->release = cairnGoDataRelease;
  return cairn_dataset_map(in, name, cairn_go_data_shim, (void *)h, o, out);
}

static cairn_status *cairn_go_dataset_filter(const cairn_dataset *in, const char *name, uintptr_t h,
                                             cairn_filter_options *o, cairn_dataset **out) {
  o->release = cairnGoDataRelease;
  return cairn_dataset_filter(in, name, cairn_go_data_shim, (void *)h, o, out);
}

static cairn_status *cairn_go_dataset_from_generator(cairn_context *ctx, const char *const *names,
                                                     const cairn_tensor_spec *specs, size_t n, uintptr_t h,
                                                     cairn_dataset **out) {
  return cairn_dataset_from_generator(ctx, names, specs, n, (cairn_generator_fn)cairnGoGenerator, (void *)h,
                                      cairnGoDataRelease, out);
}

static cairn_status *cairn_go_dataset_interleave(const cairn_dataset *in, uintptr_t h, const char *const *names,
                                                 const cairn_tensor_spec *specs, size_t n,
                                                 cairn_interleave_options *o, cairn_dataset **out) {
  o->release = cairnGoDataRelease;
  return cairn_dataset_interleave(in, cairn_go_dataset_fn_shim, (void *)h, names, specs, n, o, out);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"strings"
	"unsafe"
)

// ---- Datasets (tf.data) ----

// Autotune lets Cairn choose a num_parallel_calls, a cycle length or a buffer size (tf.data.AUTOTUNE).
const Autotune = -1

// Cardinalities that are not counts (Dataset.Cardinality).
const (
	InfiniteCardinality int64 = -1 // the dataset never ends (repeat forever)
	UnknownCardinality  int64 = -2 // not known without running it (after a filter)
)

// Dataset is an immutable input pipeline (tf.data.Dataset): a source (tensors, a range, text, CSV
// or TFRecord files, a Go generator) and transformations (Map, Filter, Batch, Shuffle, ...). Each
// transformation returns a new Dataset and leaves its input usable; close each Dataset you make
// (the datasets built from it keep what they need). Datasets may be used from several goroutines
// at once. Iterate runs one.
//
// Elements are structures of tensors: a fixed list of named components, each with a dtype and a
// shape whose dims may be -1 (Spec). Cairn has no string tensors: a byte string (a text line, a
// record, a CSV string field) is a uint8 vector. A transformation that cannot apply to its input's
// spec fails when it is built, naming itself and the components.
type Dataset struct {
	ptr *C.cairn_dataset
}

func newDataset(p *C.cairn_dataset) *Dataset {
	d := &Dataset{ptr: p}
	runtime.SetFinalizer(d, (*Dataset).Close)
	return d
}

func datasetOrError(p *C.cairn_dataset, err error) (*Dataset, error) {
	if err != nil {
		return nil, err
	}
	return newDataset(p), nil
}

// Close frees the handle; datasets and iterators built from it keep what they need. Closing
// twice does nothing.
func (d *Dataset) Close() {
	if d == nil || d.ptr == nil {
		return
	}
	runtime.SetFinalizer(d, nil)
	cDatasetFree(d.ptr)
	d.ptr = nil
}

// handle is the C dataset, NULL for a nil or closed Dataset.
func (d *Dataset) handle() *C.cairn_dataset {
	if d == nil {
		return nil
	}
	return d.ptr
}

// ComponentSpec is one component of an element: its name, dtype and shape (-1 where a dim is
// unknown; nil for a scalar).
type ComponentSpec struct {
	Name  string
	DType DType
	Shape []int64
}

// String is "name: dtype[d0,d1]", e.g. "x: float32[-1,64]".
func (s ComponentSpec) String() string {
	dims := make([]string, len(s.Shape))
	for i, d := range s.Shape {
		dims[i] = fmt.Sprint(d)
	}
	return fmt.Sprintf("%s: %v[%s]", s.Name, s.DType, strings.Join(dims, ","))
}

// NumComponents is the number of components of each element; 0 for a closed Dataset.
func (d *Dataset) NumComponents() int {
	n := int(cDatasetNumComponents(d.handle()))
	runtime.KeepAlive(d)
	return n
}

// Component is the spec of component i (0-based). OUT_OF_RANGE for i >= NumComponents.
func (d *Dataset) Component(i int) (ComponentSpec, error) {
	if err := checkOpen("Dataset.Component", "dataset", d); err != nil {
		return ComponentSpec{}, err
	}
	if i < 0 {
		return ComponentSpec{}, newError(CodeOutOfRange, fmt.Sprintf("Dataset.Component: index %d is negative", i))
	}
	var name *C.char
	var dtype C.cairn_dtype
	var shape *C.int64_t
	var rank C.size_t
	err := cDatasetComponent(d.handle(), C.size_t(i), &name, &dtype, &shape, &rank)
	defer runtime.KeepAlive(d) // name and shape are borrowed from the dataset
	if err != nil {
		return ComponentSpec{}, err
	}
	spec := ComponentSpec{Name: C.GoString(name), DType: DType(dtype)}
	if rank > 0 {
		spec.Shape = make([]int64, int(rank))
		for j, v := range unsafe.Slice(shape, int(rank)) {
			spec.Shape[j] = int64(v)
		}
	}
	return spec, nil
}

// Spec is the element spec: every component, in order.
func (d *Dataset) Spec() ([]ComponentSpec, error) {
	if err := checkOpen("Dataset.Spec", "dataset", d); err != nil {
		return nil, err
	}
	specs := make([]ComponentSpec, d.NumComponents())
	for i := range specs {
		s, err := d.Component(i)
		if err != nil {
			return nil, err
		}
		specs[i] = s
	}
	return specs, nil
}

// names is the component names, in order.
func (d *Dataset) names() ([]string, error) {
	specs, err := d.Spec()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names, nil
}

// Cardinality is the number of elements: a count, InfiniteCardinality or UnknownCardinality
// (also for a closed Dataset).
func (d *Dataset) Cardinality() int64 {
	n := int64(cDatasetCardinality(d.handle()))
	runtime.KeepAlive(d)
	return n
}

// Describe is the pipeline as text, as errors name it: "range(0, 10, 1).map('f', parallel=4).batch(32)".
func (d *Dataset) Describe() (string, error) {
	if err := checkOpen("Dataset.Describe", "dataset", d); err != nil {
		return "", err
	}
	var out *C.char
	err := cDatasetDescribe(d.handle(), &out)
	runtime.KeepAlive(d)
	return takeString(out, err)
}

// String is Describe's text, or "Dataset(closed)".
func (d *Dataset) String() string {
	s, err := d.Describe()
	if err != nil {
		return "Dataset(closed)"
	}
	return s
}

// cStrings is strs as an array of C strings in C memory (it may be stored in an options struct),
// and what frees it. nil gives a NULL array; an empty slice a valid one.
func cStrings(strs []string) (**C.char, func()) {
	if strs == nil {
		return nil, func() {}
	}
	array := (**C.char)(C.calloc(C.size_t(len(strs)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	cs := unsafe.Slice(array, len(strs))
	for i, s := range strs {
		cs[i] = C.CString(s)
	}
	return array, func() {
		for _, c := range cs {
			C.free(unsafe.Pointer(c))
		}
		C.free(unsafe.Pointer(array))
	}
}

// cOptionalString is s in C memory, or NULL for "", and what frees it.
func cOptionalString(s string) (*C.char, func()) {
	if s == "" {
		return nil, func() {}
	}
	c := C.CString(s)
	return c, func() { C.free(unsafe.Pointer(c)) }
}

// cComponentSpecs is specs' names and specs in C memory, and what frees them (error or not).
func cComponentSpecs(specs []ComponentSpec) (**C.char, *C.cairn_tensor_spec, func(), error) {
	names := make([]string, len(specs))
	shapes := make([]TensorSpec, len(specs))
	for i, s := range specs {
		names[i], shapes[i] = s.Name, TensorSpec{DType: s.DType, Shape: s.Shape}
	}
	cnames, freeNames := cStrings(names)
	cspecs, freeSpecs, err := cSignature(shapes)
	return cnames, cspecs, func() { freeNames(); freeSpecs() }, err
}

// ---- Sources ----

// NewDatasetFromTensors is a dataset of one element, the tensors (tf.data.Dataset.from_tensors).
// names are the components' names (nil: "0", "1", ...; unique and non-empty). The dataset keeps
// its own references: the tensors stay the caller's.
func NewDatasetFromTensors(ctx *Context, names []string, tensors ...*Tensor) (*Dataset, error) {
	return tensorSource("NewDatasetFromTensors", ctx, names, tensors, cDatasetFromTensors)
}

// NewDatasetFromTensorSlices is one element per row of the tensors' first dimension
// (from_tensor_slices): every tensor has rank >= 1 and the same first dimension. Arguments as
// NewDatasetFromTensors.
func NewDatasetFromTensorSlices(ctx *Context, names []string, tensors ...*Tensor) (*Dataset, error) {
	return tensorSource("NewDatasetFromTensorSlices", ctx, names, tensors, cDatasetFromTensorSlices)
}

func tensorSource(fn string, ctx *Context, names []string, tensors []*Tensor,
	create func(*C.cairn_context, **C.char, **C.cairn_tensor, C.size_t, **C.cairn_dataset) error) (*Dataset, error) {
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	if err := checkEach(fn, "tensor", tensors); err != nil {
		return nil, err
	}
	if names != nil && len(names) != len(tensors) {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: %d names for %d tensors", fn, len(names), len(tensors)))
	}
	cnames, free := cStrings(names)
	defer free()
	handles := cTensors(tensors)
	var out *C.cairn_dataset
	err := create(ctx.handle(), cnames, unsafe.SliceData(handles), C.size_t(len(tensors)), &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(tensors)
	return datasetOrError(out, err)
}

// NewDatasetRange is the int64 scalars start, start+step, ... before stop (tf.data.Dataset.range),
// one component "value". INVALID_ARGUMENT for step 0.
func NewDatasetRange(ctx *Context, start, stop, step int64) (*Dataset, error) {
	if err := checkOpen("NewDatasetRange", "context", ctx); err != nil {
		return nil, err
	}
	var out *C.cairn_dataset
	err := cDatasetRange(ctx.handle(), C.int64_t(start), C.int64_t(stop), C.int64_t(step), &out)
	runtime.KeepAlive(ctx)
	return datasetOrError(out, err)
}

// NewDatasetTextLines is the lines of the files in order, without their line ends
// (tf.data.TextLineDataset): one component "line", a uint8 vector. A missing file is NOT_FOUND at
// the first read.
func NewDatasetTextLines(ctx *Context, paths ...string) (*Dataset, error) {
	return pathSource("NewDatasetTextLines", ctx, paths, func(c *C.cairn_context, p **C.char, n C.size_t, out **C.cairn_dataset) error {
		return cDatasetTextLines(c, p, n, out)
	})
}

func pathSource(fn string, ctx *Context, paths []string,
	create func(*C.cairn_context, **C.char, C.size_t, **C.cairn_dataset) error) (*Dataset, error) {
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	cpaths, free := cStrings(append([]string{}, paths...))
	defer free()
	var out *C.cairn_dataset
	err := create(ctx.handle(), cpaths, C.size_t(len(paths)), &out)
	runtime.KeepAlive(ctx)
	return datasetOrError(out, err)
}

// CSVOption sets a field of cairn_csv_options for NewDatasetCSV; unset fields keep the C defaults.
type CSVOption func(*csvConfig)

type csvConfig struct {
	defaults  map[int]string
	names     []string
	selected  []int64
	header    *bool
	delimiter *rune
	naValue   *string
}

// WithColumnDefaults gives output columns the text that an empty (or NAValue) field takes, by
// column index; columns without one are required. Default: every column is required.
func WithColumnDefaults(defaults map[int]string) CSVOption {
	return func(c *csvConfig) { c.defaults = defaults }
}

// WithColumnNames names the output columns (one name each). Default: the header's names when
// WithHeader is set, else "0", "1", ...
func WithColumnNames(names ...string) CSVOption {
	return func(c *csvConfig) { c.names = names }
}

// WithSelectColumns reads only these file columns (increasing indexes, one per column dtype).
// Default: every column of the file.
func WithSelectColumns(indexes ...int64) CSVOption {
	return func(c *csvConfig) { c.selected = indexes }
}

// WithHeader skips each file's first line and takes the column names from it. Default false.
func WithHeader(on bool) CSVOption {
	return func(c *csvConfig) { c.header = &on }
}

// WithDelimiter sets the field separator, one ASCII character. Default ','.
func WithDelimiter(r rune) CSVOption {
	return func(c *csvConfig) { c.delimiter = &r }
}

// WithNAValue sets a field text that counts as missing. Default: only empty fields are missing.
func WithNAValue(s string) CSVOption {
	return func(c *csvConfig) { c.naValue = &s }
}

// NewDatasetCSV is the records of CSV files (RFC 4180 quoting; tf.data.experimental.CsvDataset):
// one component per column of columnDTypes (Float32, Float64, Int32, Int64 scalars, or String:
// the field's bytes as a uint8 vector). A field that does not parse is INVALID_ARGUMENT
// "<path>:<line>: ..." when it is read.
func NewDatasetCSV(ctx *Context, paths []string, columnDTypes []DType, options ...CSVOption) (*Dataset, error) {
	const fn = "NewDatasetCSV"
	var cfg csvConfig
	for _, set := range options {
		set(&cfg)
	}
	opts := (*C.cairn_csv_options)(C.malloc(C.sizeof_cairn_csv_options))
	defer C.free(unsafe.Pointer(opts))
	if err := cCsvOptionsInit(opts, C.sizeof_cairn_csv_options); err != nil {
		return nil, err
	}
	n := len(columnDTypes)
	dtypes := (*C.cairn_dtype)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.cairn_dtype(0)))))
	defer C.free(unsafe.Pointer(dtypes))
	for i, dt := range columnDTypes {
		unsafe.Slice(dtypes, n)[i] = C.cairn_dtype(dt)
	}
	opts.column_dtypes, opts.n_columns = dtypes, C.size_t(n)
	if cfg.defaults != nil {
		array := (**C.char)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof((*C.char)(nil))))) // NULL: required
		defer C.free(unsafe.Pointer(array))
		defaults := unsafe.Slice(array, n)
		for i, text := range cfg.defaults {
			if i < 0 || i >= n {
				return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: a default for column %d of %d", fn, i, n))
			}
			defaults[i] = C.CString(text)
			defer C.free(unsafe.Pointer(defaults[i]))
		}
		opts.column_defaults = array
	}
	if cfg.names != nil {
		if len(cfg.names) != n {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: %d column names for %d columns", fn, len(cfg.names), n))
		}
		names, free := cStrings(cfg.names)
		defer free()
		opts.column_names = names
	}
	if cfg.selected != nil {
		if len(cfg.selected) != n {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: %d selected columns for %d columns", fn, len(cfg.selected), n))
		}
		selected := (*C.int64_t)(C.calloc(C.size_t(n+1), 8))
		defer C.free(unsafe.Pointer(selected))
		for i, v := range cfg.selected {
			unsafe.Slice(selected, n)[i] = C.int64_t(v)
		}
		opts.select_columns = selected
	}
	if cfg.header != nil {
		opts.header = cBool(*cfg.header)
	}
	if cfg.delimiter != nil {
		if *cfg.delimiter <= 0 || *cfg.delimiter > 127 {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: delimiter %q is not one ASCII character", fn, *cfg.delimiter))
		}
		opts.delimiter = C.int32_t(*cfg.delimiter)
	}
	if cfg.naValue != nil {
		na := C.CString(*cfg.naValue)
		defer C.free(unsafe.Pointer(na))
		opts.na_value = na
	}
	return pathSource(fn, ctx, paths, func(c *C.cairn_context, p **C.char, np C.size_t, out **C.cairn_dataset) error {
		return cDatasetCsv(c, p, np, opts, out)
	})
}

// NewDatasetListFiles is the file names matching the glob patterns, one component "filename" (a
// uint8 vector; tf.data.Dataset.list_files): sorted, then a seeded permutation when shuffle is set
// (each pass of a repeat reshuffles). NOT_FOUND naming the patterns when nothing matches.
func NewDatasetListFiles(ctx *Context, patterns []string, shuffle bool, seed int64) (*Dataset, error) {
	return pathSource("NewDatasetListFiles", ctx, patterns, func(c *C.cairn_context, p **C.char, n C.size_t, out **C.cairn_dataset) error {
		return cDatasetListFiles(c, p, n, cBool(shuffle), C.int64_t(seed), out)
	})
}

// TFRecordOption sets a field of cairn_tfrecord_options for NewDatasetTFRecord: a Compression, or
// WithNumParallelReads, WithReadBufferSize.
type TFRecordOption interface {
	applyTFRecord(*C.cairn_tfrecord_options)
}

type tfrecordOption func(*C.cairn_tfrecord_options)

func (f tfrecordOption) applyTFRecord(o *C.cairn_tfrecord_options) { f(o) }

func (c Compression) applyTFRecord(o *C.cairn_tfrecord_options) {
	o.compression = C.cairn_compression(c)
}

// WithNumParallelReads reads n files at once, interleaved one record each in a fixed order
// (Autotune: Cairn chooses). Default 0: one file after another.
func WithNumParallelReads(n int32) TFRecordOption {
	return tfrecordOption(func(o *C.cairn_tfrecord_options) { o.num_parallel_reads = C.int32_t(n) })
}

// WithReadBufferSize sets the bytes per read. Default 0: 1 MiB.
func WithReadBufferSize(n uint64) TFRecordOption {
	return tfrecordOption(func(o *C.cairn_tfrecord_options) { o.buffer_size = C.uint64_t(n) })
}

// NewDatasetTFRecord is the records of TFRecord files (tf.data.TFRecordDataset), one component
// "record" (a uint8 vector). Uncompressed files are indexable (their index sidecar, or an index
// built at the first read), so an iterator's position is an index; compressed ones are streams.
func NewDatasetTFRecord(ctx *Context, paths []string, options ...TFRecordOption) (*Dataset, error) {
	opts := (*C.cairn_tfrecord_options)(C.malloc(C.sizeof_cairn_tfrecord_options))
	defer C.free(unsafe.Pointer(opts))
	if err := cTfrecordOptionsInit(opts, C.sizeof_cairn_tfrecord_options); err != nil {
		return nil, err
	}
	for _, o := range options {
		o.applyTFRecord(opts)
	}
	return pathSource("NewDatasetTFRecord", ctx, paths, func(c *C.cairn_context, p **C.char, n C.size_t, out **C.cairn_dataset) error {
		return cDatasetTfrecord(c, p, n, opts, out)
	})
}

// GeneratorFunc makes element index (0, 1, ... within one iteration) of a generator dataset: the
// tensors of its components, in spec order (the dataset takes and closes them), or ErrEndOfData
// at the end. Cairn calls it from its worker threads, one call at a time per iteration (several
// iterators may call it at once), so it must be safe for concurrent use. ctx is valid only during
// the call. A generator that returns the same element for the same index makes restored
// iterators exact; one that ignores index resumes from wherever it is. An error or a panic fails
// that element (Next returns it, naming the element) and the iteration goes on.
type GeneratorFunc func(ctx *Context, index int64) ([]*Tensor, error)

// NewDatasetFromGenerator is elements made by fn, with a declared spec (from_generator): each
// element is checked against specs (INVALID_ARGUMENT naming the component when it does not match).
// The binding holds fn until the last dataset using it is freed.
func NewDatasetFromGenerator(ctx *Context, specs []ComponentSpec, fn GeneratorFunc) (*Dataset, error) {
	const name = "NewDatasetFromGenerator"
	if err := checkOpen(name, "context", ctx); err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, newError(CodeInvalidArgument, name+": generator is nil")
	}
	cnames, cspecs, free, err := cComponentSpecs(specs)
	defer free()
	if err != nil {
		return nil, err
	}
	h := cgo.NewHandle(&dataCallback{what: "generator", numOutputs: len(specs), generator: fn})
	var out *C.cairn_dataset
	err = takeStatus(C.cairn_go_dataset_from_generator(ctx.handle(), cnames, cspecs, C.size_t(len(specs)), C.uintptr_t(h), &out))
	runtime.KeepAlive(ctx)
	return callbackDatasetOrError(out, h, err)
}

// callbackDatasetOrError is the dataset of a call that was given the callback handle h; when no
// dataset was made the runtime never calls release, so the handle is deleted here.
func callbackDatasetOrError(out *C.cairn_dataset, h cgo.Handle, err error) (*Dataset, error) {
	if err != nil {
		deleteHandle(h)
		return nil, err
	}
	return newDataset(out), nil
}

// ---- Transformations ----

// DataOption configures Map, Filter and Interleave; each refuses the options it has no use for.
type DataOption func(*dataConfig)

type dataConfig struct {
	set            []string // the options given, by name, for the refusal
	parallel       *int
	deterministic  *bool
	eager          bool
	outputNames    []string
	outputSpecs    []ComponentSpec
	seed           *int64
	cycleLength    *int
	blockLength    *int
	hasOutputSpecs bool
	hasOutputNames bool
}

// WithParallelCalls runs the callback on n elements at once (Map) or reads n inner datasets
// ahead (Interleave); Autotune lets Cairn choose. Default 0: one at a time.
func WithParallelCalls(n int) DataOption {
	return func(c *dataConfig) { c.parallel = &n; c.set = append(c.set, "WithParallelCalls") }
}

// WithDeterministic delivers elements in input order whatever the parallelism (default true).
func WithDeterministic(on bool) DataOption {
	return func(c *dataConfig) { c.deterministic = &on; c.set = append(c.set, "WithDeterministic") }
}

// WithEager calls the callback for every element on real tensors instead of tracing it once
// (compile = 0). A Map needs WithOutputSpecs then.
func WithEager() DataOption {
	return func(c *dataConfig) { c.eager = true; c.set = append(c.set, "WithEager") }
}

// WithOutputNames names a Map's outputs (default "0", "1", ...); their count is the callback's
// number of outputs (default 1).
func WithOutputNames(names ...string) DataOption {
	return func(c *dataConfig) {
		c.outputNames = names
		c.hasOutputNames = true
		c.set = append(c.set, "WithOutputNames")
	}
}

// WithOutputSpecs declares a Map's outputs (names, dtypes, shapes): required with WithEager; a
// compiled map takes them from the trace otherwise. Their count is the callback's number of outputs.
func WithOutputSpecs(specs ...ComponentSpec) DataOption {
	return func(c *dataConfig) {
		c.outputSpecs = specs
		c.hasOutputSpecs = true
		c.set = append(c.set, "WithOutputSpecs")
	}
}

// WithDataSeed keys the callback's random ops that have seed 0 (Map, Filter): each element's
// random stream is keyed by (seed, epoch, element index). Default 0: the context's seed.
func WithDataSeed(seed int64) DataOption {
	return func(c *dataConfig) { c.seed = &seed; c.set = append(c.set, "WithDataSeed") }
}

// WithCycleLength sets how many inner datasets an Interleave keeps open (default Autotune: the CPUs).
func WithCycleLength(n int) DataOption {
	return func(c *dataConfig) { c.cycleLength = &n; c.set = append(c.set, "WithCycleLength") }
}

// WithBlockLength sets how many consecutive elements an Interleave takes from each inner dataset
// before moving on (default 1).
func WithBlockLength(n int) DataOption {
	return func(c *dataConfig) { c.blockLength = &n; c.set = append(c.set, "WithBlockLength") }
}

// callbackOptions checks the dataset and the callback of a Map, Filter or Interleave (fn names it)
// and applies options, refusing any not in allowed.
func (d *Dataset) callbackOptions(fn string, nilCallback bool, options []DataOption, allowed ...string) (dataConfig, error) {
	var cfg dataConfig
	if err := checkOpen(fn, "dataset", d); err != nil {
		return cfg, err
	}
	if nilCallback {
		return cfg, newError(CodeInvalidArgument, fn+": function is nil")
	}
	for _, set := range options {
		set(&cfg)
	}
	for _, name := range cfg.set {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			return cfg, newError(CodeInvalidArgument, fmt.Sprintf("%s: %s does not apply here", fn, name))
		}
	}
	return cfg, nil
}

func int32Option(fn, what string, v *int) (C.int32_t, error) {
	if *v < math.MinInt32 || *v > math.MaxInt32 {
		return 0, newError(CodeInvalidArgument, fmt.Sprintf("%s: %s %d does not fit in an int32", fn, what, *v))
	}
	return C.int32_t(*v), nil
}

// Map applies fn to every element (Dataset.map): its inputs are the element's components in
// order, its outputs the new element's. By default fn is traced once, here, on symbolic tensors
// with the input's spec (as a Function body: it builds ops, and a wrong fn fails now) and the
// graph runs for every element; WithEager calls fn for every element instead, on Cairn's worker
// threads, several at once with WithParallelCalls, so it must be safe for concurrent use. name
// names the map in errors ("map 'prepare' (element 17): ...") and descriptions ("" is "map").
// An error or a panic in fn fails that element; the iterator goes on with the next one.
// Options: WithParallelCalls, WithDeterministic, WithEager, WithOutputNames, WithOutputSpecs,
// WithDataSeed. The binding holds fn until the last dataset using it is freed.
func (d *Dataset) Map(name string, fn FunctionBody, options ...DataOption) (*Dataset, error) {
	const fname = "Dataset.Map"
	cfg, err := d.callbackOptions(fname, fn == nil, options, "WithParallelCalls", "WithDeterministic", "WithEager",
		"WithOutputNames", "WithOutputSpecs", "WithDataSeed")
	if err != nil {
		return nil, err
	}
	opts := (*C.cairn_map_options)(C.malloc(C.sizeof_cairn_map_options))
	defer C.free(unsafe.Pointer(opts))
	if err := cMapOptionsInit(opts, C.sizeof_cairn_map_options); err != nil {
		return nil, err
	}
	if cfg.parallel != nil {
		if opts.num_parallel_calls, err = int32Option(fname, "num_parallel_calls", cfg.parallel); err != nil {
			return nil, err
		}
	}
	if cfg.deterministic != nil {
		opts.deterministic = cBool(*cfg.deterministic)
	}
	if cfg.eager {
		opts.compile = 0
	}
	if cfg.seed != nil {
		opts.seed = C.int64_t(*cfg.seed)
	}
	numOutputs := 1
	names := cfg.outputNames
	if cfg.hasOutputSpecs {
		if cfg.hasOutputNames {
			return nil, newError(CodeInvalidArgument, fname+": WithOutputSpecs names the outputs: leave out WithOutputNames")
		}
		cnames, cspecs, free, err := cComponentSpecs(cfg.outputSpecs)
		defer free()
		if err != nil {
			return nil, err
		}
		opts.output_names, opts.output_specs = cnames, cspecs
		numOutputs = len(cfg.outputSpecs)
	} else if cfg.hasOutputNames {
		cnames, free := cStrings(append([]string{}, names...))
		defer free()
		opts.output_names = cnames
		numOutputs = len(names)
	}
	opts.n_outputs = C.size_t(numOutputs)
	cname, freeName := cOptionalString(name)
	defer freeName()
	h := cgo.NewHandle(&dataCallback{what: "map function", numOutputs: numOutputs, body: fn})
	var out *C.cairn_dataset
	err = takeStatus(C.cairn_go_dataset_map(d.handle(), cname, C.uintptr_t(h), opts, &out))
	runtime.KeepAlive(d)
	return callbackDatasetOrError(out, h, err)
}

// Filter keeps the elements for which fn returns true: one bool scalar tensor (Dataset.filter).
// fn is traced once (as Map's) unless WithEager. The result is a stream: its cardinality is
// unknown and a shuffle after it buffers. name names the filter in errors ("" is "filter").
// Options: WithEager, WithDataSeed.
func (d *Dataset) Filter(name string, fn FunctionBody, options ...DataOption) (*Dataset, error) {
	const fname = "Dataset.Filter"
	cfg, err := d.callbackOptions(fname, fn == nil, options, "WithEager", "WithDataSeed")
	if err != nil {
		return nil, err
	}
	opts := (*C.cairn_filter_options)(C.malloc(C.sizeof_cairn_filter_options))
	defer C.free(unsafe.Pointer(opts))
	if err := cFilterOptionsInit(opts, C.sizeof_cairn_filter_options); err != nil {
		return nil, err
	}
	if cfg.eager {
		opts.compile = 0
	}
	if cfg.seed != nil {
		opts.seed = C.int64_t(*cfg.seed)
	}
	cname, freeName := cOptionalString(name)
	defer freeName()
	h := cgo.NewHandle(&dataCallback{what: "filter predicate", numOutputs: 1, body: fn})
	var out *C.cairn_dataset
	err = takeStatus(C.cairn_go_dataset_filter(d.handle(), cname, C.uintptr_t(h), opts, &out))
	runtime.KeepAlive(d)
	return callbackDatasetOrError(out, h, err)
}

// DatasetFunc makes the inner dataset of one input element for Interleave. The interleave takes
// the returned Dataset (it is closed on return): return one made in the call. It runs on Cairn's
// worker threads, possibly several at once; element and ctx are valid only during the call.
type DatasetFunc func(ctx *Context, element []*Tensor) (*Dataset, error)

// Interleave maps each element to a dataset with fn and interleaves their elements
// (Dataset.interleave): WithCycleLength inner datasets at a time, WithBlockLength elements from
// each in turn, WithParallelCalls read ahead, WithDeterministic order. Every inner dataset must have
// the spec `specs`. The binding holds fn until the last dataset using it is freed.
func (d *Dataset) Interleave(fn DatasetFunc, specs []ComponentSpec, options ...DataOption) (*Dataset, error) {
	const fname = "Dataset.Interleave"
	cfg, err := d.callbackOptions(fname, fn == nil, options, "WithCycleLength", "WithBlockLength", "WithParallelCalls", "WithDeterministic")
	if err != nil {
		return nil, err
	}
	opts := (*C.cairn_interleave_options)(C.malloc(C.sizeof_cairn_interleave_options))
	defer C.free(unsafe.Pointer(opts))
	if err := cInterleaveOptionsInit(opts, C.sizeof_cairn_interleave_options); err != nil {
		return nil, err
	}
	for _, o := range []struct {
		v    *int
		what string
		dst  *C.int32_t
	}{{cfg.cycleLength, "cycle_length", &opts.cycle_length}, {cfg.blockLength, "block_length", &opts.block_length},
		{cfg.parallel, "num_parallel_calls", &opts.num_parallel_calls}} {
		if o.v != nil {
			if *o.dst, err = int32Option(fname, o.what, o.v); err != nil {
				return nil, err
			}
		}
	}
	if cfg.deterministic != nil {
		opts.deterministic = cBool(*cfg.deterministic)
	}
	cnames, cspecs, free, err := cComponentSpecs(specs)
	defer free()
	if err != nil {
		return nil, err
	}
	h := cgo.NewHandle(&dataCallback{what: "interleave function", datasetFn: fn})
	var out *C.cairn_dataset
	err = takeStatus(C.cairn_go_dataset_interleave(d.handle(), C.uintptr_t(h), cnames, cspecs, C.size_t(len(specs)), opts, &out))
	runtime.KeepAlive(d)
	return callbackDatasetOrError(out, h, err)
}

// transform runs a C transformation of d, named fn in the binding's own errors.
func (d *Dataset) transform(fn string, call func(*C.cairn_dataset, **C.cairn_dataset) error) (*Dataset, error) {
	if err := checkOpen(fn, "dataset", d); err != nil {
		return nil, err
	}
	var out *C.cairn_dataset
	err := call(d.handle(), &out)
	runtime.KeepAlive(d)
	return datasetOrError(out, err)
}

// Batch stacks size consecutive elements into one (Dataset.batch): each component gains a leading
// dimension. The last batch is smaller unless dropRemainder. Elements of one batch whose shapes
// differ are an error naming the component, the element and both shapes.
func (d *Dataset) Batch(size int64, dropRemainder bool) (*Dataset, error) {
	return d.transform("Dataset.Batch", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetBatch(in, C.int64_t(size), cBool(dropRemainder), out)
	})
}

// PaddedBatch batches elements of different shapes by padding them (Dataset.padded_batch).
// paddedShapes is nil (pad every dim to the batch's largest) or one shape per component, where a
// dim of -1 pads to the batch's largest and a fixed dim pads to that size. paddingValues is nil
// (zeros) or one per component: nil (zero) or a scalar of the component's dtype.
func (d *Dataset) PaddedBatch(size int64, dropRemainder bool, paddedShapes [][]int64, paddingValues []*Tensor) (*Dataset, error) {
	const fn = "Dataset.PaddedBatch"
	var shapes *C.cairn_tensor_spec
	if paddedShapes != nil {
		specs := make([]TensorSpec, len(paddedShapes))
		for i, s := range paddedShapes {
			specs[i].Shape = s
		}
		cspecs, free, err := cSignature(specs)
		defer free()
		if err != nil {
			return nil, err
		}
		shapes = cspecs
	}
	var values **C.cairn_tensor
	if paddingValues != nil {
		for i, v := range paddingValues {
			if v != nil && v.handle() == nil {
				return nil, handleError(fn, fmt.Sprintf("padding value %d", i), false)
			}
		}
		handles := cTensors(paddingValues) // a nil Tensor gives NULL: zero padding
		values = unsafe.SliceData(handles)
		defer runtime.KeepAlive(handles)
	}
	defer runtime.KeepAlive(paddingValues)
	return d.transform(fn, func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetPaddedBatch(in, C.int64_t(size), cBool(dropRemainder), shapes, values, out)
	})
}

// Unbatch splits each element along its first dimension (Dataset.unbatch).
func (d *Dataset) Unbatch() (*Dataset, error) {
	return d.transform("Dataset.Unbatch", cDatasetUnbatch)
}

// Shuffle shuffles (Dataset.shuffle). Over an indexable input the order is a seeded permutation
// of the whole input (nothing to save in a checkpoint); over a stream, a buffer of bufferSize
// elements. With reshuffleEachIteration every pass of an enclosing Repeat, and every new
// iterator, has its own order; otherwise all share one.
func (d *Dataset) Shuffle(bufferSize, seed int64, reshuffleEachIteration bool) (*Dataset, error) {
	return d.transform("Dataset.Shuffle", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetShuffle(in, C.int64_t(bufferSize), C.int64_t(seed), cBool(reshuffleEachIteration), out)
	})
}

// Repeat is the input count times; -1 forever (Dataset.repeat).
func (d *Dataset) Repeat(count int64) (*Dataset, error) {
	return d.countTransform("Dataset.Repeat", count, cDatasetRepeat)
}

// Take is the first count elements; -1 all (Dataset.take).
func (d *Dataset) Take(count int64) (*Dataset, error) {
	return d.countTransform("Dataset.Take", count, cDatasetTake)
}

// Skip is all but the first count elements; -1 skips all (Dataset.skip).
func (d *Dataset) Skip(count int64) (*Dataset, error) {
	return d.countTransform("Dataset.Skip", count, cDatasetSkip)
}

// Prefetch computes up to bufferSize elements ahead on a background thread (Dataset.prefetch);
// Autotune picks the size, and over an indexable pipeline also computes elements on every CPU (the
// functions of its maps must then tolerate concurrent calls).
func (d *Dataset) Prefetch(bufferSize int64) (*Dataset, error) {
	return d.countTransform("Dataset.Prefetch", bufferSize, cDatasetPrefetch)
}

// Enumerate prepends an int64 scalar component "index" counting from start (Dataset.enumerate).
func (d *Dataset) Enumerate(start int64) (*Dataset, error) {
	return d.countTransform("Dataset.Enumerate", start, cDatasetEnumerate)
}

func (d *Dataset) countTransform(fn string, n int64,
	call func(*C.cairn_dataset, C.int64_t, **C.cairn_dataset) error) (*Dataset, error) {
	return d.transform(fn, func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return call(in, C.int64_t(n), out)
	})
}

// Shard is every numShards-th element starting at index (Dataset.shard).
func (d *Dataset) Shard(numShards, index int64) (*Dataset, error) {
	return d.transform("Dataset.Shard", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetShard(in, C.int64_t(numShards), C.int64_t(index), out)
	})
}

// PrefetchToDevice prefetches bufferSize elements and copies every component to device ("cpu",
// "vulkan:0") ahead of use (tf.data.experimental.prefetch_to_device).
func (d *Dataset) PrefetchToDevice(device string, bufferSize int64) (*Dataset, error) {
	cdevice := C.CString(device)
	defer C.free(unsafe.Pointer(cdevice))
	return d.transform("Dataset.PrefetchToDevice", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetPrefetchToDevice(in, cdevice, C.int64_t(bufferSize), out)
	})
}

// Cache caches the elements (Dataset.cache): in memory when filename is "", otherwise in that
// file (written during the first full pass; later iterations read it).
func (d *Dataset) Cache(filename string) (*Dataset, error) {
	cname, free := cOptionalString(filename)
	defer free()
	return d.transform("Dataset.Cache", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetCache(in, cname, out)
	})
}

// Concatenate is the elements of d, then those of other (Dataset.concatenate): the specs have the
// same names, dtypes and ranks; dims that differ become -1.
func (d *Dataset) Concatenate(other *Dataset) (*Dataset, error) {
	if err := checkOpen("Dataset.Concatenate", "other", other); err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(other)
	return d.transform("Dataset.Concatenate", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetConcatenate(in, other.handle(), out)
	})
}

// Select keeps the components names, in that order, renamed to newNames (nil: the same names).
func (d *Dataset) Select(names []string, newNames []string) (*Dataset, error) {
	if newNames != nil && len(newNames) != len(names) {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("Dataset.Select: %d new names for %d components", len(newNames), len(names)))
	}
	cnames, free := cStrings(append([]string{}, names...))
	defer free()
	cnew, freeNew := cStrings(newNames)
	defer freeNew()
	return d.transform("Dataset.Select", func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetSelect(in, cnames, cnew, C.size_t(len(names)), out)
	})
}

// ParseExample parses the serialized tf.train.Example in component (a uint8 vector, as a TFRecord
// source gives) with specs, as ParseExamples does for one record: the component is replaced by the
// outputs, named "<key>" (FixedLen) or "<key>/indices", "<key>/values" (VarLen), in spec order.
func (d *Dataset) ParseExample(component string, specs []FeatureSpec) (*Dataset, error) {
	const fn = "Dataset.ParseExample"
	cspecs, free, err := cFeatureSpecs(fn, specs)
	if err != nil {
		return nil, err
	}
	defer free()
	ccomponent := C.CString(component)
	defer C.free(unsafe.Pointer(ccomponent))
	defer runtime.KeepAlive(specs)
	return d.transform(fn, func(in *C.cairn_dataset, out **C.cairn_dataset) error {
		return cDatasetParseExample(in, ccomponent, unsafe.SliceData(cspecs), C.size_t(len(specs)), out)
	})
}

// ZipDatasets is the elements of the datasets side by side (Dataset.zip): the components of the
// first, then of the second, ...; it ends with the shortest. Component names must not repeat
// (rename with Select).
func ZipDatasets(datasets ...*Dataset) (*Dataset, error) {
	if err := checkEach("ZipDatasets", "dataset", datasets); err != nil {
		return nil, err
	}
	handles := make([]*C.cairn_dataset, len(datasets)+1) // Go memory holding only C pointers
	for i, d := range datasets {
		handles[i] = d.handle()
	}
	var out *C.cairn_dataset
	err := cDatasetZip(unsafe.SliceData(handles), C.size_t(len(datasets)), &out)
	runtime.KeepAlive(datasets)
	return datasetOrError(out, err)
}

// ---- Callbacks ----

// dataCallback is what the dataset trampolines reach through a handle: a Map or Filter body, a
// generator or an interleave function.
type dataCallback struct {
	what       string // names the callback in errors ("map function")
	numOutputs int
	body       FunctionBody
	generator  GeneratorFunc
	datasetFn  DatasetFunc
}

func dataCallbackOf(h cgo.Handle) *dataCallback {
	return h.Value().(*dataCallback)
}

// call runs a Map or Filter body (cairnGoDataCall); its error becomes the element's status.
func (cb *dataCallback) call(cctx *C.cairn_context, inputs, outputs []*C.cairn_tensor) *C.cairn_status {
	err := runHostCallback(cctx, cb.body, "the "+cb.what, inputs, outputs, func(got int) error {
		return newError(CodeInvalidArgument, fmt.Sprintf("the %s returned %d output(s), but %d were declared", cb.what, got, len(outputs)))
	})
	if err != nil {
		return hostStatus(err)
	}
	return nil
}

// generate runs a generator for element index (cairnGoGenerator).
func (cb *dataCallback) generate(cctx *C.cairn_context, index int64, outputs []*C.cairn_tensor, got *C.cairn_bool) *C.cairn_status {
	*got = 0
	end := false
	body := func(ctx *Context, _ []*Tensor) ([]*Tensor, error) {
		ts, err := cb.generator(ctx, index)
		if errors.Is(err, ErrEndOfData) {
			end = true
			closeTensors(ts)
			return nil, nil
		}
		return ts, err
	}
	err := runHostCallback(cctx, body, "the generator", nil, outputs, func(n int) error {
		if end {
			return nil
		}
		return newError(CodeInvalidArgument, fmt.Sprintf("the generator returned %d tensor(s) for element %d, but the spec has %d components", n, index, len(outputs)))
	})
	if end {
		return nil
	}
	if err != nil {
		return hostStatus(err)
	}
	*got = 1
	return nil
}

// makeDataset runs an interleave function (cairnGoDatasetFn) and hands its dataset to the runtime.
func (cb *dataCallback) makeDataset(cctx *C.cairn_context, element []*C.cairn_tensor, out **C.cairn_dataset) *C.cairn_status {
	var made *Dataset
	body := func(ctx *Context, ins []*Tensor) ([]*Tensor, error) {
		ds, err := cb.datasetFn(ctx, ins)
		made = ds
		return nil, err
	}
	err := runHostCallback(cctx, body, "the interleave function", element, nil, func(int) error { return nil })
	if err == nil && (made == nil || made.handle() == nil) {
		err = newError(CodeInvalidArgument, "the interleave function returned a nil or closed dataset")
	}
	if err != nil {
		return hostStatus(err)
	}
	runtime.SetFinalizer(made, nil)
	*out, made.ptr = made.ptr, nil // the interleave takes it
	return nil
}
