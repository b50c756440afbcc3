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
use crate::options::{init, set_fields};
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

/// Options of [`Layer::dense`]: `DenseOptions::new(64).activation(Activation::Relu)`. Fields not
/// set keep cairn.h's defaults (`cairn_dense_options_init`).
#[derive(Clone, Debug)]
pub struct DenseOptions {
    units: i64,
    activation: Option<Activation>,
    use_bias: Option<bool>,
    kernel_initializer: Option<Initializer>,
    bias_initializer: Option<Initializer>,
    name: Option<String>,
}

impl DenseOptions {
    /// `units` outputs (> 0); every other field as cairn.h documents it (linear, with a bias,
    /// glorot_uniform kernel, zero bias).
    pub fn new(units: i64) -> Self {
        DenseOptions {
            units,
            activation: None,
            use_bias: None,
            kernel_initializer: None,
            bias_initializer: None,
            name: None,
        }
    }

    /// The activation; default linear.
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = Some(activation);
        self
    }

    /// Whether to add a bias; default true.
    pub fn use_bias(mut self, on: bool) -> Self {
        self.use_bias = Some(on);
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
/// Fields not set keep cairn.h's defaults (`cairn_conv2d_options_init`).
#[derive(Clone, Debug)]
pub struct Conv2DOptions {
    filters: i64,
    kernel: Option<(i64, i64)>,
    strides: Option<(i64, i64)>,
    padding: Option<Padding>,
    activation: Option<Activation>,
    use_bias: Option<bool>,
    kernel_initializer: Option<Initializer>,
    bias_initializer: Option<Initializer>,
    name: Option<String>,
}

impl Conv2DOptions {
    /// `filters` output channels (> 0); every other field as cairn.h documents it (a 3x3 kernel,
    /// stride 1, VALID, linear, with a bias).
    pub fn new(filters: i64) -> Self {
        Conv2DOptions {
            filters,
            kernel: None,
            strides: None,
            padding: None,
            activation: None,
            use_bias: None,
            kernel_initializer: None,
            bias_initializer: None,
            name: None,
        }
    }

    /// Kernel height and width; default 3 x 3.
    pub fn kernel_size(mut self, h: i64, w: i64) -> Self {
        self.kernel = Some((h, w));
        self
    }

    /// Default 1 x 1.
    pub fn strides(mut self, h: i64, w: i64) -> Self {
        self.strides = Some((h, w));
        self
    }

    /// Default VALID.
    pub fn padding(mut self, padding: Padding) -> Self {
        self.padding = Some(padding);
        self
    }

    /// Default linear.
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = Some(activation);
        self
    }

    /// Default true.
    pub fn use_bias(mut self, on: bool) -> Self {
        self.use_bias = Some(on);
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
/// Fields not set keep cairn.h's defaults (`cairn_pool2d_options_init`).
#[derive(Clone, Debug, Default)]
pub struct Pool2DOptions {
    pool: Option<(i64, i64)>,
    strides: Option<(i64, i64)>,
    padding: Option<Padding>,
    name: Option<String>,
}

impl Pool2DOptions {
    /// cairn.h's defaults: 2 x 2 windows, strides equal to the window, VALID.
    pub fn new() -> Self {
        Self::default()
    }

    /// Window height and width; default 2 x 2.
    pub fn pool_size(mut self, h: i64, w: i64) -> Self {
        self.pool = Some((h, w));
        self
    }

    /// Default: the window size.
    pub fn strides(mut self, h: i64, w: i64) -> Self {
        self.strides = Some((h, w));
        self
    }

    /// Default VALID.
    pub fn padding(mut self, padding: Padding) -> Self {
        self.padding = Some(padding);
        self
    }

    /// Default "max_pooling2d" / "average_pooling2d", numbered.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Options of [`Layer::layer_norm`] and [`Layer::batch_norm`]: `NormOptions::new().epsilon(1e-5)`.
/// Fields not set keep cairn.h's defaults (`cairn_norm_options_init`).
#[derive(Clone, Debug, Default)]
pub struct NormOptions {
    axis: Option<i64>,
    epsilon: Option<f64>,
    momentum: Option<f64>,
    center: Option<bool>,
    scale: Option<bool>,
    name: Option<String>,
}

impl NormOptions {
    /// cairn.h's defaults: the last axis, epsilon 1e-3, momentum 0.99, learned beta and gamma.
    pub fn new() -> Self {
        Self::default()
    }

    /// The normalized axis; default -1.
    pub fn axis(mut self, axis: i64) -> Self {
        self.axis = Some(axis);
        self
    }

    /// Default 1e-3.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }

    /// BatchNorm's moving statistics; default 0.99.
    pub fn momentum(mut self, momentum: f64) -> Self {
        self.momentum = Some(momentum);
        self
    }

    /// Learn an offset "beta"; default true.
    pub fn center(mut self, on: bool) -> Self {
        self.center = Some(on);
        self
    }

    /// Learn a scale "gamma"; default true.
    pub fn scale(mut self, on: bool) -> Self {
        self.scale = Some(on);
        self
    }

    /// Default "layer_normalization" / "batch_normalization", numbered.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    fn raw(&self, name: &Name) -> Result<sys::cairn_norm_options> {
        let mut raw = init(sys::cairn_norm_options_init)?;
        set_fields!(raw, self, { axis, epsilon, momentum, center, scale });
        name.set(&mut raw.name);
        Ok(raw)
    }
}

/// Writes the C names of the activation, padding and initializers the caller chose.
fn set_str<T: Copy>(field: &mut *const std::ffi::c_char, value: Option<T>, as_str: fn(T) -> &'static CStr) {
    if let Some(v) = value {
        *field = as_str(v).as_ptr();
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
        let f = "Layer::dense";
        let name = Name::new(options.name.as_deref(), f)?;
        let mut raw = init(sys::cairn_dense_options_init)?;
        raw.units = options.units;
        set_str(&mut raw.activation, options.activation, Activation::as_str);
        set_fields!(raw, options, { use_bias });
        set_str(&mut raw.kernel_initializer, options.kernel_initializer, Initializer::as_str);
        set_str(&mut raw.bias_initializer, options.bias_initializer, Initializer::as_str);
        name.set(&mut raw.name);
        // SAFETY: the options and their strings outlive the call.
        make(f, |out| unsafe { sys::cairn_dense_create(ctx.as_raw(), &raw, out) })
    }

    /// Conv2D over NHWC input; weights "kernel" [kh, kw, in, filters] and "bias".
    pub fn conv2d(ctx: &Context, options: Conv2DOptions) -> Result<Layer> {
        let f = "Layer::conv2d";
        let name = Name::new(options.name.as_deref(), f)?;
        let mut raw = init(sys::cairn_conv2d_options_init)?;
        raw.filters = options.filters;
        if let Some((h, w)) = options.kernel {
            (raw.kernel_h, raw.kernel_w) = (h, w);
        }
        if let Some((h, w)) = options.strides {
            (raw.stride_h, raw.stride_w) = (h, w);
        }
        set_str(&mut raw.padding, options.padding, Padding::as_str);
        set_str(&mut raw.activation, options.activation, Activation::as_str);
        set_fields!(raw, options, { use_bias });
        set_str(&mut raw.kernel_initializer, options.kernel_initializer, Initializer::as_str);
        set_str(&mut raw.bias_initializer, options.bias_initializer, Initializer::as_str);
        name.set(&mut raw.name);
        make(f, |out| unsafe { sys::cairn_conv2d_create(ctx.as_raw(), &raw, out) })
    }

    /// MaxPool2D over NHWC input.
    pub fn max_pool2d(ctx: &Context, options: Pool2DOptions) -> Result<Layer> {
        Layer::pool2d(ctx, options, "Layer::max_pool2d", sys::cairn_max_pool2d_create)
    }

    /// AvgPool2D over NHWC input.
    pub fn avg_pool2d(ctx: &Context, options: Pool2DOptions) -> Result<Layer> {
        Layer::pool2d(ctx, options, "Layer::avg_pool2d", sys::cairn_avg_pool2d_create)
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
        let mut raw = init(sys::cairn_pool2d_options_init)?;
        if let Some((h, w)) = options.pool {
            (raw.pool_h, raw.pool_w) = (h, w);
        }
        if let Some((h, w)) = options.strides {
            (raw.stride_h, raw.stride_w) = (h, w);
        }
        set_str(&mut raw.padding, options.padding, Padding::as_str);
        name.set(&mut raw.name);
        make(f, |out| unsafe { create(ctx.as_raw(), &raw, out) })
    }

    /// Flatten: [batch, ...] -> [batch, product of the rest]. `None` names it "flatten",
    /// "flatten_1", ...
    pub fn flatten(ctx: &Context, name: Option<&str>) -> Result<Layer> {
        let f = "Layer::flatten";
        let name = Name::new(name, f)?;
        let mut raw = init(sys::cairn_flatten_options_init)?;
        name.set(&mut raw.name);
        make(f, |out| unsafe { sys::cairn_flatten_create(ctx.as_raw(), &raw, out) })
    }

    /// Embedding: int32/int64 indices in [0, input_dim) -> vectors of output_dim (both > 0); weight
    /// "embeddings" (random_uniform).
    pub fn embedding(ctx: &Context, input_dim: i64, output_dim: i64, name: Option<&str>) -> Result<Layer> {
        let f = "Layer::embedding";
        let name = Name::new(name, f)?;
        let mut raw = init(sys::cairn_embedding_options_init)?;
        (raw.input_dim, raw.output_dim) = (input_dim, output_dim);
        name.set(&mut raw.name);
        make(f, |out| unsafe { sys::cairn_embedding_create(ctx.as_raw(), &raw, out) })
    }

    /// LayerNormalization over `options.axis`.
    pub fn layer_norm(ctx: &Context, options: NormOptions) -> Result<Layer> {
        let f = "Layer::layer_norm";
        let name = Name::new(options.name.as_deref(), f)?;
        let raw = options.raw(&name)?;
        make(f, |out| unsafe { sys::cairn_layer_norm_create(ctx.as_raw(), &raw, out) })
    }

    /// BatchNormalization: non-trainable "moving_mean" and "moving_variance", updated by calls
    /// with `training` true.
    pub fn batch_norm(ctx: &Context, options: NormOptions) -> Result<Layer> {
        let f = "Layer::batch_norm";
        let name = Name::new(options.name.as_deref(), f)?;
        let raw = options.raw(&name)?;
        make(f, |out| unsafe { sys::cairn_batch_norm_create(ctx.as_raw(), &raw, out) })
    }

    /// Dropout: with `training` true, zeroes each value with probability `rate` in [0, 1) and
    /// scales the rest by 1 / (1 - rate); the identity otherwise. `seed` `None` draws from the
    /// context's random stream; a given seed must be >= 0.
    pub fn dropout(ctx: &Context, rate: f64, seed: Option<i64>, name: Option<&str>) -> Result<Layer> {
        let f = "Layer::dropout";
        if let Some(s) = seed.filter(|s| *s < 0) {
            return Err(Error::new(
                Code::InvalidArgument,
                format!("{f}: seed {s} is negative; pass None to draw from the context's stream"),
            ));
        }
        let name = Name::new(name, f)?;
        let mut raw = init(sys::cairn_dropout_options_init)?;
        raw.rate = rate;
        if let Some(s) = seed {
            raw.seed = s;
        }
        name.set(&mut raw.name);
        make(f, |out| unsafe { sys::cairn_dropout_create(ctx.as_raw(), &raw, out) })
    }

    /// A layer applying one activation.
    pub fn activation(ctx: &Context, activation: Activation, name: Option<&str>) -> Result<Layer> {
        let f = "Layer::activation";
        let name = Name::new(name, f)?;
        let mut raw = init(sys::cairn_activation_options_init)?;
        raw.activation = activation.as_str().as_ptr();
        name.set(&mut raw.name);
        make(f, |out| unsafe { sys::cairn_activation_create(ctx.as_raw(), &raw, out) })
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
        let f = "Sequential::new";
        let name = Name::new(name, f)?;
        let mut raw = init(sys::cairn_sequential_options_init)?;
        name.set(&mut raw.name);
        make(f, |out| unsafe { sys::cairn_sequential_create(ctx.as_raw(), &raw, out) }).map(Sequential)
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
