//! Element types: [`DType`] and the Rust types that tensors are built from and read into.

use std::ffi::CStr;
use std::fmt;

use cairn_sys as sys;

use crate::{DType, Result};

impl DType {
    /// The C API's name: "float32", "int64", ... ("invalid" when no libcairn can be loaded).
    pub fn name(self) -> &'static str {
        if crate::check_abi().is_err() {
            return "invalid";
        }
        // SAFETY: cairn_dtype_name returns a static NUL-terminated string for every value.
        unsafe { CStr::from_ptr(sys::cairn_dtype_name(self.to_raw())) }.to_str().unwrap_or("invalid")
    }

    /// Bytes per element; 0 for `String` and `Invalid` (and when no libcairn can be loaded).
    pub fn size(self) -> usize {
        if crate::check_abi().is_err() {
            return 0;
        }
        // SAFETY: a pure function of its argument.
        unsafe { sys::cairn_dtype_size(self.to_raw()) }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A complex64 element: two `f32` in memory order (real, imaginary), as the C API stores them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct Complex64 {
    /// The real part.
    pub re: f32,
    /// The imaginary part.
    pub im: f32,
}

impl Complex64 {
    /// `re + im i`.
    pub const fn new(re: f32, im: f32) -> Complex64 {
        Complex64 { re, im }
    }
}

/// A float16 (IEEE 754 binary16) element, held as its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct F16(pub u16);

/// A bfloat16 element (the upper half of an `f32`), held as its bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct BF16(pub u16);

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values have the memory layout of one Cairn dtype, so tensors can be made from
/// slices of it and read back into vectors of it. Sealed: implemented for `f32`, `f64`, `i32`, `i64`,
/// `i16`, `i8`, `u8`, `bool`, [`Complex64`] (and `[f32; 2]`), [`F16`] and [`BF16`].
pub trait Element: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The dtype of a tensor holding this type.
    const DTYPE: DType;

    /// Reads `n` elements: `read(dst, nbytes)` fills `nbytes` bytes at `dst` with a tensor's data.
    ///
    /// # Safety
    /// When `read` returns `Ok`, it has written all `nbytes` bytes (they are taken as initialized).
    #[doc(hidden)]
    unsafe fn read_vec(n: usize, read: impl FnOnce(*mut u8, usize) -> Result<()>) -> Result<Vec<Self>>;
}

macro_rules! plain_element {
    ($($t:ty => $dtype:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$dtype;

            unsafe fn read_vec(n: usize, read: impl FnOnce(*mut u8, usize) -> Result<()>) -> Result<Vec<Self>> {
                let mut out = Vec::<Self>::with_capacity(n);
                read(out.as_mut_ptr().cast::<u8>(), n * std::mem::size_of::<Self>())?;
                // SAFETY: `read` filled all n elements, and every bit pattern is a valid value of this type.
                out.set_len(n);
                Ok(out)
            }
        }
    )*};
}

plain_element! {
    f32 => Float32,
    f64 => Float64,
    i32 => Int32,
    i64 => Int64,
    i16 => Int16,
    i8 => Int8,
    u8 => Uint8,
    Complex64 => Complex64,
    [f32; 2] => Complex64,
    F16 => Float16,
    BF16 => Bfloat16,
}

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;

    // Bool is one byte in C; any nonzero byte reads as true (a Rust bool must be 0 or 1).
    unsafe fn read_vec(n: usize, read: impl FnOnce(*mut u8, usize) -> Result<()>) -> Result<Vec<Self>> {
        let bytes = u8::read_vec(n, read)?;
        Ok(bytes.into_iter().map(|b| b != 0).collect())
    }
}
