//! Errors: every `cairn_status` becomes an [`Error`] carrying its code and message.

use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::ptr;

use cairn_sys as sys;

use crate::Code;

/// What a fallible call returns.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error from Cairn: a status code and a message naming the function or op and what was wrong.
/// It displays as `<CODE>: <message>`, as in the Go and Java bindings, e.g.
/// `INVALID_ARGUMENT: Add: incompatible shapes [2,3] and [4]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    code: Code,
    message: String,
}

impl Error {
    /// An error made on the Rust side (a dtype mismatch in `Tensor::to_vec`, an ABI mismatch, ...).
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// The status code. A code this binding does not know reads as [`Code::Unknown`].
    pub fn code(&self) -> Code {
        self.code
    }

    /// The message, as the C API wrote it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Takes over a non-NULL status: copies its code and message, then frees it.
    ///
    /// # Safety
    /// `status` must be a live status handle that nothing else frees.
    #[cold]
    #[inline(never)]
    unsafe fn from_status(status: *mut sys::cairn_status) -> Error {
        let code = Code::from_raw(sys::cairn_status_code(status)).unwrap_or(Code::Unknown);
        let message = CStr::from_ptr(sys::cairn_status_message(status)).to_string_lossy().into_owned();
        sys::cairn_status_free(status);
        Error { code, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.c_name(), self.message)
    }
}

impl std::error::Error for Error {}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

/// The one place a status pointer becomes a `Result`: NULL is `Ok(())`; anything else is an
/// [`Error`], and the status is freed here, exactly once.
///
/// # Safety
/// `status` must be NULL or a status the C API just returned to this caller.
#[inline]
pub(crate) unsafe fn check(status: *mut sys::cairn_status) -> Result<()> {
    if status.is_null() {
        Ok(())
    } else {
        Err(Error::from_status(status))
    }
}

/// A NUL-terminated copy of `s` for the C API; INVALID_ARGUMENT when `s` holds a NUL byte.
pub(crate) fn c_string(s: &str, function: &str, what: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::new(Code::InvalidArgument, format!("{function}: {what} {s:?} contains a NUL byte")))
}

/// An optional name for the C API: NULL for `None`.
pub(crate) struct Name(Option<CString>);

impl Name {
    pub(crate) fn new(name: Option<&str>, function: &str) -> Result<Name> {
        Ok(Name(name.map(|n| c_string(n, function, "name")).transpose()?))
    }

    pub(crate) fn as_ptr(&self) -> *const c_char {
        self.0.as_ref().map_or(ptr::null(), |n| n.as_ptr())
    }

    /// Writes the name into an options struct's field when one was given; otherwise the field
    /// keeps its initialized default.
    pub(crate) fn set(&self, field: &mut *const c_char) {
        if let Some(n) = &self.0 {
            *field = n.as_ptr();
        }
    }
}

/// Runs a call that hands over a C string (freed with cairn_free) and copies it.
pub(crate) fn take_string(run: impl FnOnce(*mut *mut c_char) -> *mut sys::cairn_status) -> Result<String> {
    let mut out = ptr::null_mut();
    // SAFETY: on success `out` is a NUL-terminated string we own.
    unsafe {
        check(run(&mut out))?;
        if out.is_null() {
            return Err(Error::new(Code::Internal, "returned success but no text"));
        }
        let text = CStr::from_ptr(out).to_string_lossy().into_owned();
        sys::cairn_free(out.cast());
        Ok(text)
    }
}
