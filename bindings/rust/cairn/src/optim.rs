//! Optimizers (tf.keras.optimizers: SGD, Adam, AdamW, RMSprop) and learning-rate schedules.
//!
//! An [`Optimizer`] is a tracked object (kind OPTIMIZER): put it in a checkpoint like any other
//! object and its step counter, hyperparameters and slot variables are saved with it. A slot is
//! saved only when its variable is saved too, and a restored slot appears when the next step
//! creates it.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::ptr;

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::object::object_type;
use crate::options::{init, set_fields};
use crate::{Code, Context, Error, Object, OptimizerKind, Result, Tensor, Variable};

object_type! {
    /// An optimizer (kind OPTIMIZER): applies gradients to variables, keeping a step counter and
    /// per-variable slots ("m", "v", "momentum", "rms", "mg").
    Optimizer => Optimizer
}

/// Options of [`Optimizer::new`]; start from the kind:
/// `OptimizerOptions::adam().learning_rate(0.005)`. Options another kind ignores are ignored;
/// options not set keep cairn.h's defaults (`cairn_optimizer_options_init`).
#[derive(Clone, Copy, Debug)]
pub struct OptimizerOptions<'a> {
    kind: OptimizerKind,
    learning_rate: Option<f64>,
    schedule: Option<&'a Schedule>,
    momentum: Option<f64>,
    nesterov: Option<bool>,
    beta_1: Option<f64>,
    beta_2: Option<f64>,
    epsilon: Option<f64>,
    weight_decay: Option<f64>,
    rho: Option<f64>,
    centered: Option<bool>,
}

impl<'a> OptimizerOptions<'a> {
    /// An optimizer of `kind` with cairn.h's defaults: learning rate 0.01, momentum 0, beta_1 0.9,
    /// beta_2 0.999, epsilon 1e-7, weight_decay 0.004, rho 0.9, not nesterov, not centered.
    pub fn new(kind: OptimizerKind) -> Self {
        OptimizerOptions {
            kind,
            learning_rate: None,
            schedule: None,
            momentum: None,
            nesterov: None,
            beta_1: None,
            beta_2: None,
            epsilon: None,
            weight_decay: None,
            rho: None,
            centered: None,
        }
    }

    /// SGD (momentum, nesterov).
    pub fn sgd() -> Self {
        Self::new(OptimizerKind::Sgd)
    }

    /// Adam (beta_1, beta_2, epsilon).
    pub fn adam() -> Self {
        Self::new(OptimizerKind::Adam)
    }

    /// AdamW: Adam plus decoupled weight_decay.
    pub fn adamw() -> Self {
        Self::new(OptimizerKind::Adamw)
    }

    /// RMSprop (rho, momentum, epsilon, centered).
    pub fn rmsprop() -> Self {
        Self::new(OptimizerKind::Rmsprop)
    }

    /// A constant learning rate (>= 0); default 0.01. Ignored when a schedule is set.
    pub fn learning_rate(mut self, lr: f64) -> Self {
        self.learning_rate = Some(lr);
        self
    }

    /// A learning-rate schedule instead of a constant; the optimizer keeps it.
    pub fn schedule(mut self, schedule: &'a Schedule) -> Self {
        self.schedule = Some(schedule);
        self
    }

    /// SGD's and RMSprop's momentum; default 0.
    pub fn momentum(mut self, momentum: f64) -> Self {
        self.momentum = Some(momentum);
        self
    }

    /// SGD's Nesterov momentum; default false.
    pub fn nesterov(mut self, on: bool) -> Self {
        self.nesterov = Some(on);
        self
    }

    /// Adam's beta_1 in [0, 1); default 0.9.
    pub fn beta_1(mut self, beta_1: f64) -> Self {
        self.beta_1 = Some(beta_1);
        self
    }

    /// Adam's beta_2 in [0, 1); default 0.999.
    pub fn beta_2(mut self, beta_2: f64) -> Self {
        self.beta_2 = Some(beta_2);
        self
    }

    /// Default 1e-7.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }

    /// AdamW's decoupled weight decay; default 0.004.
    pub fn weight_decay(mut self, weight_decay: f64) -> Self {
        self.weight_decay = Some(weight_decay);
        self
    }

    /// RMSprop's rho; default 0.9.
    pub fn rho(mut self, rho: f64) -> Self {
        self.rho = Some(rho);
        self
    }

    /// Centered RMSprop; default false.
    pub fn centered(mut self, on: bool) -> Self {
        self.centered = Some(on);
        self
    }
}

impl Default for OptimizerOptions<'_> {
    /// SGD with cairn.h's defaults.
    fn default() -> Self {
        Self::sgd()
    }
}

impl Optimizer {
    /// A new optimizer. INVALID_ARGUMENT naming a bad option (a negative learning rate, a beta
    /// outside [0, 1), ...).
    pub fn new(ctx: &Context, options: OptimizerOptions<'_>) -> Result<Optimizer> {
        let mut raw = init(sys::cairn_optimizer_options_init)?;
        raw.kind = options.kind.to_raw();
        set_fields!(raw, options, { learning_rate, momentum, nesterov, beta_1, beta_2, epsilon, weight_decay, rho, centered });
        if let Some(schedule) = options.schedule {
            raw.schedule = schedule.as_raw();
        }
        let mut out = ptr::null_mut();
        // SAFETY: the options and the schedule outlive the call; the optimizer shares the schedule.
        unsafe { check(sys::cairn_optimizer_create(ctx.as_raw(), &raw, &mut out))? };
        Object::from_result(out, "cairn_optimizer_create").map(Optimizer)
    }

    /// One update for each (gradient, variable) pair, then the step counter goes up by one. A
    /// `None` gradient skips its variable (as TensorFlow skips None), so the output of
    /// [`crate::GradientTape::gradient_variables`] can be passed as it is. INVALID_ARGUMENT, with
    /// nothing updated, for lists of different lengths, or naming the variable for a dtype or
    /// shape mismatch, a variable that is not trainable or not floating, or one given twice.
    pub fn apply_gradients<G, V>(&self, grads: &[Option<G>], vars: &[V]) -> Result<()>
    where
        G: Borrow<Tensor>,
        V: Borrow<Variable>,
    {
        if grads.len() != vars.len() {
            return Err(Error::new(
                Code::InvalidArgument,
                format!("Optimizer::apply_gradients: {} gradients for {} variables", grads.len(), vars.len()),
            ));
        }
        let raw_grads: Vec<*const sys::cairn_tensor> =
            grads.iter().map(|g| g.as_ref().map_or(ptr::null(), |g| g.borrow().as_raw().cast_const())).collect();
        let raw_vars: Vec<*mut sys::cairn_object> = vars.iter().map(|v| v.borrow().as_raw()).collect();
        // SAFETY: both arrays hold n live (or NULL gradient) handles, borrowed for the call.
        unsafe {
            check(sys::cairn_optimizer_apply_gradients(
                self.as_raw(),
                raw_grads.as_ptr(),
                raw_vars.as_ptr(),
                raw_vars.len(),
            ))
        }
    }

    /// The number of [`Optimizer::apply_gradients`] calls so far (the checkpointed "iter").
    pub fn iterations(&self) -> Result<i64> {
        let mut out = 0;
        unsafe { check(sys::cairn_optimizer_iterations(self.as_raw(), &mut out))? };
        Ok(out)
    }

    /// The learning rate the next update uses (the schedule's value at the current step).
    pub fn learning_rate(&self) -> Result<f64> {
        let mut out = 0.0;
        unsafe { check(sys::cairn_optimizer_learning_rate(self.as_raw(), &mut out))? };
        Ok(out)
    }

    /// Replaces a constant learning rate. FAILED_PRECONDITION when a schedule is in use.
    pub fn set_learning_rate(&self, lr: f64) -> Result<()> {
        unsafe { check(sys::cairn_optimizer_set_learning_rate(self.as_raw(), lr)) }
    }

    /// The slot `name` ("m", "v", "momentum", "rms", "mg") held for `var`. NOT_FOUND before the
    /// variable's first update (or for a slot this kind does not have).
    pub fn slot(&self, var: &Variable, name: &str) -> Result<Variable> {
        let name = c_string(name, "Optimizer::slot", "name")?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_optimizer_get_slot(self.as_raw(), var.as_raw(), name.as_ptr(), &mut out))? };
        Variable::try_from(Object::from_result(out, "cairn_optimizer_get_slot")?)
    }
}

impl fmt::Debug for Optimizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.iterations(), self.learning_rate()) {
            (Ok(iterations), Ok(lr)) => write!(f, "Optimizer(iterations {iterations}, learning rate {lr})"),
            _ => f.write_str("Optimizer"),
        }
    }
}

/// A learning-rate schedule: a tracked object (kind TRACKABLE) to pass to
/// [`OptimizerOptions::schedule`]. It derefs to [`Object`].
#[derive(Clone)]
pub struct Schedule(Object);

impl Schedule {
    /// `initial * rate^(step / decay_steps)`, the exponent floored when `staircase`
    /// (tf.keras.optimizers.schedules.ExponentialDecay).
    pub fn exponential_decay(
        ctx: &Context,
        initial_learning_rate: f64,
        decay_steps: i64,
        decay_rate: f64,
        staircase: bool,
    ) -> Result<Schedule> {
        let mut raw = init(sys::cairn_exponential_decay_options_init)?;
        raw.initial_learning_rate = initial_learning_rate;
        (raw.decay_steps, raw.decay_rate, raw.staircase) = (decay_steps, decay_rate, staircase.into());
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_schedule_exponential_decay(ctx.as_raw(), &raw, &mut out))? };
        Object::from_result(out, "Schedule::exponential_decay").map(Schedule)
    }

    /// `initial * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)`
    /// (tf.keras.optimizers.schedules.CosineDecay).
    pub fn cosine_decay(ctx: &Context, initial_learning_rate: f64, decay_steps: i64, alpha: f64) -> Result<Schedule> {
        let mut raw = init(sys::cairn_cosine_decay_options_init)?;
        (raw.initial_learning_rate, raw.decay_steps, raw.alpha) = (initial_learning_rate, decay_steps, alpha);
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_schedule_cosine_decay(ctx.as_raw(), &raw, &mut out))? };
        Object::from_result(out, "Schedule::cosine_decay").map(Schedule)
    }

    /// The handle as an [`Object`] (also what `Deref` gives).
    pub fn as_object(&self) -> &Object {
        &self.0
    }
}

impl Deref for Schedule {
    type Target = Object;
    fn deref(&self) -> &Object {
        &self.0
    }
}

impl AsRef<Object> for Schedule {
    fn as_ref(&self) -> &Object {
        &self.0
    }
}

impl From<Schedule> for Object {
    fn from(schedule: Schedule) -> Object {
        schedule.0
    }
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Schedule({} edges)", self.child_count())
    }
}
