//! Options structs start from the library's `cairn_X_init`: the header's defaults for every field,
//! so this binding restates none of them. Builders keep only what their caller set and write just
//! those fields over the initialized struct.

use std::mem::{size_of, MaybeUninit};

use cairn_sys as sys;

use crate::error::check;
use crate::Result;

/// A C options struct initialized by `init` (one of the `cairn_X_init` functions), after loading
/// the library if needed.
pub(crate) fn init<T>(init: unsafe fn(*mut T, u32) -> *mut sys::cairn_status) -> Result<T> {
    crate::check_abi()?;
    let mut raw = MaybeUninit::<T>::zeroed();
    // SAFETY: every options struct is plain data for which all-zero bytes are valid (integers,
    // pointers, optional function pointers); `init` writes size_of::<T>() bytes at most.
    unsafe {
        check(init(raw.as_mut_ptr(), size_of::<T>() as u32))?;
        Ok(raw.assume_init())
    }
}

/// `raw_field = value` for each builder field the caller set (`Some`), converted with `into()`.
macro_rules! set_fields {
    ($raw:expr, $opts:expr, { $($field:ident),* $(,)? }) => {
        $(if let Some(v) = $opts.$field { $raw.$field = v.into(); })*
    };
}
pub(crate) use set_fields;

/// Builder setters that store `Some(value.into())` in the field of the same name and return the
/// builder: `setters! { /// doc \n units: i64; }`.
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $ty:ty;)*) => {
        $(
            $(#[$doc])*
            pub fn $field(mut self, value: $ty) -> Self {
                self.$field = Some(value.into());
                self
            }
        )*
    };
}
pub(crate) use setters;
