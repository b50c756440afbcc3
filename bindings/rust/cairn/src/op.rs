//! Running ops: the helpers behind the generated wrappers in `ops`, and [`run`] for any op by name.

use std::ffi::{c_char, CStr, CString};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::{AttrKind, Context, DType, Result, Tensor};

/// A `cairn_attr` whose borrowed name, array or string outlive it (`'a`).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct RawAttr<'a>(sys::cairn_attr, PhantomData<&'a ()>);

impl<'a> RawAttr<'a> {
    fn new(name: &'a CStr, kind: AttrKind) -> Self {
        RawAttr(
            sys::cairn_attr {
                name: name.as_ptr(),
                kind: kind.to_raw(),
                i: 0,
                f: 0.0,
                ints: ptr::null(),
                n_ints: 0,
                s: ptr::null(),
                dtype: sys::CAIRN_INVALID_DTYPE,
                floats: ptr::null(),
                n_floats: 0,
            },
            PhantomData,
        )
    }

    pub(crate) fn int(name: &'a CStr, value: i64) -> Self {
        let mut a = Self::new(name, AttrKind::Int);
        a.0.i = value;
        a
    }

    pub(crate) fn float(name: &'a CStr, value: f64) -> Self {
        let mut a = Self::new(name, AttrKind::Float);
        a.0.f = value;
        a
    }

    pub(crate) fn bool(name: &'a CStr, value: bool) -> Self {
        let mut a = Self::new(name, AttrKind::Bool);
        a.0.i = i64::from(value);
        a
    }

    pub(crate) fn ints(name: &'a CStr, value: &'a [i64]) -> Self {
        let mut a = Self::new(name, AttrKind::Ints);
        a.0.ints = value.as_ptr();
        a.0.n_ints = value.len();
        a
    }

    pub(crate) fn string(name: &'a CStr, value: &'a CStr) -> Self {
        let mut a = Self::new(name, AttrKind::String);
        a.0.s = value.as_ptr();
        a
    }

    pub(crate) fn dtype(name: &'a CStr, value: DType) -> Self {
        let mut a = Self::new(name, AttrKind::Dtype);
        a.0.dtype = value.to_raw();
        a
    }

    pub(crate) fn floats(name: &'a CStr, value: &'a [f64]) -> Self {
        let mut a = Self::new(name, AttrKind::Floats);
        a.0.floats = value.as_ptr();
        a.0.n_floats = value.len();
        a
    }
}

/// Up to `N` attributes on the stack: the generated wrappers collect the attributes a call sends
/// (the required ones, then the optional ones the caller set) without allocating.
pub(crate) struct AttrList<'a, const N: usize> {
    items: [MaybeUninit<RawAttr<'a>>; N],
    len: usize,
}

impl<'a, const N: usize> AttrList<'a, N> {
    #[inline]
    pub(crate) fn new() -> Self {
        AttrList { items: [MaybeUninit::uninit(); N], len: 0 }
    }

    /// Appends `attr`; the generated code pushes at most `N`.
    #[inline]
    pub(crate) fn push(&mut self, attr: RawAttr<'a>) {
        self.items[self.len].write(attr);
        self.len += 1;
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[RawAttr<'a>] {
        // SAFETY: the first `len` items were written by `push`; RawAttr is plain data.
        unsafe { std::slice::from_raw_parts(self.items.as_ptr().cast(), self.len) }
    }
}

/// Runs `op` with `N` outputs.
pub(crate) fn run_fixed<const N: usize>(
    ctx: &Context,
    op: &CStr,
    inputs: &[*mut sys::cairn_tensor],
    attrs: &[RawAttr<'_>],
) -> Result<[Tensor; N]> {
    let mut outputs = [ptr::null_mut(); N];
    // SAFETY: see run_raw.
    unsafe { run_raw(ctx, op.as_ptr(), inputs, attrs, &mut outputs)? };
    adopt_outputs(op, &outputs)?;
    // SAFETY: adopt_outputs checked that every output is non-NULL; each becomes one Tensor.
    Ok(outputs.map(|p| unsafe { Tensor::from_raw(ptr::NonNull::new_unchecked(p)) }))
}

/// Runs `op` with `n` outputs.
pub(crate) fn run_vec(
    ctx: &Context,
    op: &CStr,
    inputs: &[*mut sys::cairn_tensor],
    attrs: &[RawAttr<'_>],
    n: usize,
) -> Result<Vec<Tensor>> {
    let mut outputs = vec![ptr::null_mut(); n];
    // SAFETY: see run_raw.
    unsafe { run_raw(ctx, op.as_ptr(), inputs, attrs, &mut outputs)? };
    adopt_outputs(op, &outputs)?;
    // SAFETY: as in run_fixed.
    Ok(outputs.into_iter().map(|p| unsafe { Tensor::from_raw(ptr::NonNull::new_unchecked(p)) }).collect())
}

/// How many outputs `op` produces with `attrs` (`cairn_op_num_outputs`): fixed for most ops; for
/// Split and Unpack it comes from their count attribute.
pub(crate) fn num_outputs(op: &CStr, attrs: &[RawAttr<'_>]) -> Result<usize> {
    let mut n = 0;
    // SAFETY: the attributes and what they point to outlive the call (their lifetime says so).
    unsafe { check(sys::cairn_op_num_outputs(op.as_ptr(), attrs.as_ptr().cast(), attrs.len(), &mut n))? };
    Ok(n)
}

/// # Safety
/// `inputs` are live tensor handles (borrowed for the call).
#[inline]
unsafe fn run_raw(
    ctx: &Context,
    op: *const c_char,
    inputs: &[*mut sys::cairn_tensor],
    attrs: &[RawAttr<'_>],
    outputs: &mut [*mut sys::cairn_tensor],
) -> Result<()> {
    check(sys::cairn_op_run(
        ctx.as_raw(),
        op,
        inputs.as_ptr(),
        inputs.len(),
        attrs.as_ptr().cast(), // RawAttr is a transparent cairn_attr
        attrs.len(),
        outputs.as_mut_ptr(),
        outputs.len(),
    ))
}

// On success every output must be set; if the library broke that promise, free what it did return.
#[inline]
fn adopt_outputs(op: &CStr, outputs: &[*mut sys::cairn_tensor]) -> Result<()> {
    if outputs.iter().all(|p| !p.is_null()) {
        Ok(())
    } else {
        missing_outputs(op, outputs)
    }
}

#[cold]
fn missing_outputs(op: &CStr, outputs: &[*mut sys::cairn_tensor]) -> Result<()> {
    for &p in outputs {
        // SAFETY: non-NULL outputs are new references we own; cairn_tensor_free(NULL) is a no-op.
        unsafe { sys::cairn_tensor_free(p) };
    }
    Err(crate::Error::new(
        crate::Code::Internal,
        format!("{}: cairn_op_run returned success but not every output", op.to_string_lossy()),
    ))
}

/// An attribute value for [`run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttrValue<'a> {
    /// An integer (INT).
    Int(i64),
    /// A number (FLOAT).
    Float(f64),
    /// A flag (BOOL).
    Bool(bool),
    /// A list of integers (INTS), e.g. a shape or axes.
    Ints(&'a [i64]),
    /// A string (STRING), e.g. a padding mode.
    String(&'a str),
    /// An element type (DTYPE).
    DType(DType),
    /// A list of numbers (FLOATS).
    Floats(&'a [f64]),
}

impl AttrValue<'_> {
    /// The C API's kind of this value.
    pub fn kind(&self) -> AttrKind {
        match self {
            AttrValue::Int(_) => AttrKind::Int,
            AttrValue::Float(_) => AttrKind::Float,
            AttrValue::Bool(_) => AttrKind::Bool,
            AttrValue::Ints(_) => AttrKind::Ints,
            AttrValue::String(_) => AttrKind::String,
            AttrValue::DType(_) => AttrKind::Dtype,
            AttrValue::Floats(_) => AttrKind::Floats,
        }
    }
}

/// A named attribute for [`run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attr<'a> {
    /// The attribute's name in the op registry, e.g. "transpose_a".
    pub name: &'a str,
    /// Its value; the kind must be the registry's.
    pub value: AttrValue<'a>,
}

impl<'a> Attr<'a> {
    /// `name = value`.
    pub fn new(name: &'a str, value: AttrValue<'a>) -> Attr<'a> {
        Attr { name, value }
    }
}

/// Runs any registered op by name (TensorFlow raw-op names) and returns its outputs; how many
/// there are comes from the registry (`cairn_op_num_outputs`: Split and Unpack take it from their
/// count attribute). Unset attributes take their defaults; inferred dtype attributes come from the
/// inputs. Prefer the typed wrappers in this module where one exists.
pub fn run(ctx: &Context, op: &str, inputs: &[&Tensor], attrs: &[Attr<'_>]) -> Result<Vec<Tensor>> {
    let op_c = c_string(op, "ops::run", "op name")?;
    let raw_inputs: Vec<_> = inputs.iter().map(|t| t.as_raw()).collect();
    // The C strings of the attributes must outlive the RawAttrs that point at them.
    let mut strings: Vec<(CString, Option<CString>)> = Vec::with_capacity(attrs.len());
    for a in attrs {
        let name = c_string(a.name, op, "attribute name")?;
        let value = match a.value {
            AttrValue::String(s) => Some(c_string(s, op, a.name)?),
            _ => None,
        };
        strings.push((name, value));
    }
    let raw_attrs: Vec<RawAttr<'_>> = attrs
        .iter()
        .zip(&strings)
        .map(|(a, (name, s))| match a.value {
            AttrValue::Int(v) => RawAttr::int(name, v),
            AttrValue::Float(v) => RawAttr::float(name, v),
            AttrValue::Bool(v) => RawAttr::bool(name, v),
            AttrValue::Ints(v) => RawAttr::ints(name, v),
            AttrValue::String(_) => RawAttr::string(name, s.as_deref().unwrap_or_default()),
            AttrValue::DType(v) => RawAttr::dtype(name, v),
            AttrValue::Floats(v) => RawAttr::floats(name, v),
        })
        .collect();
    let n_outputs = num_outputs(&op_c, &raw_attrs)?;
    run_vec(ctx, &op_c, &raw_inputs, &raw_attrs, n_outputs)
}
