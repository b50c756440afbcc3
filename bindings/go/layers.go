package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"
)

// Layer is a Keras layer (tf.keras.layers): a tracked object (kind LAYER) that creates its
// variables on its first Call from the input's shape. A checkpoint restored before that is applied
// when the variables appear.
//
// Activations: "linear" (or ""), "relu", "relu6", "sigmoid", "tanh", "softmax", "softplus", "elu",
// "selu", "gelu". Initializers: "glorot_uniform", "glorot_normal", "he_normal", "he_uniform",
// "zeros", "ones", "random_normal", "random_uniform". Without WithLayerName a layer gets a unique
// default name ("dense", "dense_1", ...).
type Layer struct {
	*Object
}

func (l *Layer) object() *Object {
	if l == nil {
		return nil
	}
	return l.Object
}

// AsLayer is o as a Layer, sharing o's handle; an error unless o is a layer.
func (o *Object) AsLayer() (*Layer, error) {
	if err := o.expectKind("AsLayer", ObjectKindLayer); err != nil {
		return nil, err
	}
	return &Layer{o}, nil
}

// Call applies the layer to x, building it on the first call. training switches Dropout and
// BatchNorm to their training behaviour. Errors: INVALID_ARGUMENT naming the layer for an input of
// the wrong rank, dtype or size.
func (l *Layer) Call(x *Tensor, training bool) (*Tensor, error) {
	if err := checkOpen("Layer.Call", "layer", l, "input", x); err != nil {
		return nil, err
	}
	var out *C.cairn_tensor
	err := cLayerCall(handleOf(l), x.handle(), cBool(training), &out)
	runtime.KeepAlive(l)
	runtime.KeepAlive(x)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// Weights lists the layer's variables, nested layers' included, in creation order (only the
// trainable ones when trainableOnly); empty before the first Call. Close the handles when done.
func (l *Layer) Weights(trainableOnly bool) ([]*Variable, error) {
	found, err := l.object().query(func(p *C.cairn_object, out **C.cairn_object_array) error {
		return cLayerWeights(p, cBool(trainableOnly), out)
	})
	if err != nil {
		return nil, err
	}
	vars := make([]*Variable, len(found))
	for i, f := range found {
		vars[i] = &Variable{f.Object}
	}
	return vars, nil
}

// Summary is Keras' summary() table: layers, output shapes, parameter counts and totals.
func (l *Layer) Summary() (string, error) {
	if err := checkOpen("Layer.Summary", "layer", l); err != nil {
		return "", err
	}
	var out *C.char
	err := cLayerSummary(handleOf(l), &out)
	runtime.KeepAlive(l)
	return takeString(out, err)
}

// CountParams is the number of scalars in the layer's variables (0 before the first Call).
func (l *Layer) CountParams() (int64, error) {
	if err := checkOpen("Layer.CountParams", "layer", l); err != nil {
		return 0, err
	}
	var n C.int64_t
	err := cLayerCountParams(handleOf(l), &n)
	runtime.KeepAlive(l)
	return int64(n), err
}

// Sequential is a Keras Sequential model: a Layer calling its layers in order. Its layers are its
// edges "layer-0", "layer-1", ...
type Sequential struct {
	*Layer
}

func (s *Sequential) object() *Object {
	if s == nil {
		return nil
	}
	return s.Layer.object()
}

// NewSequential creates an empty model, then adds layers in order. Takes WithLayerName.
func NewSequential(ctx *Context, layers []*Layer, options ...LayerOption) (*Sequential, error) {
	cfg, opts, err := layerSetup("NewSequential", ctx, cSequentialOptionsInit, options, "name")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cSequentialCreate(ctx.handle(), opts, &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	s := &Sequential{&Layer{newObject(out)}}
	for _, l := range layers {
		if err := s.Add(l); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Add appends layer (any layer, a Sequential too); the model keeps its own reference.
func (s *Sequential) Add(layer Tracked) error {
	if err := checkOpen("Sequential.Add", "model", s, "layer", layer); err != nil {
		return err
	}
	err := cSequentialAdd(handleOf(s), handleOf(layer))
	runtime.KeepAlive(s)
	runtime.KeepAlive(layer)
	return err
}

// ---- Options ----

// LayerOption configures a layer constructor. Each constructor lists the options it takes and
// refuses the others with INVALID_ARGUMENT. WithMomentum and WithEpsilon (SharedOption) are
// layer options too.
type LayerOption interface {
	applyLayer(*layerConfig)
}

// layerConfig gathers the layer options the caller gave (nil: not given, so the C struct keeps
// the default its _init function set); the C option structs are filled from it.
type layerConfig struct {
	set                                             []string // option names given, for the applicability check
	name, activation, padding, kernelInit, biasInit *string
	useBias, center, scale                          *bool
	kernel, strides, pool                           *[2]int64
	axis, dropoutSeed                               *int64
	epsilon, momentum                               *float64
	cstrings                                        []unsafe.Pointer
}

func (c *layerConfig) mark(option string) { c.set = append(c.set, option) }

type layerOption struct {
	name  string
	apply func(*layerConfig)
}

func (o layerOption) applyLayer(c *layerConfig) {
	c.mark(o.name)
	o.apply(c)
}

// newLayerConfig gathers options, refusing those not in allowed.
func newLayerConfig(fn string, options []LayerOption, allowed ...string) (*layerConfig, error) {
	c := &layerConfig{}
	for _, o := range options {
		o.applyLayer(c)
	}
	for _, name := range c.set {
		if !slices.Contains(allowed, name) {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: option %s does not apply (it takes %s)",
				fn, name, strings.Join(allowed, ", ")))
		}
	}
	return c, nil
}

// cstr is s as a C string freed by free; NULL for "" (the C default).
func (c *layerConfig) cstr(s string) *C.char {
	if s == "" {
		return nil
	}
	p := C.CString(s)
	c.cstrings = append(c.cstrings, unsafe.Pointer(p))
	return p
}

// str sets *dst to a C copy of *v when the caller gave v.
func (c *layerConfig) str(dst **C.char, v *string) {
	if v != nil {
		*dst = c.cstr(*v)
	}
}

func (c *layerConfig) free() {
	for _, p := range c.cstrings {
		C.free(p)
	}
	c.cstrings = nil
}

// setBool sets *dst when the caller gave v.
func setBool(dst *C.cairn_bool, v *bool) {
	if v != nil {
		*dst = cBool(*v)
	}
}

// setPair sets *h and *w when the caller gave v.
func setPair(h, w *C.int64_t, v *[2]int64) {
	if v != nil {
		*h, *w = C.int64_t(v[0]), C.int64_t(v[1])
	}
}

// cAlloc is a zeroed T in C memory (an options struct holding C strings); free it with C.free.
func cAlloc[T any]() *T {
	var zero T
	return (*T)(C.calloc(1, C.size_t(unsafe.Sizeof(zero))))
}

// layerSetup is the start of every layer constructor fn: it refuses a nil or closed ctx, gathers
// options (refusing those not in allowed) and returns the options struct T in C memory, filled by
// its C _init function. cfg.free frees the struct with the C strings, error or not.
func layerSetup[T any](fn string, ctx *Context, init func(*T, C.uint32_t) error, options []LayerOption,
	allowed ...string) (cfg *layerConfig, opts *T, err error) {
	if err := checkOpen(fn, "context", ctx); err != nil {
		return &layerConfig{}, nil, err
	}
	if cfg, err = newLayerConfig(fn, options, allowed...); err != nil {
		return &layerConfig{}, nil, err
	}
	opts = cAlloc[T]()
	cfg.cstrings = append(cfg.cstrings, unsafe.Pointer(opts))
	return cfg, opts, init(opts, C.uint32_t(unsafe.Sizeof(*opts)))
}

// WithLayerName names the layer (default: a unique name from its kind, "dense", "dense_1", ...).
func WithLayerName(name string) LayerOption {
	return layerOption{"name", func(c *layerConfig) { c.name = &name }}
}

// WithActivation applies an activation to Dense's or Conv2D's output (default linear).
func WithActivation(activation string) LayerOption {
	return layerOption{"activation", func(c *layerConfig) { c.activation = &activation }}
}

// WithUseBias says whether Dense or Conv2D adds a "bias" (default true).
func WithUseBias(on bool) LayerOption {
	return layerOption{"use_bias", func(c *layerConfig) { c.useBias = &on }}
}

// WithKernelInitializer sets Dense's or Conv2D's kernel initializer (default "glorot_uniform").
func WithKernelInitializer(name string) LayerOption {
	return layerOption{"kernel_initializer", func(c *layerConfig) { c.kernelInit = &name }}
}

// WithBiasInitializer sets Dense's or Conv2D's bias initializer (default "zeros").
func WithBiasInitializer(name string) LayerOption {
	return layerOption{"bias_initializer", func(c *layerConfig) { c.biasInit = &name }}
}

// WithKernelSize sets Conv2D's window (default 3 x 3).
func WithKernelSize(h, w int64) LayerOption {
	return layerOption{"kernel_size", func(c *layerConfig) { c.kernel = &[2]int64{h, w} }}
}

// WithPoolSize sets a pooling window (default 2 x 2).
func WithPoolSize(h, w int64) LayerOption {
	return layerOption{"pool_size", func(c *layerConfig) { c.pool = &[2]int64{h, w} }}
}

// WithStrides sets Conv2D's strides (default 1 x 1) or a pooling layer's (default: the pool size).
func WithStrides(h, w int64) LayerOption {
	return layerOption{"strides", func(c *layerConfig) { c.strides = &[2]int64{h, w} }}
}

// WithPadding sets Conv2D's or a pooling layer's padding: "VALID" (default) or "SAME".
func WithPadding(padding string) LayerOption {
	return layerOption{"padding", func(c *layerConfig) { c.padding = &padding }}
}

// WithAxis sets the axis LayerNorm or BatchNorm normalises (default -1).
func WithAxis(axis int64) LayerOption {
	return layerOption{"axis", func(c *layerConfig) { c.axis = &axis }}
}

// WithCenter says whether LayerNorm or BatchNorm learns an offset "beta" (default true).
func WithCenter(on bool) LayerOption {
	return layerOption{"center", func(c *layerConfig) { c.center = &on }}
}

// WithScale says whether LayerNorm or BatchNorm learns a factor "gamma" (default true).
func WithScale(on bool) LayerOption {
	return layerOption{"scale", func(c *layerConfig) { c.scale = &on }}
}

// WithDropoutSeed seeds Dropout's masks (default -1: the context's random stream).
func WithDropoutSeed(seed int64) LayerOption {
	return layerOption{"seed", func(c *layerConfig) { c.dropoutSeed = &seed }}
}

// ---- Constructors ----

// layerOrError wraps a created layer; the config's C strings are freed by the caller.
func layerOrError(ctx *Context, p *C.cairn_object, err error) (*Layer, error) {
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return &Layer{newObject(p)}, nil
}

// NewDense is activation(x @ kernel + bias) over the last axis with units outputs; weights
// "kernel" and "bias". Takes WithLayerName, WithActivation, WithUseBias, WithKernelInitializer,
// WithBiasInitializer.
func NewDense(ctx *Context, units int64, options ...LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup("NewDense", ctx, cDenseOptionsInit, options, "name", "activation", "use_bias", "kernel_initializer", "bias_initializer")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	opts.units = C.int64_t(units)
	cfg.str(&opts.activation, cfg.activation)
	setBool(&opts.use_bias, cfg.useBias)
	cfg.str(&opts.kernel_initializer, cfg.kernelInit)
	cfg.str(&opts.bias_initializer, cfg.biasInit)
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cDenseCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewConv2D is a 2-D convolution over NHWC input with filters outputs; weights "kernel"
// [kh, kw, in, filters] and "bias". Takes the options of NewDense plus WithKernelSize,
// WithStrides and WithPadding.
func NewConv2D(ctx *Context, filters int64, options ...LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup("NewConv2D", ctx, cConv2dOptionsInit, options, "name", "activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_size", "strides", "padding")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	opts.filters = C.int64_t(filters)
	setPair(&opts.kernel_h, &opts.kernel_w, cfg.kernel)
	setPair(&opts.stride_h, &opts.stride_w, cfg.strides)
	cfg.str(&opts.padding, cfg.padding)
	cfg.str(&opts.activation, cfg.activation)
	setBool(&opts.use_bias, cfg.useBias)
	cfg.str(&opts.kernel_initializer, cfg.kernelInit)
	cfg.str(&opts.bias_initializer, cfg.biasInit)
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cConv2dCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewMaxPool2D is max pooling over NHWC input. Takes WithLayerName, WithPoolSize, WithStrides,
// WithPadding.
func NewMaxPool2D(ctx *Context, options ...LayerOption) (*Layer, error) {
	return newPool2D(ctx, "NewMaxPool2D", cMaxPool2dCreate, options)
}

// NewAvgPool2D is average pooling over NHWC input; it takes the options of NewMaxPool2D.
func NewAvgPool2D(ctx *Context, options ...LayerOption) (*Layer, error) {
	return newPool2D(ctx, "NewAvgPool2D", cAvgPool2dCreate, options)
}

func newPool2D(ctx *Context, fn string, create func(*C.cairn_context, *C.cairn_pool2d_options, **C.cairn_object) error,
	options []LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup(fn, ctx, cPool2dOptionsInit, options, "name", "pool_size", "strides", "padding")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	setPair(&opts.pool_h, &opts.pool_w, cfg.pool)
	setPair(&opts.stride_h, &opts.stride_w, cfg.strides)
	cfg.str(&opts.padding, cfg.padding)
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = create(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewFlatten reshapes [batch, ...] to [batch, product of the rest]. Takes WithLayerName.
func NewFlatten(ctx *Context, options ...LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup("NewFlatten", ctx, cFlattenOptionsInit, options, "name")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cFlattenCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewEmbedding maps int32/int64 indices in [0, inputDim) to vectors of outputDim; weight
// "embeddings". Takes WithLayerName.
func NewEmbedding(ctx *Context, inputDim, outputDim int64, options ...LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup("NewEmbedding", ctx, cEmbeddingOptionsInit, options, "name")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	opts.input_dim, opts.output_dim = C.int64_t(inputDim), C.int64_t(outputDim)
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cEmbeddingCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewLayerNorm is layer normalisation. Takes WithLayerName, WithAxis, WithEpsilon, WithCenter,
// WithScale.
func NewLayerNorm(ctx *Context, options ...LayerOption) (*Layer, error) {
	return newNorm(ctx, "NewLayerNorm", cLayerNormCreate, options, "name", "axis", "epsilon", "center", "scale")
}

// NewBatchNorm is batch normalisation with non-trainable "moving_mean" and "moving_variance",
// updated by calls with training. Takes the options of NewLayerNorm plus WithMomentum.
func NewBatchNorm(ctx *Context, options ...LayerOption) (*Layer, error) {
	return newNorm(ctx, "NewBatchNorm", cBatchNormCreate, options, "name", "axis", "epsilon", "momentum", "center", "scale")
}

func newNorm(ctx *Context, fn string, create func(*C.cairn_context, *C.cairn_norm_options, **C.cairn_object) error,
	options []LayerOption, allowed ...string) (*Layer, error) {
	cfg, opts, err := layerSetup(fn, ctx, cNormOptionsInit, options, allowed...)
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	if cfg.axis != nil {
		opts.axis = C.int64_t(*cfg.axis)
	}
	if cfg.epsilon != nil {
		opts.epsilon = C.double(*cfg.epsilon)
	}
	if cfg.momentum != nil {
		opts.momentum = C.double(*cfg.momentum)
	}
	setBool(&opts.center, cfg.center)
	setBool(&opts.scale, cfg.scale)
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = create(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewDropout zeroes inputs with probability rate in [0, 1) when called with training, scaling
// the rest by 1 / (1 - rate); identity otherwise. Takes WithLayerName, WithDropoutSeed.
func NewDropout(ctx *Context, rate float64, options ...LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup("NewDropout", ctx, cDropoutOptionsInit, options, "name", "seed")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	opts.rate = C.double(rate)
	if cfg.dropoutSeed != nil {
		opts.seed = C.int64_t(*cfg.dropoutSeed)
	}
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cDropoutCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewActivation is a layer applying one activation ("" is linear). Takes WithLayerName.
func NewActivation(ctx *Context, activation string, options ...LayerOption) (*Layer, error) {
	cfg, opts, err := layerSetup("NewActivation", ctx, cActivationOptionsInit, options, "name")
	defer cfg.free()
	if err != nil {
		return nil, err
	}
	opts.activation = cfg.cstr(activation)
	cfg.str(&opts.name, cfg.name)
	var out *C.cairn_object
	err = cActivationCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}
