//! Contexts: devices, the thread pool, the log callback, allocator hooks and the RNG seed.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::{Code, Error, LogLevel, Result};

/// A Cairn context. Tensors are made and ops run through one. It is `Send` and `Sync`: the C API
/// lets several threads use one context at once, so share it by reference (scoped threads) or in
/// an `Arc`. Dropping it frees the handle; tensors made from it stay valid.
pub struct Context {
    raw: NonNull<sys::cairn_context>,
    // The log callback's closure; freed after the context (see Drop).
    _log: Option<Box<LogCallback>>,
}

// SAFETY: cairn.h: "A cairn_context may be used from several threads at once." The log closure is
// Send + Sync.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

type LogCallback = Box<dyn Fn(LogLevel, &str) + Send + Sync + 'static>;

impl Context {
    /// A context with every option at its default (CPU, all cores, seed 0, warnings to stderr).
    pub fn new() -> Result<Context> {
        crate::check_abi()?;
        let mut raw = ptr::null_mut();
        // SAFETY: NULL options mean all defaults; `raw` receives the new handle.
        unsafe { check(sys::cairn_context_create(ptr::null(), &mut raw))? };
        Context::adopt(raw, None)
    }

    /// A context with `options`.
    pub fn with_options(options: ContextOptions) -> Result<Context> {
        crate::check_abi()?;
        let ContextOptions { mut raw, device, log, allocator } = options;
        let device = device.map(|d| c_string(&d, "cairn_context_create", "device")).transpose()?;
        if let Some(device) = &device {
            raw.device = device.as_ptr();
        }
        if let Some(log) = &log {
            raw.log_fn = Some(log_trampoline);
            raw.log_user_data = (&**log as *const LogCallback).cast_mut().cast();
        }
        if let Some(allocator) = &allocator {
            raw.allocator = allocator; // copied by cairn_context_create
        }
        let mut out = ptr::null_mut();
        // SAFETY: `raw` and what it points to outlive the call; the log closure outlives the context.
        unsafe { check(sys::cairn_context_create(&raw, &mut out))? };
        Context::adopt(out, log)
    }

    fn adopt(raw: *mut sys::cairn_context, log: Option<Box<LogCallback>>) -> Result<Context> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(Code::Internal, "cairn_context_create: returned success but no context"))?;
        Ok(Context { raw, _log: log })
    }

    /// The name of the default device, e.g. "cpu". Borrowed from the context, so it cannot
    /// outlive it:
    ///
    /// ```compile_fail
    /// let device: &str = {
    ///     let ctx = cairn::Context::new().unwrap();
    ///     ctx.device() // error: `ctx` does not live long enough
    /// };
    /// ```
    pub fn device(&self) -> &str {
        // SAFETY: the string lives as long as the context.
        unsafe { CStr::from_ptr(sys::cairn_context_device(self.raw.as_ptr())) }.to_str().unwrap_or("")
    }

    /// The raw handle, still owned by `self`. The C API takes it as non-const even where it only
    /// reads; the context is internally synchronized.
    pub fn as_raw(&self) -> *mut sys::cairn_context {
        self.raw.as_ptr()
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed. The log closure is
        // a field, so it is dropped after this.
        unsafe { sys::cairn_context_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context").field("device", &self.device()).finish()
    }
}

/// Options of [`Context::with_options`]. `ContextOptions::new()` starts from the C API's
/// `CAIRN_CONTEXT_OPTIONS_INIT` defaults.
pub struct ContextOptions {
    raw: sys::cairn_context_options,
    device: Option<String>,
    log: Option<Box<LogCallback>>,
    allocator: Option<sys::cairn_allocator>,
}

// SAFETY: `raw` holds no pointers until `Context::with_options` fills them in; the allocator's
// user_data is a `&'static A` with `A: Sync`; the log closure is Send + Sync.
unsafe impl Send for ContextOptions {}
unsafe impl Sync for ContextOptions {}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions { raw: sys::CAIRN_CONTEXT_OPTIONS_INIT, device: None, log: None, allocator: None }
    }
}

impl ContextOptions {
    /// The defaults: CPU, all cores, seed 0, warnings and errors to stderr, the default allocator.
    pub fn new() -> ContextOptions {
        ContextOptions::default()
    }

    /// The default device: "cpu" (default), "vulkan" or "vulkan:N".
    pub fn device(mut self, device: &str) -> Self {
        self.device = Some(device.to_string());
        self
    }

    /// Intra-op threads, the caller included; 0 (default) means all cores. Values above
    /// `i32::MAX` are clamped to it.
    pub fn num_threads(mut self, n: usize) -> Self {
        self.raw.num_threads = i32::try_from(n).unwrap_or(i32::MAX);
        self
    }

    /// The base seed of random ops; default 0.
    pub fn seed(mut self, seed: u64) -> Self {
        self.raw.seed = seed;
        self
    }

    /// The least severe level delivered; default `LogLevel::Warning`.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.raw.log_level = level.to_raw();
        self
    }

    /// Receives log messages instead of stderr. It is called from whichever thread logs, so it
    /// must be `Send + Sync`. A panic inside it is caught (after the panic hook has reported it)
    /// and the message is dropped; it never unwinds into the C library.
    pub fn log_callback<F>(mut self, callback: F) -> Self
    where
        F: Fn(LogLevel, &str) + Send + Sync + 'static,
    {
        self.log = Some(Box::new(Box::new(callback)));
        self
    }

    /// Host memory comes from `allocator` instead of aligned_alloc/free. It is `'static` because
    /// the C API may call it after the context is dropped, for as long as any tensor lives.
    pub fn allocator<A: HostAllocator>(mut self, allocator: &'static A) -> Self {
        self.allocator = Some(sys::cairn_allocator {
            allocate: Some(allocate_trampoline::<A>),
            deallocate: Some(deallocate_trampoline::<A>),
            user_data: (allocator as *const A).cast_mut().cast(),
        });
        self
    }
}

impl fmt::Debug for ContextOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextOptions")
            .field("device", &self.device.as_deref().unwrap_or("cpu"))
            .field("num_threads", &self.raw.num_threads)
            .field("seed", &self.raw.seed)
            .field("log_level", &LogLevel::from_raw(self.raw.log_level))
            .field("log_callback", &self.log.is_some())
            .field("allocator", &self.allocator.is_some())
            .finish()
    }
}

/// Host allocator hooks for [`ContextOptions::allocator`]. Both methods may be called from any
/// thread. A panic in `allocate` is caught and reads as an allocation failure (NULL); a panic in
/// `deallocate` is caught and the memory is leaked.
///
/// # Safety
/// `allocate` must return NULL or a pointer to `size` writable bytes aligned to `alignment` (a
/// power of two, at least 64) that stay valid until `deallocate` receives that pointer back.
pub unsafe trait HostAllocator: Sync + 'static {
    /// `size` bytes aligned to `alignment`, or NULL.
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8;

    /// Frees memory `allocate` returned; `size` is the size that was asked for.
    ///
    /// # Safety
    /// `ptr` came from `allocate(size, _)` on this allocator and is freed only once.
    unsafe fn deallocate(&self, ptr: *mut u8, size: usize);
}

unsafe extern "C" fn log_trampoline(user_data: *mut c_void, level: sys::cairn_log_level, message: *const c_char) {
    // SAFETY: user_data is the Box<LogCallback> the Context owns, alive while the C API logs for it.
    let callback = &*(user_data as *const LogCallback);
    let level = LogLevel::from_raw(level).unwrap_or(LogLevel::Error);
    let message = if message.is_null() { "".into() } else { CStr::from_ptr(message).to_string_lossy() };
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| callback(level, &message))) {
        discard_panic(payload);
    }
}

unsafe extern "C" fn allocate_trampoline<A: HostAllocator>(
    user_data: *mut c_void,
    size: usize,
    alignment: usize,
) -> *mut c_void {
    // SAFETY: user_data is the &'static A given to ContextOptions::allocator.
    let allocator = &*(user_data as *const A);
    match panic::catch_unwind(AssertUnwindSafe(|| allocator.allocate(size, alignment))) {
        Ok(p) => p.cast(),
        Err(payload) => {
            discard_panic(payload);
            ptr::null_mut()
        }
    }
}

unsafe extern "C" fn deallocate_trampoline<A: HostAllocator>(user_data: *mut c_void, p: *mut c_void, size: usize) {
    // SAFETY: as above; the C API hands back what allocate returned.
    let allocator = &*(user_data as *const A);
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| allocator.deallocate(p.cast(), size))) {
        discard_panic(payload);
    }
}

// The panic hook has already reported the panic. Dropping the payload could itself panic, so that
// is caught too: nothing may unwind into C.
fn discard_panic(payload: Box<dyn Any + Send>) {
    if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}
