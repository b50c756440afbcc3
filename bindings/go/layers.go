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
	if err := checkOpen("NewSequential", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewSequential", options, "name")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	var out *C.cairn_object
	err = cSequentialCreate(ctx.handle(), cfg.cstr(cfg.name), &out)
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

// layerConfig gathers every layer option; the C option structs are filled from it.
type layerConfig struct {
	set                                             []string // option names given, for the applicability check
	name, activation, padding, kernelInit, biasInit string
	useBias                                         bool
	kernel, strides, pool                           [2]int64
	norm                                            C.cairn_norm_options
	dropoutSeed                                     int64
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

// newLayerConfig applies options over the defaults, refusing those not in allowed.
func newLayerConfig(fn string, options []LayerOption, allowed ...string) (*layerConfig, error) {
	c := &layerConfig{useBias: true, kernel: [2]int64{3, 3}, pool: [2]int64{2, 2}, dropoutSeed: -1}
	c.norm = cNormOptionsInit()
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

func (c *layerConfig) free() {
	for _, p := range c.cstrings {
		C.free(p)
	}
	c.cstrings = nil
}

// WithLayerName names the layer (default: a unique name from its kind, "dense", "dense_1", ...).
func WithLayerName(name string) LayerOption {
	return layerOption{"name", func(c *layerConfig) { c.name = name }}
}

// WithActivation applies an activation to Dense's or Conv2D's output (default linear).
func WithActivation(activation string) LayerOption {
	return layerOption{"activation", func(c *layerConfig) { c.activation = activation }}
}

// WithUseBias says whether Dense or Conv2D adds a "bias" (default true).
func WithUseBias(on bool) LayerOption {
	return layerOption{"use_bias", func(c *layerConfig) { c.useBias = on }}
}

// WithKernelInitializer sets Dense's or Conv2D's kernel initializer (default "glorot_uniform").
func WithKernelInitializer(name string) LayerOption {
	return layerOption{"kernel_initializer", func(c *layerConfig) { c.kernelInit = name }}
}

// WithBiasInitializer sets Dense's or Conv2D's bias initializer (default "zeros").
func WithBiasInitializer(name string) LayerOption {
	return layerOption{"bias_initializer", func(c *layerConfig) { c.biasInit = name }}
}

// WithKernelSize sets Conv2D's window (default 3 x 3).
func WithKernelSize(h, w int64) LayerOption {
	return layerOption{"kernel_size", func(c *layerConfig) { c.kernel = [2]int64{h, w} }}
}

// WithPoolSize sets a pooling window (default 2 x 2).
func WithPoolSize(h, w int64) LayerOption {
	return layerOption{"pool_size", func(c *layerConfig) { c.pool = [2]int64{h, w} }}
}

// WithStrides sets Conv2D's strides (default 1 x 1) or a pooling layer's (default: the pool size).
func WithStrides(h, w int64) LayerOption {
	return layerOption{"strides", func(c *layerConfig) { c.strides = [2]int64{h, w} }}
}

// WithPadding sets Conv2D's or a pooling layer's padding: "VALID" (default) or "SAME".
func WithPadding(padding string) LayerOption {
	return layerOption{"padding", func(c *layerConfig) { c.padding = padding }}
}

// WithAxis sets the axis LayerNorm or BatchNorm normalises (default -1).
func WithAxis(axis int64) LayerOption {
	return layerOption{"axis", func(c *layerConfig) { c.norm.axis = C.int64_t(axis) }}
}

// WithCenter says whether LayerNorm or BatchNorm learns an offset "beta" (default true).
func WithCenter(on bool) LayerOption {
	return layerOption{"center", func(c *layerConfig) { c.norm.center = cBool(on) }}
}

// WithScale says whether LayerNorm or BatchNorm learns a factor "gamma" (default true).
func WithScale(on bool) LayerOption {
	return layerOption{"scale", func(c *layerConfig) { c.norm.scale = cBool(on) }}
}

// WithDropoutSeed seeds Dropout's masks (default -1: the context's random stream).
func WithDropoutSeed(seed int64) LayerOption {
	return layerOption{"seed", func(c *layerConfig) { c.dropoutSeed = seed }}
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
	if err := checkOpen("NewDense", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewDense", options, "name", "activation", "use_bias", "kernel_initializer", "bias_initializer")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	opts := (*C.cairn_dense_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_dense_options{}))))
	defer C.free(unsafe.Pointer(opts))
	*opts = cDenseOptionsInit()
	opts.units = C.int64_t(units)
	opts.activation = cfg.cstr(cfg.activation)
	opts.use_bias = cBool(cfg.useBias)
	opts.kernel_initializer = cfg.cstr(cfg.kernelInit)
	opts.bias_initializer = cfg.cstr(cfg.biasInit)
	opts.name = cfg.cstr(cfg.name)
	var out *C.cairn_object
	err = cDenseCreate(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewConv2D is a 2-D convolution over NHWC input with filters outputs; weights "kernel"
// [kh, kw, in, filters] and "bias". Takes the options of NewDense plus WithKernelSize,
// WithStrides and WithPadding.
func NewConv2D(ctx *Context, filters int64, options ...LayerOption) (*Layer, error) {
	if err := checkOpen("NewConv2D", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewConv2D", options, "name", "activation", "use_bias", "kernel_initializer",
		"bias_initializer", "kernel_size", "strides", "padding")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	opts := (*C.cairn_conv2d_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_conv2d_options{}))))
	defer C.free(unsafe.Pointer(opts))
	*opts = cConv2dOptionsInit()
	opts.filters = C.int64_t(filters)
	opts.kernel_h, opts.kernel_w = C.int64_t(cfg.kernel[0]), C.int64_t(cfg.kernel[1])
	if cfg.strides != [2]int64{} {
		opts.stride_h, opts.stride_w = C.int64_t(cfg.strides[0]), C.int64_t(cfg.strides[1])
	}
	opts.padding = cfg.cstr(cfg.padding)
	opts.activation = cfg.cstr(cfg.activation)
	opts.use_bias = cBool(cfg.useBias)
	opts.kernel_initializer = cfg.cstr(cfg.kernelInit)
	opts.bias_initializer = cfg.cstr(cfg.biasInit)
	opts.name = cfg.cstr(cfg.name)
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
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig(fn, options, "name", "pool_size", "strides", "padding")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	opts := (*C.cairn_pool2d_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_pool2d_options{}))))
	defer C.free(unsafe.Pointer(opts))
	*opts = cPool2dOptionsInit()
	opts.pool_h, opts.pool_w = C.int64_t(cfg.pool[0]), C.int64_t(cfg.pool[1])
	opts.stride_h, opts.stride_w = C.int64_t(cfg.strides[0]), C.int64_t(cfg.strides[1]) // 0: the pool size
	opts.padding = cfg.cstr(cfg.padding)
	opts.name = cfg.cstr(cfg.name)
	var out *C.cairn_object
	err = create(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewFlatten reshapes [batch, ...] to [batch, product of the rest]. Takes WithLayerName.
func NewFlatten(ctx *Context, options ...LayerOption) (*Layer, error) {
	if err := checkOpen("NewFlatten", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewFlatten", options, "name")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	var out *C.cairn_object
	err = cFlattenCreate(ctx.handle(), cfg.cstr(cfg.name), &out)
	return layerOrError(ctx, out, err)
}

// NewEmbedding maps int32/int64 indices in [0, inputDim) to vectors of outputDim; weight
// "embeddings". Takes WithLayerName.
func NewEmbedding(ctx *Context, inputDim, outputDim int64, options ...LayerOption) (*Layer, error) {
	if err := checkOpen("NewEmbedding", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewEmbedding", options, "name")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	var out *C.cairn_object
	err = cEmbeddingCreate(ctx.handle(), C.int64_t(inputDim), C.int64_t(outputDim), cfg.cstr(cfg.name), &out)
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
	if err := checkOpen(fn, "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig(fn, options, allowed...)
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	opts := (*C.cairn_norm_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_norm_options{}))))
	defer C.free(unsafe.Pointer(opts))
	*opts = cfg.norm
	opts.name = cfg.cstr(cfg.name)
	var out *C.cairn_object
	err = create(ctx.handle(), opts, &out)
	return layerOrError(ctx, out, err)
}

// NewDropout zeroes inputs with probability rate in [0, 1) when called with training, scaling
// the rest by 1 / (1 - rate); identity otherwise. Takes WithLayerName, WithDropoutSeed.
func NewDropout(ctx *Context, rate float64, options ...LayerOption) (*Layer, error) {
	if err := checkOpen("NewDropout", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewDropout", options, "name", "seed")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	var out *C.cairn_object
	err = cDropoutCreate(ctx.handle(), C.double(rate), C.int64_t(cfg.dropoutSeed), cfg.cstr(cfg.name), &out)
	return layerOrError(ctx, out, err)
}

// NewActivation is a layer applying one activation. Takes WithLayerName.
func NewActivation(ctx *Context, activation string, options ...LayerOption) (*Layer, error) {
	if err := checkOpen("NewActivation", "context", ctx); err != nil {
		return nil, err
	}
	cfg, err := newLayerConfig("NewActivation", options, "name")
	if err != nil {
		return nil, err
	}
	defer cfg.free()
	var out *C.cairn_object
	err = cActivationCreate(ctx.handle(), cfg.cstr(activation), cfg.cstr(cfg.name), &out)
	return layerOrError(ctx, out, err)
}
