//! Layers (tf.keras.layers) and the Sequential model.
//!
//! A [`Layer`] is a tracked object (kind LAYER). It creates its variables on its first call, from
//! the input's shape; a checkpoint restored before that is applied as they appear. Constructors
//! take an options builder or a name: `None` gives a unique default ("dense", "dense_1", ...).

use std::ffi::CStr;
use std::fmt;
use std::ops::Deref;
use std::ptr;

use cairn_sys as sys;

use crate::error::{check, Name};
use crate::object::{array_entries, object_type};
use crate::{Code, Context, Error, Object, Result, Tensor, Variable};

object_type! {
    /// A layer (kind LAYER): Dense, Conv2D, pooling, Flatten, Embedding, the normalizations,
    /// Dropout, Activation, or a [`Sequential`] model.
    Layer => Layer
}

/// A layer's activation function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Activation {
    /// The identity.
    #[default]
    Linear,
    /// max(x, 0).
    Relu,
    /// min(max(x, 0), 6).
    Relu6,
    /// 1 / (1 + e^-x).
    Sigmoid,
    /// The hyperbolic tangent.
    Tanh,
    /// Softmax over the last axis.
    Softmax,
    /// ln(1 + e^x).
    Softplus,
    /// x for x > 0, e^x - 1 otherwise.
    Elu,
    /// The scaled ELU (self-normalizing networks).
    Selu,
    /// The exact (erf) form.
    Gelu,
}

impl Activation {
    /// The name the C API takes, e.g. "relu".
    pub const fn as_str(self) -> &'static CStr {
        match self {
            Activation::Linear => c"linear",
            Activation::Relu => c"relu",
            Activation::Relu6 => c"relu6",
            Activation::Sigmoid => c"sigmoid",
            Activation::Tanh => c"tanh",
            Activation::Softmax => c"softmax",
            Activation::Softplus => c"softplus",
            Activation::Elu => c"elu",
            Activation::Selu => c"selu",
            Activation::Gelu => c"gelu",
        }
    }
}

/// How a layer's weights start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Initializer {
    /// Glorot (Xavier) uniform: U(-l, l), l = sqrt(6 / (fan_in + fan_out)).
    GlorotUniform,
    /// Glorot (Xavier) truncated normal, stddev sqrt(2 / (fan_in + fan_out)).
    GlorotNormal,
    /// He truncated normal, stddev sqrt(2 / fan_in).
    HeNormal,
    /// He uniform: U(-l, l), l = sqrt(6 / fan_in).
    HeUniform,
    /// All zeros.
    Zeros,
    /// All ones.
    Ones,
    /// Normal, mean 0, stddev 0.05 (Keras's default).
    RandomNormal,
    /// Uniform in [-0.05, 0.05] (Keras's default).
    RandomUniform,
}

impl Initializer {
    /// The name the C API takes, e.g. "glorot_uniform".
    pub const fn as_str(self) -> &'static CStr {
        match self {
            Initializer::GlorotUniform => c"glorot_uniform",
            Initializer::GlorotNormal => c"glorot_normal",
            Initializer::HeNormal => c"he_normal",
            Initializer::HeUniform => c"he_uniform",
            Initializer::Zeros => c"zeros",
            Initializer::Ones => c"ones",
            Initializer::RandomNormal => c"random_normal",
            Initializer::RandomUniform => c"random_uniform",
        }
    }
}

/// Convolution and pooling padding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Padding {
    /// No padding: windows stay inside the input (the default).
    #[default]
    Valid,
    /// Zero padding so that the output has ceil(input / stride) positions.
    Same,
}

impl Padding {
    /// The name the C API takes.
    pub const fn as_str(self) -> &'static CStr {
        match self {
            Padding::Valid => c"VALID",
            Padding::Same => c"SAME",
        }
    }
}

fn initializer_ptr(init: Option<Initializer>) -> *const std::ffi::c_char {
    init.map_or(ptr::null(), |i| i.as_str().as_ptr())
}

/// Options of [`Layer::dense`]: `DenseOptions::new(64).activation(Activation::Relu)`.
#[derive(Clone, Debug)]
pub struct DenseOptions {
    units: i64,
    activation: Activation,
    use_bias: bool,
    kernel_initializer: Option<Initializer>,
    bias_initializer: Option<Initializer>,
    name: Option<String>,
}

impl DenseOptions {
    /// `units` outputs (> 0); linear, with a bias, glorot_uniform kernel, zero bias.
    pub fn new(units: i64) -> Self {
        DenseOptions {
            units,
            activation: Activation::Linear,
            use_bias: true,
            kernel_initializer: None,
            bias_initializer: None,
            name: None,
        }
    }

    /// Default linear.
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = activation;
        self
    }

    /// Default true.
    pub fn use_bias(mut self, on: bool) -> Self {
        self.use_bias = on;
        self
    }

    /// Default glorot_uniform.
    pub fn kernel_initializer(mut self, init: Initializer) -> Self {
        self.kernel_initializer = Some(init);
        self
    }

    /// Default zeros.
    pub fn bias_initializer(mut self, init: Initializer) -> Self {
        self.bias_initializer = Some(init);
        self
    }

    /// Default "dense", "dense_1", ...
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Options of [`Layer::conv2d`]: `Conv2DOptions::new(8).kernel_size(3, 3).padding(Padding::Same)`.
#[derive(Clone, Debug)]
pub struct Conv2DOptions {
    filters: i64,
    kernel: (i64, i64),
    strides: (i64, i64),
    padding: Padding,
    activation: Activation,
    use_bias: bool,
    kernel_initializer: Option<Initializer>,
    bias_initializer: Option<Initializer>,
    name: Option<String>,
}

impl Conv2DOptions {
    /// `filters` output channels (> 0); a 3x3 kernel, stride 1, VALID, linear, with a bias.
    pub fn new(filters: i64) -> Self {
        Conv2DOptions {
            filters,
            kernel: (3, 3),
            strides: (1, 1),
            padding: Padding::Valid,
            activation: Activation::Linear,
            use_bias: true,
            kernel_initializer: None,
            bias_initializer: None,
            name: None,
        }
    }

    /// Kernel height and width; default 3 x 3.
    pub fn kernel_size(mut self, h: i64, w: i64) -> Self {
        self.kernel = (h, w);
        self
    }

    /// Default 1 x 1.
    pub fn strides(mut self, h: i64, w: i64) -> Self {
        self.strides = (h, w);
        self
    }

    /// Default VALID.
    pub fn padding(mut self, padding: Padding) -> Self {
        self.padding = padding;
        self
    }

    /// Default linear.
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = activation;
        self
    }

    /// Default true.
    pub fn use_bias(mut self, on: bool) -> Self {
        self.use_bias = on;
        self
    }

    /// Default glorot_uniform.
    pub fn kernel_initializer(mut self, init: Initializer) -> Self {
        self.kernel_initializer = Some(init);
        self
    }

    /// Default zeros.
    pub fn bias_initializer(mut self, init: Initializer) -> Self {
        self.bias_initializer = Some(init);
        self
    }

    /// Default "conv2d", "conv2d_1", ...
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Options of [`Layer::max_pool2d`] and [`Layer::avg_pool2d`]: `Pool2DOptions::new().pool_size(3, 3)`.
#[derive(Clone, Debug)]
pub struct Pool2DOptions {
    pool: (i64, i64),
    strides: Option<(i64, i64)>,
    padding: Padding,
    name: Option<String>,
}

impl Default for Pool2DOptions {
    fn default() -> Self {
        Pool2DOptions { pool: (2, 2), strides: None, padding: Padding::Valid, name: None }
    }
}

impl Pool2DOptions {
    /// 2 x 2 windows, strides equal to the window, VALID.
    pub fn new() -> Self {
        Self::default()
    }

    /// Window height and width; default 2 x 2.
    pub fn pool_size(mut self, h: i64, w: i64) -> Self {
        self.pool = (h, w);
        self
    }

    /// Default: the window size.
    pub fn strides(mut self, h: i64, w: i64) -> Self {
        self.strides = Some((h, w));
        self
    }

    /// Default VALID.
    pub fn padding(mut self, padding: Padding) -> Self {
        self.padding = padding;
        self
    }

    /// Default "max_pooling2d" / "average_pooling2d", numbered.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Options of [`Layer::layer_norm`] and [`Layer::batch_norm`]: `NormOptions::new().epsilon(1e-5)`.
#[derive(Clone, Debug)]
pub struct NormOptions {
    raw: sys::cairn_norm_options,
    name: Option<String>,
}

impl Default for NormOptions {
    fn default() -> Self {
        NormOptions { raw: sys::CAIRN_NORM_OPTIONS_INIT, name: None }
    }
}

impl NormOptions {
    /// The last axis, epsilon 1e-3, momentum 0.99, learned beta and gamma.
    pub fn new() -> Self {
        Self::default()
    }

    /// The normalized axis; default -1.
    pub fn axis(mut self, axis: i64) -> Self {
        self.raw.axis = axis;
        self
    }

    /// Default 1e-3.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.raw.epsilon = epsilon;
        self
    }

    /// BatchNorm's moving statistics; default 0.99.
    pub fn momentum(mut self, momentum: f64) -> Self {
        self.raw.momentum = momentum;
        self
    }

    /// Learn an offset "beta"; default true.
    pub fn center(mut self, on: bool) -> Self {
        self.raw.center = i32::from(on);
        self
    }

    /// Learn a scale "gamma"; default true.
    pub fn scale(mut self, on: bool) -> Self {
        self.raw.scale = i32::from(on);
        self
    }

    /// Default "layer_normalization" / "batch_normalization", numbered.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Runs a layer constructor and wraps what it made.
fn make(function: &str, create: impl FnOnce(*mut *mut sys::cairn_object) -> *mut sys::cairn_status) -> Result<Layer> {
    crate::check_abi()?;
    let mut out = ptr::null_mut();
    // SAFETY: `create` passes `out` to a constructor, which returns a status for us to free.
    unsafe { check(create(&mut out))? };
    Object::from_result(out, function).map(Layer)
}

impl Layer {
    /// Dense: `activation(x @ kernel + bias)` over the last axis; weights "kernel", "bias".
    pub fn dense(ctx: &Context, options: DenseOptions) -> Result<Layer> {
        let f = "cairn_dense_create";
        let name = Name::new(options.name.as_deref(), f)?;
        let mut raw = sys::CAIRN_DENSE_OPTIONS_INIT;
        raw.units = options.units;
        raw.activation = options.activation.as_str().as_ptr();
        raw.use_bias = i32::from(options.use_bias);
        raw.kernel_initializer = initializer_ptr(options.kernel_initializer);
        raw.bias_initializer = initializer_ptr(options.bias_initializer);
        raw.name = name.as_ptr();
        // SAFETY: the options and their strings outlive the call.
        make(f, |out| unsafe { sys::cairn_dense_create(ctx.as_raw(), &raw, out) })
    }

    /// Conv2D over NHWC input; weights "kernel" [kh, kw, in, filters] and "bias".
    pub fn conv2d(ctx: &Context, options: Conv2DOptions) -> Result<Layer> {
        let f = "cairn_conv2d_create";
        let name = Name::new(options.name.as_deref(), f)?;
        let mut raw = sys::CAIRN_CONV2D_OPTIONS_INIT;
        raw.filters = options.filters;
        (raw.kernel_h, raw.kernel_w) = options.kernel;
        (raw.stride_h, raw.stride_w) = options.strides;
        raw.padding = options.padding.as_str().as_ptr();
        raw.activation = options.activation.as_str().as_ptr();
        raw.use_bias = i32::from(options.use_bias);
        raw.kernel_initializer = initializer_ptr(options.kernel_initializer);
        raw.bias_initializer = initializer_ptr(options.bias_initializer);
        raw.name = name.as_ptr();
        make(f, |out| unsafe { sys::cairn_conv2d_create(ctx.as_raw(), &raw, out) })
    }

    /// MaxPool2D over NHWC input.
    pub fn max_pool2d(ctx: &Context, options: Pool2DOptions) -> Result<Layer> {
        Layer::pool2d(ctx, options, "cairn_max_pool2d_create", sys::cairn_max_pool2d_create)
    }

    /// AvgPool2D over NHWC input.
    pub fn avg_pool2d(ctx: &Context, options: Pool2DOptions) -> Result<Layer> {
        Layer::pool2d(ctx, options, "cairn_avg_pool2d_create", sys::cairn_avg_pool2d_create)
    }

    fn pool2d(
        ctx: &Context,
        options: Pool2DOptions,
        f: &str,
        create: unsafe fn(
            *mut sys::cairn_context,
            *const sys::cairn_pool2d_options,
            *mut *mut sys::cairn_object,
        ) -> *mut sys::cairn_status,
    ) -> Result<Layer> {
        let name = Name::new(options.name.as_deref(), f)?;
        let mut raw = sys::CAIRN_POOL2D_OPTIONS_INIT;
        (raw.pool_h, raw.pool_w) = options.pool;
        (raw.stride_h, raw.stride_w) = options.strides.unwrap_or((0, 0)); // 0: the window size
        raw.padding = options.padding.as_str().as_ptr();
        raw.name = name.as_ptr();
        make(f, |out| unsafe { create(ctx.as_raw(), &raw, out) })
    }

    /// Flatten: [batch, ...] -> [batch, product of the rest].
    pub fn flatten(ctx: &Context, name: Option<&str>) -> Result<Layer> {
        let f = "cairn_flatten_create";
        let name = Name::new(name, f)?;
        make(f, |out| unsafe { sys::cairn_flatten_create(ctx.as_raw(), name.as_ptr(), out) })
    }

    /// Embedding: int32/int64 indices in [0, input_dim) -> vectors of output_dim; weight
    /// "embeddings" (random_uniform).
    pub fn embedding(ctx: &Context, input_dim: i64, output_dim: i64, name: Option<&str>) -> Result<Layer> {
        let f = "cairn_embedding_create";
        let name = Name::new(name, f)?;
        make(f, |out| unsafe { sys::cairn_embedding_create(ctx.as_raw(), input_dim, output_dim, name.as_ptr(), out) })
    }

    /// LayerNormalization over `options.axis`.
    pub fn layer_norm(ctx: &Context, options: NormOptions) -> Result<Layer> {
        let f = "cairn_layer_norm_create";
        let name = Name::new(options.name.as_deref(), f)?;
        let raw = sys::cairn_norm_options { name: name.as_ptr(), ..options.raw };
        make(f, |out| unsafe { sys::cairn_layer_norm_create(ctx.as_raw(), &raw, out) })
    }

    /// BatchNormalization: non-trainable "moving_mean" and "moving_variance", updated by calls
    /// with `training` true.
    pub fn batch_norm(ctx: &Context, options: NormOptions) -> Result<Layer> {
        let f = "cairn_batch_norm_create";
        let name = Name::new(options.name.as_deref(), f)?;
        let raw = sys::cairn_norm_options { name: name.as_ptr(), ..options.raw };
        make(f, |out| unsafe { sys::cairn_batch_norm_create(ctx.as_raw(), &raw, out) })
    }

    /// Dropout: with `training` true, zeroes each value with probability `rate` in [0, 1) and
    /// scales the rest by 1 / (1 - rate); the identity otherwise. `seed` `None` draws from the
    /// context's random stream; a given seed must be >= 0.
    pub fn dropout(ctx: &Context, rate: f64, seed: Option<i64>, name: Option<&str>) -> Result<Layer> {
        let f = "cairn_dropout_create";
        let seed = match seed {
            Some(s) if s < 0 => {
                return Err(Error::new(
                    Code::InvalidArgument,
                    format!("{f}: seed {s} is negative; pass None to draw from the context's stream"),
                ))
            }
            Some(s) => s,
            None => -1,
        };
        let name = Name::new(name, f)?;
        make(f, |out| unsafe { sys::cairn_dropout_create(ctx.as_raw(), rate, seed, name.as_ptr(), out) })
    }

    /// A layer applying one activation.
    pub fn activation(ctx: &Context, activation: Activation, name: Option<&str>) -> Result<Layer> {
        let f = "cairn_activation_create";
        let name = Name::new(name, f)?;
        make(f, |out| unsafe {
            sys::cairn_activation_create(ctx.as_raw(), activation.as_str().as_ptr(), name.as_ptr(), out)
        })
    }

    /// Calls the layer (building it on the first call). `training` switches Dropout and
    /// BatchNorm to their training behaviour. INVALID_ARGUMENT naming the layer for an input of
    /// the wrong rank, dtype or size.
    pub fn call(&self, x: &Tensor, training: bool) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        // SAFETY: live handles; `out` receives a new tensor.
        unsafe { check(sys::cairn_layer_call(self.as_raw(), x.as_raw(), i32::from(training), &mut out))? };
        Tensor::from_raw_result(out, "cairn_layer_call")
    }

    /// The layer's variables (nested layers' included) in creation order. Empty before the
    /// first call.
    pub fn weights(&self) -> Result<Vec<Variable>> {
        self.weights_of(false)
    }

    /// The trainable variables, in creation order: what a tape differentiates and an optimizer
    /// updates.
    pub fn trainable_weights(&self) -> Result<Vec<Variable>> {
        self.weights_of(true)
    }

    fn weights_of(&self, trainable_only: bool) -> Result<Vec<Variable>> {
        let entries = array_entries("cairn_layer_weights", |out| unsafe {
            sys::cairn_layer_weights(self.as_raw(), i32::from(trainable_only), out)
        })?;
        entries.into_iter().map(|(_, o)| Variable::try_from(o)).collect()
    }

    /// Keras' summary(): the layers, output shapes, parameter counts and totals, as a table.
    pub fn summary(&self) -> Result<String> {
        let mut out = ptr::null_mut();
        // SAFETY: `out` receives a string we free with cairn_free.
        unsafe {
            check(sys::cairn_layer_summary(self.as_raw(), &mut out))?;
            let text = CStr::from_ptr(out).to_string_lossy().into_owned();
            sys::cairn_free(out.cast());
            Ok(text)
        }
    }

    /// The number of scalars in the layer's variables (0 before the first call).
    pub fn count_params(&self) -> Result<i64> {
        let mut out = 0;
        unsafe { check(sys::cairn_layer_count_params(self.as_raw(), &mut out))? };
        Ok(out)
    }
}

impl fmt::Debug for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layer({} params)", self.count_params().unwrap_or(0))
    }
}

/// A Sequential model: a [`Layer`] (it derefs to one) whose layers are its edges "layer-0",
/// "layer-1", ... Calling it calls them in order.
#[derive(Clone)]
pub struct Sequential(Layer);

impl Sequential {
    /// An empty model; `None` names it "sequential", "sequential_1", ...
    pub fn new(ctx: &Context, name: Option<&str>) -> Result<Sequential> {
        let f = "cairn_sequential_create";
        let name = Name::new(name, f)?;
        make(f, |out| unsafe { sys::cairn_sequential_create(ctx.as_raw(), name.as_ptr(), out) }).map(Sequential)
    }

    /// Appends `layer` (the model takes its own reference).
    pub fn add(&self, layer: &Layer) -> Result<()> {
        unsafe { check(sys::cairn_sequential_add(self.as_raw(), layer.as_raw())) }
    }

    /// The model as a [`Layer`] (also what `Deref` gives).
    pub fn as_layer(&self) -> &Layer {
        &self.0
    }
}

impl Deref for Sequential {
    type Target = Layer;
    fn deref(&self) -> &Layer {
        &self.0
    }
}

impl AsRef<Object> for Sequential {
    fn as_ref(&self) -> &Object {
        self.0.as_object()
    }
}

impl From<Sequential> for Layer {
    fn from(model: Sequential) -> Layer {
        model.0
    }
}

impl From<Sequential> for Object {
    fn from(model: Sequential) -> Object {
        model.0.into()
    }
}

impl fmt::Debug for Sequential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sequential({} layers, {} params)", self.child_count(), self.count_params().unwrap_or(0))
    }
}
