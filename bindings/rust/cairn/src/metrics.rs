//! Losses (functions of tensors, differentiable by a tape) and streaming metrics (tracked objects).

use std::fmt;
use std::ops::Deref;
use std::ptr;

use cairn_sys as sys;

use crate::error::{check, Name};
use crate::{Context, LossKind, MetricKind, Object, Result, Tensor};

/// The loss functions (tf.keras.losses): each is the mean over every element, a scalar of
/// `y_pred`'s dtype, built from registered ops so that a [`crate::GradientTape`] differentiates it.
pub mod losses {
    use super::*;

    /// The loss of `kind`. `from_logits` applies to the cross-entropies (`y_pred` holds logits
    /// rather than probabilities); the others ignore it.
    pub fn loss(ctx: &Context, kind: LossKind, y_true: &Tensor, y_pred: &Tensor, from_logits: bool) -> Result<Tensor> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        // SAFETY: live handles, borrowed for the call; `out` receives a new tensor.
        unsafe {
            check(sys::cairn_loss(
                ctx.as_raw(),
                kind.to_raw(),
                y_true.as_raw(),
                y_pred.as_raw(),
                i32::from(from_logits),
                &mut out,
            ))?
        };
        Tensor::from_raw_result(out, "cairn_loss")
    }

    /// mean((y_true - y_pred)^2).
    pub fn mean_squared_error(ctx: &Context, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        loss(ctx, LossKind::MeanSquaredError, y_true, y_pred, false)
    }

    /// mean(|y_true - y_pred|).
    pub fn mean_absolute_error(ctx: &Context, y_true: &Tensor, y_pred: &Tensor) -> Result<Tensor> {
        loss(ctx, LossKind::MeanAbsoluteError, y_true, y_pred, false)
    }

    /// `y_true` in {0, 1}; `y_pred` probabilities, or logits when `from_logits`.
    pub fn binary_crossentropy(ctx: &Context, y_true: &Tensor, y_pred: &Tensor, from_logits: bool) -> Result<Tensor> {
        loss(ctx, LossKind::BinaryCrossentropy, y_true, y_pred, from_logits)
    }

    /// `y_true` integer class ids; `y_pred` [..., classes] probabilities, or logits when
    /// `from_logits`.
    pub fn sparse_categorical_crossentropy(
        ctx: &Context,
        y_true: &Tensor,
        y_pred: &Tensor,
        from_logits: bool,
    ) -> Result<Tensor> {
        loss(ctx, LossKind::SparseCategoricalCrossentropy, y_true, y_pred, from_logits)
    }
}

/// Runs cairn_metric_create for `function` (named in errors).
fn create(ctx: &Context, kind: MetricKind, name: Option<&str>, function: &str) -> Result<Object> {
    crate::check_abi()?;
    let name = Name::new(name, function)?;
    let mut out = ptr::null_mut();
    unsafe { check(sys::cairn_metric_create(ctx.as_raw(), kind.to_raw(), name.as_ptr(), &mut out))? };
    Object::from_result(out, "cairn_metric_create")
}

fn result(metric: &Object) -> Result<f64> {
    let mut out = 0.0;
    unsafe { check(sys::cairn_metric_result(metric.as_raw(), &mut out))? };
    Ok(out)
}

fn reset(metric: &Object) -> Result<()> {
    unsafe { check(sys::cairn_metric_reset(metric.as_raw())) }
}

macro_rules! metric_handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $name(Object);

        impl $name {
            /// The current value (0 when nothing was accumulated).
            pub fn result(&self) -> Result<f64> {
                result(&self.0)
            }

            /// Sets total and count to zero.
            pub fn reset(&self) -> Result<()> {
                reset(&self.0)
            }

            /// The handle as an [`Object`] (also what `Deref` gives).
            pub fn as_object(&self) -> &Object {
                &self.0
            }
        }

        impl Deref for $name {
            type Target = Object;
            fn deref(&self) -> &Object {
                &self.0
            }
        }

        impl AsRef<Object> for $name {
            fn as_ref(&self) -> &Object {
                &self.0
            }
        }

        impl From<$name> for Object {
            fn from(metric: $name) -> Object {
                metric.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.result() {
                    Ok(v) => write!(f, "{}({v})", stringify!($name)),
                    Err(_) => f.write_str(stringify!($name)),
                }
            }
        }
    };
}

metric_handle! {
    /// The mean of every value seen (tf.keras.metrics.Mean): a tracked object (kind TRACKABLE)
    /// with float64 variables "total" and "count", so it can be checkpointed.
    Mean
}

metric_handle! {
    /// The fraction of correct predictions (tf.keras.metrics.Accuracy / SparseCategoricalAccuracy):
    /// integer labels against the argmax of scores, or equality of same-shaped tensors. A tracked
    /// object with float64 "total" and "count".
    Accuracy
}

impl Mean {
    /// A new mean; `None` names it "mean".
    pub fn new(ctx: &Context, name: Option<&str>) -> Result<Mean> {
        create(ctx, MetricKind::Mean, name, "Mean::new").map(Mean)
    }

    /// Accumulates every element of `values`.
    pub fn update(&self, values: &Tensor) -> Result<()> {
        unsafe { check(sys::cairn_metric_update(self.0.as_raw(), values.as_raw(), ptr::null())) }
    }
}

impl Accuracy {
    /// A new accuracy; `None` names it "accuracy".
    pub fn new(ctx: &Context, name: Option<&str>) -> Result<Accuracy> {
        create(ctx, MetricKind::Accuracy, name, "Accuracy::new").map(Accuracy)
    }

    /// Accumulates predictions: `y_true` labels and `y_pred` scores ([..., classes]), or two
    /// tensors of one shape compared for equality.
    pub fn update(&self, y_true: &Tensor, y_pred: &Tensor) -> Result<()> {
        unsafe { check(sys::cairn_metric_update(self.0.as_raw(), y_true.as_raw(), y_pred.as_raw())) }
    }
}
