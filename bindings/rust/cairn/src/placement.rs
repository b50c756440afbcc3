//! Device placement: device scopes (`tf.device`) and soft placement with its copy counter
//! (docs/placement.md).

use std::ffi::{c_char, CStr};
use std::marker::PhantomData;
use std::ptr;

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::{Context, Result};

/// An open device scope of a [`Context`] ([`Context::device_scope`]): while it lives, ops without
/// inputs, tensors made from host data and variables created on this thread go to its device, and
/// with soft placement on, ops with inputs run there too. Dropping it closes the scope.
///
/// Scopes belong to the thread that opened them, so a `DeviceScope` is neither `Send` nor `Sync`:
/// it is closed on the thread that opened it. Scopes nest; close them in reverse order (dropping
/// in scope order does this).
pub struct DeviceScope<'ctx> {
    ctx: &'ctx Context,
    // A raw pointer makes the guard !Send and !Sync.
    _not_send: PhantomData<*const ()>,
}

impl Context {
    /// Opens a device scope on `device` ("cpu", "vulkan:0", any name the context resolves) on the
    /// calling thread, until the returned guard drops. `NotFound` for an unknown device name,
    /// `Unavailable` for a device whose backend is missing.
    pub fn device_scope(&self, device: &str) -> Result<DeviceScope<'_>> {
        let name = c_string(device, "Context::device_scope", "device")?;
        // SAFETY: the context is live; the name outlives the call.
        unsafe { check(sys::cairn_device_scope_enter(self.as_raw(), name.as_ptr()))? };
        Ok(DeviceScope { ctx: self, _not_send: PhantomData })
    }

    /// The device of the innermost device scope of this context open on the calling thread.
    pub fn current_device_scope(&self) -> Result<Option<String>> {
        let mut name: *const c_char = ptr::null();
        // SAFETY: the context is live; `name` receives a string borrowed from the context.
        unsafe { check(sys::cairn_device_scope_current(self.as_raw(), &mut name))? };
        if name.is_null() {
            return Ok(None);
        }
        // SAFETY: a NUL-terminated device name that lives as long as the context.
        Ok(Some(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()))
    }

    /// Turns soft placement on or off (default off). On: an op runs on the innermost device
    /// scope's device, else on its first input's, and every input on another device is copied
    /// there (counted by [`Context::auto_copies`]). Off: inputs on different devices are
    /// `InvalidArgument`; no copy is ever implicit.
    pub fn set_soft_placement(&self, on: bool) -> Result<()> {
        // SAFETY: the context is live.
        unsafe { check(sys::cairn_context_set_soft_placement(self.as_raw(), i32::from(on))) }
    }

    /// Whether soft placement is on.
    pub fn soft_placement(&self) -> Result<bool> {
        let mut on = 0i32;
        // SAFETY: the context is live; `on` receives the flag.
        unsafe { check(sys::cairn_context_soft_placement(self.as_raw(), &mut on))? };
        Ok(on != 0)
    }

    /// How many input copies soft placement has made in this context so far, on every thread.
    pub fn auto_copies(&self) -> Result<u64> {
        let mut n = 0u64;
        // SAFETY: the context is live; `n` receives the count.
        unsafe { check(sys::cairn_context_auto_copies(self.as_raw(), &mut n))? };
        Ok(n)
    }
}

impl Drop for DeviceScope<'_> {
    fn drop(&mut self) {
        // SAFETY: the context outlives the guard, which is on the thread that opened the scope, so
        // a scope of this context is open here and the exit succeeds (a drop could not report
        // an error anyway).
        let _ = unsafe { check(sys::cairn_device_scope_exit(self.ctx.as_raw())) };
    }
}
