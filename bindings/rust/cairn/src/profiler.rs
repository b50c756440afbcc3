//! The profiler (tf.profiler, tf.summary.trace_on / trace_export), process-wide: while on, each
//! eager op, each node of a function replay (and each replay) and, on Vulkan, each batch of GPU
//! work records its name, device, start and duration. Export as Chrome trace-event JSON
//! (Perfetto, chrome://tracing) or into a TensorBoard log directory. docs/profiler.md has the
//! details.
//!
//! ```no_run
//! use cairn::profiler::{self, ProfilerOptions};
//! # fn main() -> cairn::Result<()> {
//! profiler::start(ProfilerOptions::new())?;
//! // ... run ops ...
//! let profile = profiler::stop()?;
//! for event in profile.events() {
//!     println!("{} on {}: {} ns", event.name, event.device, event.duration_ns);
//! }
//! profile.export_to_logdir("logs", Some("run1"))?; // TensorBoard's profile plugin
//! # Ok(())
//! # }
//! ```

use std::ffi::{c_char, CStr};
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::checkpoint::{c_path, take_c_path};
use crate::error::{c_string, check, take_string};
use crate::options::init;
use crate::{Code, Error, Result};

/// Options of [`start`]; unset fields keep cairn.h's defaults: 1,000,000 events kept, Vulkan GPU
/// timestamps on.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProfilerOptions {
    max_events: Option<u64>,
    vulkan_timestamps: Option<bool>,
}

impl ProfilerOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Events kept (> 0); later ones are counted as dropped.
    pub fn max_events(mut self, n: u64) -> Self {
        self.max_events = Some(n);
        self
    }

    /// GPU timestamps on Vulkan devices that support them.
    pub fn vulkan_timestamps(mut self, on: bool) -> Self {
        self.vulkan_timestamps = Some(on);
        self
    }
}

/// Turns the profiler on for the whole process, clearing what an earlier profile left.
/// FAILED_PRECONDITION when it is already on; INVALID_ARGUMENT for max_events 0.
pub fn start(options: ProfilerOptions) -> Result<()> {
    let mut raw = init(sys::cairn_profiler_options_init)?;
    if let Some(n) = options.max_events {
        raw.max_events = n;
    }
    if let Some(on) = options.vulkan_timestamps {
        raw.vulkan_timestamps = on.into();
    }
    // SAFETY: the options are borrowed for the call.
    unsafe { check(sys::cairn_profiler_start(&raw)) }
}

/// Whether the profiler is on.
pub fn active() -> bool {
    // SAFETY: no arguments.
    crate::check_abi().is_ok() && unsafe { sys::cairn_profiler_active() } != 0
}

/// Turns the profiler off and hands over what it recorded, events sorted by start.
/// FAILED_PRECONDITION when it is off.
pub fn stop() -> Result<Profile> {
    crate::check_abi()?;
    let mut out = ptr::null_mut();
    // SAFETY: `out` receives a new profile.
    unsafe { check(sys::cairn_profiler_stop(&mut out))? };
    NonNull::new(out)
        .map(|raw| Profile { raw })
        .ok_or_else(|| Error::new(Code::Internal, "cairn_profiler_stop: returned success but no profile"))
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileEvent {
    /// The op ("Add"), replayed node ("MatMul_3"), function, or GPU batch.
    pub name: String,
    /// "eager", "graph", "function" or "gpu".
    pub category: String,
    /// "cpu", "vulkan:0", ...
    pub device: String,
    /// Start in nanoseconds from [`start`].
    pub start_ns: i64,
    /// Duration in nanoseconds.
    pub duration_ns: i64,
}

/// A stopped profile. `Send + Sync` (read-only).
pub struct Profile {
    raw: NonNull<sys::cairn_profile>,
}

// SAFETY: a stopped profile is immutable; the C API only reads it.
unsafe impl Send for Profile {}
unsafe impl Sync for Profile {}

impl Profile {
    /// How many events the profile holds.
    pub fn event_count(&self) -> usize {
        let mut n = 0;
        // SAFETY: a live profile (here and below); fails only for NULL arguments.
        let _ = unsafe { check(sys::cairn_profile_event_count(self.raw.as_ptr(), &mut n)) };
        n
    }

    /// How many events were dropped because max_events were already kept.
    pub fn dropped(&self) -> u64 {
        let mut n = 0;
        let _ = unsafe { check(sys::cairn_profile_dropped(self.raw.as_ptr(), &mut n)) };
        n
    }

    /// Event `index`; OUT_OF_RANGE for an index >= the event count.
    pub fn event(&self, index: usize) -> Result<ProfileEvent> {
        let (mut name, mut category, mut device): (*const c_char, *const c_char, *const c_char) =
            (ptr::null(), ptr::null(), ptr::null());
        let (mut start_ns, mut duration_ns) = (0, 0);
        // SAFETY: the strings live as long as the profile; copied at once.
        unsafe {
            check(sys::cairn_profile_event(
                self.raw.as_ptr(),
                index,
                &mut name,
                &mut category,
                &mut device,
                &mut start_ns,
                &mut duration_ns,
            ))?
        };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        Ok(ProfileEvent { name: text(name), category: text(category), device: text(device), start_ns, duration_ns })
    }

    /// Every event, sorted by start.
    pub fn events(&self) -> impl Iterator<Item = ProfileEvent> + '_ {
        (0..self.event_count()).filter_map(|i| self.event(i).ok())
    }

    /// The profile as Chrome trace-event JSON.
    pub fn chrome_trace(&self) -> Result<String> {
        take_string(|out| unsafe { sys::cairn_profile_chrome_trace(self.raw.as_ptr(), out) })
    }

    /// Writes the Chrome trace-event JSON to `path`. UNAVAILABLE naming the path.
    pub fn export_chrome_trace(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref(), "Profile::export_chrome_trace", "path")?;
        unsafe { check(sys::cairn_profile_export_chrome_trace(self.raw.as_ptr(), path.as_ptr())) }
    }

    /// Writes the trace gzipped where TensorBoard's profile plugin looks,
    /// `<logdir>/plugins/profile/<run_name>/<hostname>.trace.json.gz`, and returns that path.
    /// `run_name` `None`: the date and time. INVALID_ARGUMENT for a run name with '/'.
    pub fn export_to_logdir(&self, logdir: impl AsRef<Path>, run_name: Option<&str>) -> Result<PathBuf> {
        let logdir = c_path(logdir.as_ref(), "Profile::export_to_logdir", "logdir")?;
        let run = run_name.map(|r| c_string(r, "Profile::export_to_logdir", "run_name")).transpose()?;
        let mut out = ptr::null_mut();
        // SAFETY: borrowed for the call; `out` receives a path we free.
        unsafe {
            check(sys::cairn_profile_export_to_logdir(
                self.raw.as_ptr(),
                logdir.as_ptr(),
                run.as_ref().map_or(ptr::null(), |r| r.as_ptr()),
                &mut out,
            ))?;
            Ok(take_c_path(out))
        }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_profile {
        self.raw.as_ptr()
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed only here.
        unsafe { sys::cairn_profile_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile").field("events", &self.event_count()).field("dropped", &self.dropped()).finish()
    }
}
