//! Contexts: devices, the thread pool, the log callback, allocator hooks and the RNG seed.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr};
use std::fmt;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::options::init;
use crate::{Code, Error, LogLevel, Result, VulkanOptions};

/// A Cairn context. Tensors are made and ops run through one. It is `Send` and `Sync`: the C API
/// lets several threads use one context at once, so share it by reference (scoped threads) or in
/// an `Arc`. Dropping it frees the handle; tensors made from it stay valid.
pub struct Context {
    raw: NonNull<sys::cairn_context>,
}

// SAFETY: cairn.h: "A cairn_context may be used from several threads at once."
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

/// The log closure. The runtime owns one strong reference from creation until it calls
/// `log_release` (see [`Handoff`]).
struct LogCallback {
    callback: Box<LogFn>,
}

type LogFn = dyn Fn(LogLevel, &str) + Send + Sync + 'static;

impl Context {
    /// A context with every option at its default (CPU, all cores, seed 0, warnings to stderr).
    pub fn new() -> Result<Context> {
        crate::check_abi()?;
        let mut raw = ptr::null_mut();
        // SAFETY: NULL options mean all defaults; `raw` receives the new handle.
        unsafe { check(sys::cairn_context_create(ptr::null(), &mut raw))? };
        Context::adopt(raw, "Context::new")
    }

    /// A context with `options`. The log callback and the allocator move into the runtime, which
    /// drops them when it is done with them: when the context, and every tensor, object and
    /// checkpoint made from it, are gone (the C API's `log_release` and allocator `release` hooks).
    pub fn with_options(options: ContextOptions) -> Result<Context> {
        // SAFETY: `opts` and `out` are the valid pointers `create` passes.
        Context::create(options, "Context::with_options", |opts, out| unsafe { sys::cairn_context_create(opts, out) })
    }

    /// A context with `options` and Vulkan settings (`cairn_context_create_vulkan`). Without
    /// [`ContextOptions::device`] the default device is "vulkan" (the first discrete GPU, then
    /// integrated, virtual, then a CPU implementation); device "cpu" keeps the CPU as default while
    /// the settings apply to "vulkan:N". `Unavailable` without a Vulkan driver, `InvalidArgument`
    /// for a partial set of external handles.
    pub fn with_vulkan(options: ContextOptions, vulkan: &VulkanOptions) -> Result<Context> {
        let vulkan = vulkan.to_raw()?;
        Context::create(options, "Context::with_vulkan", |opts, out| {
            // SAFETY: as above; `vulkan` outlives the call, and its external handles were promised
            // valid by the caller of the unsafe `VulkanOptions::external`.
            unsafe { sys::cairn_context_create_vulkan(opts, &vulkan, out) }
        })
    }

    /// Fills the C options from `options` and makes the context with `constructor` (named `fn_name`
    /// in errors), one of the C constructors, which gets the filled options and the output slot.
    fn create<F>(options: ContextOptions, fn_name: &str, constructor: F) -> Result<Context>
    where
        F: FnOnce(*const sys::cairn_context_options, *mut *mut sys::cairn_context) -> *mut sys::cairn_status,
    {
        let ContextOptions { num_threads, seed, log_level, device, mut log, mut allocator } = options;
        let mut raw = init(sys::cairn_context_options_init)?;
        if let Some(n) = num_threads {
            raw.num_threads = n;
        }
        if let Some(seed) = seed {
            raw.seed = seed;
        }
        if let Some(level) = log_level {
            raw.log_level = level.to_raw();
        }
        let device = device.map(|d| c_string(&d, fn_name, "device")).transpose()?;
        if let Some(device) = &device {
            raw.device = device.as_ptr();
        }
        if let Some(log) = &log {
            raw.log_fn = Some(log_trampoline);
            raw.log_user_data = log.user_data;
            raw.log_release = Some(log.release);
        }
        let raw_allocator = allocator.as_ref().map(|a| a.allocator);
        if let Some(a) = &raw_allocator {
            raw.allocator = a; // copied by the constructor
        }
        let mut out = ptr::null_mut();
        // `raw` and what it points to outlive the call. The callback states stay alive until their
        // release hooks run (or the Handoffs reclaim them, when creation failed).
        let status = constructor(&raw, &mut out);
        if status.is_null() {
            for handoff in log.iter_mut().chain(allocator.iter_mut().map(|a| &mut a.handoff)) {
                handoff.handed_over = true;
            }
        }
        // SAFETY: the status was just returned to us.
        unsafe { check(status)? };
        Context::adopt(out, fn_name)
    }

    fn adopt(raw: *mut sys::cairn_context, fn_name: &str) -> Result<Context> {
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::new(Code::Internal, format!("{fn_name}: returned success but no context")))?;
        Ok(Context { raw })
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

    /// A `Context` for a handle the C API lends to a callback for the length of the call (a
    /// compiled function's body). `ManuallyDrop` keeps it from being freed: the C API owns it.
    ///
    /// # Safety
    /// `raw` must be a live context handle for as long as the result is used.
    pub(crate) unsafe fn lent(raw: NonNull<sys::cairn_context>) -> ManuallyDrop<Context> {
        ManuallyDrop::new(Context { raw })
    }

    /// The raw handle, still owned by `self`. The C API takes it as non-const even where it only
    /// reads; the context is internally synchronized.
    pub fn as_raw(&self) -> *mut sys::cairn_context {
        self.raw.as_ptr()
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed. The log closure and
        // the allocator live on in the runtime until their release hooks run.
        unsafe { sys::cairn_context_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context").field("device", &self.device()).finish()
    }
}

/// Options of [`Context::with_options`] and [`Context::with_vulkan`]. Options not set keep
/// cairn.h's defaults (`cairn_context_options_init`).
#[derive(Default)]
pub struct ContextOptions {
    num_threads: Option<i32>,
    seed: Option<u64>,
    log_level: Option<LogLevel>,
    device: Option<String>,
    log: Option<Handoff>,
    allocator: Option<AllocatorHandoff>,
}

struct AllocatorHandoff {
    allocator: sys::cairn_allocator, // user_data is handoff.user_data
    handoff: Handoff,
}

// SAFETY: the allocator hooks' user_data is an `Arc<A>` with `A: Send + Sync`; the log closure is Send + Sync.
unsafe impl Send for ContextOptions {}
unsafe impl Sync for ContextOptions {}

impl ContextOptions {
    /// cairn.h's defaults: CPU, all cores, seed 0, warnings and errors to stderr, the default allocator.
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
        self.num_threads = Some(i32::try_from(n).unwrap_or(i32::MAX));
        self
    }

    /// The base seed of random ops; default 0.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The least severe level delivered; default `LogLevel::Warning`.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Receives log messages instead of stderr. It is called from whichever thread logs, so it
    /// must be `Send + Sync`. Objects and checkpoints keep their context alive, so it may be called
    /// after the [`Context`] is dropped; the runtime drops the closure once it is done logging for
    /// the context (the C API's `log_release`), which is why it must own what it captures
    /// (`'static`). A panic inside it is caught (after the panic hook has reported it) and the
    /// message is dropped; it never unwinds into the C library.
    pub fn log_callback<F>(mut self, callback: F) -> Self
    where
        F: Fn(LogLevel, &str) + Send + Sync + 'static,
    {
        self.log = Some(Handoff::new(LogCallback { callback: Box::new(callback) }, log_release_trampoline));
        self
    }

    /// Host memory comes from `allocator` instead of aligned_alloc/free. The runtime owns it from
    /// context creation on and drops it (on whichever thread frees the last tensor) after the last
    /// block went back through [`HostAllocator::deallocate`]: when the context and every tensor
    /// made from it are gone. To keep using the allocator yourself, pass an `Arc<A>` (or a
    /// `&'static A`); both implement [`HostAllocator`].
    pub fn allocator<A: HostAllocator>(mut self, allocator: A) -> Self {
        let handoff = Handoff::new(allocator, release_trampoline::<A>);
        self.allocator = Some(AllocatorHandoff {
            allocator: sys::cairn_allocator {
                allocate: Some(allocate_trampoline::<A>),
                deallocate: Some(deallocate_trampoline::<A>),
                user_data: handoff.user_data,
                release: Some(release_trampoline::<A>),
            },
            handoff,
        });
        self
    }
}

/// Callback state handed to the C API: one `Arc` reference lives behind `user_data` for the
/// runtime, which drops it through `release`; `ours` is a second reference. If the context was
/// never created (or its creation failed), the runtime may or may not have called `release`
/// (cairn.h does not say; today a failed device lookup releases the allocator but not the log
/// closure), so the reference count tells whether the runtime's reference is still there.
struct Handoff {
    user_data: *mut c_void,
    release: unsafe extern "C" fn(*mut c_void),
    ours: Arc<dyn Any + Send + Sync>,
    handed_over: bool,
}

impl Handoff {
    fn new<T: Send + Sync + 'static>(state: T, release: unsafe extern "C" fn(*mut c_void)) -> Handoff {
        let state = Arc::new(state);
        let user_data = Arc::into_raw(Arc::clone(&state)).cast_mut().cast();
        Handoff { user_data, release, ours: state, handed_over: false }
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        // Nothing else can clone or drop these two references, so the count is exact.
        if !self.handed_over && Arc::strong_count(&self.ours) > 1 {
            // SAFETY: the runtime's reference is still there and the runtime never got (or no
            // longer has) a context that could use it; `release` is the matching trampoline.
            unsafe { (self.release)(self.user_data) }
        }
    }
}

impl fmt::Debug for ContextOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextOptions")
            .field("device", &self.device)
            .field("num_threads", &self.num_threads)
            .field("seed", &self.seed)
            .field("log_level", &self.log_level)
            .field("log_callback", &self.log.is_some())
            .field("allocator", &self.allocator.is_some())
            .finish()
    }
}

/// Host allocator hooks for [`ContextOptions::allocator`]. Both methods may be called from any
/// thread, and the runtime drops the allocator on whichever thread frees the last tensor, hence
/// `Send + Sync`. A panic in `allocate` is caught and reads as an allocation failure (NULL); a
/// panic in `deallocate` is caught and the memory is leaked; a panic in `drop` is caught.
///
/// # Safety
/// `allocate` must return NULL or a pointer to `size` writable bytes aligned to `alignment` (a
/// power of two, at least 64) that stay valid until `deallocate` receives that pointer back.
pub unsafe trait HostAllocator: Send + Sync + 'static {
    /// `size` bytes aligned to `alignment`, or NULL.
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8;

    /// Frees memory `allocate` returned; `size` is the size that was asked for.
    ///
    /// # Safety
    /// `ptr` came from `allocate(size, _)` on this allocator and is freed only once.
    unsafe fn deallocate(&self, ptr: *mut u8, size: usize);
}

// SAFETY (all blanket impls): they forward to an allocator that keeps the contract.
unsafe impl<A: HostAllocator> HostAllocator for &'static A {
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8 {
        (**self).allocate(size, alignment)
    }

    unsafe fn deallocate(&self, ptr: *mut u8, size: usize) {
        (**self).deallocate(ptr, size)
    }
}

unsafe impl<A: HostAllocator> HostAllocator for Arc<A> {
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8 {
        (**self).allocate(size, alignment)
    }

    unsafe fn deallocate(&self, ptr: *mut u8, size: usize) {
        (**self).deallocate(ptr, size)
    }
}

unsafe impl<A: HostAllocator> HostAllocator for Box<A> {
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8 {
        (**self).allocate(size, alignment)
    }

    unsafe fn deallocate(&self, ptr: *mut u8, size: usize) {
        (**self).deallocate(ptr, size)
    }
}

unsafe extern "C" fn log_trampoline(user_data: *mut c_void, level: sys::cairn_log_level, message: *const c_char) {
    // SAFETY: user_data is the runtime's Arc<LogCallback>, alive until log_release.
    let log = &*(user_data as *const LogCallback);
    let level = LogLevel::from_raw(level).unwrap_or(LogLevel::Error);
    let message = if message.is_null() { "".into() } else { CStr::from_ptr(message).to_string_lossy() };
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| (log.callback)(level, &message))) {
        discard_panic(payload);
    }
}

unsafe extern "C" fn log_release_trampoline(user_data: *mut c_void) {
    // SAFETY: called once, with the reference Handoff::new made for the runtime.
    release_arc::<LogCallback>(user_data)
}

unsafe extern "C" fn release_trampoline<A: HostAllocator>(user_data: *mut c_void) {
    // SAFETY: as above, for the allocator's Arc<A>.
    release_arc::<A>(user_data)
}

/// Drops the runtime's reference; the state goes with the last one. Its destructor may panic:
/// that is caught too.
unsafe fn release_arc<T>(user_data: *mut c_void) {
    let state = Arc::from_raw(user_data as *const T);
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(state))) {
        discard_panic(payload);
    }
}

unsafe extern "C" fn allocate_trampoline<A: HostAllocator>(
    user_data: *mut c_void,
    size: usize,
    alignment: usize,
) -> *mut c_void {
    // SAFETY: user_data is the runtime's Arc<A>, alive until release (after the last deallocate).
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
pub(crate) fn discard_panic(payload: Box<dyn Any + Send>) {
    if let Err(again) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}
