//! Device configuration (tf.config): physical devices and their memory heaps, visible devices,
//! memory growth, splitting a physical device into logical devices, thread counts, and each
//! logical device's memory counts. The methods are on [`Context`]; this module holds the value
//! types.
//!
//! Configure a context right after creating it: its devices initialize at its first tensor, op,
//! device lookup or [`Context::logical_devices`], and from then on every setter fails with
//! [`Code::FailedPrecondition`](crate::Code::FailedPrecondition) saying so (TensorFlow's "cannot
//! be modified after being initialized").
//!
//! ```
//! use cairn::devices::LogicalDeviceConfig;
//! use cairn::{ops, Code, Context, Tensor};
//!
//! # fn main() -> Result<(), cairn::Error> {
//! let ctx = Context::new()?;
//! // Two logical CPU devices, the second capped at 4 KiB.
//! ctx.set_logical_devices("cpu:0", &[LogicalDeviceConfig::new(), LogicalDeviceConfig::with_limit(4096)])?;
//! let x = Tensor::new(&ctx, &[0.0f32; 512], &[512])?; // 2 KiB on cpu:0
//! let y = x.copy_to_device(&ctx, "cpu:1")?;
//! assert_eq!(ctx.memory_info("cpu:1")?.current, 2048);
//! let _z = ops::add(&ctx, &y, &y)?; // fits
//! assert_eq!(ops::add(&ctx, &y, &y).unwrap_err().code(), Code::ResourceExhausted);
//! assert_eq!(ctx.set_threads(1, 1).unwrap_err().code(), Code::FailedPrecondition);
//! # Ok(())
//! # }
//! ```

use std::ffi::{c_char, CStr};
use std::ptr;

use cairn_sys as sys;

use crate::error::{c_string, check, take_string};
use crate::options::init;
use crate::{Context, Result};

/// One physical device (`cairn_physical_device_info`): the CPU ("cpu:0", always first) or a
/// Vulkan device ("vulkan:N", the driver's order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhysicalDevice {
    /// "cpu:0", "vulkan:0".
    pub name: String,
    /// "CPU" or "VULKAN" (the C struct's `type`).
    pub kind: String,
    /// "x86_64, 2 cores"; a Vulkan device's driver name.
    pub description: String,
    /// "cpu" for the host; for Vulkan "discrete", "integrated", "virtual", "cpu" or "other".
    pub device_type: String,
    /// Bytes the device may hold: RAM, or the largest device-local heap's budget.
    pub memory: u64,
    /// Compute queues; the logical devices of a split device take one each where there are several.
    pub queues: u32,
    /// Its memory heaps, budgets and usage as queried now.
    pub heaps: Vec<MemoryHeap>,
}

/// One memory heap of a physical device (`cairn_memory_heap`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryHeap {
    /// Bytes.
    pub size: u64,
    /// Bytes the process may use now: the driver's `VK_EXT_memory_budget` figure where it is
    /// sane, else the size.
    pub budget: u64,
    /// Bytes the process uses (0 where the driver does not say).
    pub usage: u64,
    /// Device-local memory (always true for the CPU's heap).
    pub device_local: bool,
}

/// One logical device of a split physical device (`cairn_logical_device_config`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogicalDeviceConfig {
    /// Bytes its tensors may hold; 0 (the default): no limit.
    pub memory_limit: u64,
}

impl LogicalDeviceConfig {
    /// A logical device without a memory limit.
    pub fn new() -> LogicalDeviceConfig {
        LogicalDeviceConfig::default()
    }

    /// A logical device whose tensors may hold at most `bytes`.
    pub fn with_limit(bytes: u64) -> LogicalDeviceConfig {
        LogicalDeviceConfig { memory_limit: bytes }
    }
}

/// One logical device, what tensors live on (`cairn_logical_device_info`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogicalDevice {
    /// "cpu", "cpu:1", "vulkan:0".
    pub name: String,
    /// The physical device it is made from.
    pub physical: String,
    /// Bytes; 0: no limit.
    pub memory_limit: u64,
}

/// A logical device's memory (`cairn_memory_info`, tf.config.experimental.get_memory_info).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes held by its tensors now.
    pub current: u64,
    /// The most held since creation or the last [`Context::reset_memory_stats`].
    pub peak: u64,
    /// Its memory limit; 0: none.
    pub limit: u64,
    /// Bytes it may use now: RAM on the CPU, the driver's live budget on Vulkan.
    pub budget: u64,
}

/// A borrowed C string (valid for the process's life) as an owned one; "" for NULL.
fn borrowed(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        // SAFETY: the library's device strings are NUL-terminated and live as long as the process.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }
}

impl Context {
    /// The physical devices, the CPU first, each with its heaps. Listing loads the Vulkan driver
    /// but does not initialize the context's devices.
    pub fn physical_devices(&self) -> Result<Vec<PhysicalDevice>> {
        let mut n = 0usize;
        // SAFETY: the context is live; `n` receives the count.
        unsafe { check(sys::cairn_context_physical_device_count(self.as_raw(), &mut n))? };
        (0..n).map(|i| self.physical_device(i)).collect()
    }

    fn physical_device(&self, index: usize) -> Result<PhysicalDevice> {
        let mut info = init(sys::cairn_physical_device_info_init)?;
        // SAFETY: the context is live; `info` is initialized (struct_size set) and filled here.
        unsafe { check(sys::cairn_context_physical_device(self.as_raw(), index, &mut info))? };
        let heaps = (0..info.num_heaps as usize)
            .map(|h| {
                let mut heap = init(sys::cairn_memory_heap_init)?;
                // SAFETY: as above, for heap `h` of the device.
                unsafe { check(sys::cairn_context_physical_device_heap(self.as_raw(), index, h, &mut heap))? };
                Ok(MemoryHeap {
                    size: heap.size,
                    budget: heap.budget,
                    usage: heap.usage,
                    device_local: heap.device_local != 0,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(PhysicalDevice {
            name: borrowed(info.name),
            kind: borrowed(info.r#type),
            description: borrowed(info.description),
            device_type: borrowed(info.device_type),
            memory: info.memory,
            queues: info.queues,
            heaps,
        })
    }

    /// Makes only these physical devices (and the CPU, always) visible: logical devices are made
    /// from them. An empty list hides every Vulkan device. The environment variable
    /// `CAIRN_VISIBLE_DEVICES` ("cpu:0,vulkan:1") does the same when a context is created.
    /// `NotFound` naming an unknown device, `FailedPrecondition` once the devices are initialized.
    pub fn set_visible_devices(&self, names: &[&str]) -> Result<()> {
        let names =
            names.iter().map(|n| c_string(n, "Context::set_visible_devices", "device")).collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let array = if pointers.is_empty() { ptr::null() } else { pointers.as_ptr() };
        // SAFETY: the context is live; the names outlive the call.
        unsafe { check(sys::cairn_context_set_visible_devices(self.as_raw(), array, pointers.len())) }
    }

    /// The visible physical devices, e.g. `["cpu:0", "vulkan:0"]`.
    pub fn visible_devices(&self) -> Result<Vec<String>> {
        // SAFETY: the context is live; `out` receives a string take_string frees.
        let list = take_string(|out| unsafe { sys::cairn_context_visible_devices(self.as_raw(), out) })?;
        Ok(list.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect())
    }

    /// Memory growth of a Vulkan physical device: true (the default) allocates as tensors need
    /// memory; false reserves each of its logical devices' memory limit (or most of the budget
    /// without one) when the device is created. `InvalidArgument` for the CPU, `NotFound` for an
    /// unknown device, `FailedPrecondition` once the devices are initialized.
    pub fn set_memory_growth(&self, physical: &str, grow: bool) -> Result<()> {
        let physical = c_string(physical, "Context::set_memory_growth", "device")?;
        // SAFETY: the context is live; the name outlives the call.
        unsafe { check(sys::cairn_context_set_memory_growth(self.as_raw(), physical.as_ptr(), grow as i32)) }
    }

    /// The memory growth setting of a physical device (true for the CPU).
    pub fn memory_growth(&self, physical: &str) -> Result<bool> {
        let physical = c_string(physical, "Context::memory_growth", "device")?;
        let mut out = 0;
        // SAFETY: the context is live; the name outlives the call; `out` receives the setting.
        unsafe { check(sys::cairn_context_memory_growth(self.as_raw(), physical.as_ptr(), &mut out))? };
        Ok(out != 0)
    }

    /// Splits physical device `physical` ("cpu:0", "vulkan:0") into one logical device per
    /// config (1 to 64), to run multi-device code on one device; a single config sets a memory
    /// limit for the whole device. The CPU's become "cpu:0".."cpu:N-1"; Vulkan's are numbered
    /// across the visible Vulkan devices. `InvalidArgument` for a count out of range or limits
    /// above the device's memory (alone or added up), `NotFound` for an unknown device,
    /// `FailedPrecondition` when the device was configured already or the devices are initialized.
    pub fn set_logical_devices(&self, physical: &str, configs: &[LogicalDeviceConfig]) -> Result<()> {
        let physical = c_string(physical, "Context::set_logical_devices", "device")?;
        let raw = configs
            .iter()
            .map(|c| {
                let mut raw = init(sys::cairn_logical_device_config_init)?;
                raw.memory_limit = c.memory_limit;
                Ok(raw)
            })
            .collect::<Result<Vec<_>>>()?;
        let array = if raw.is_empty() { ptr::null() } else { raw.as_ptr() };
        // SAFETY: the context is live; the name and the configs outlive the call.
        unsafe { check(sys::cairn_context_set_logical_devices(self.as_raw(), physical.as_ptr(), array, raw.len())) }
    }

    /// The logical devices, the CPU's first. This initializes the devices, which closes the
    /// configuration.
    pub fn logical_devices(&self) -> Result<Vec<LogicalDevice>> {
        let mut n = 0usize;
        // SAFETY: the context is live; `n` receives the count.
        unsafe { check(sys::cairn_context_logical_device_count(self.as_raw(), &mut n))? };
        (0..n)
            .map(|i| {
                let mut info = init(sys::cairn_logical_device_info_init)?;
                // SAFETY: the context is live; `info` is initialized and filled here.
                unsafe { check(sys::cairn_context_logical_device(self.as_raw(), i, &mut info))? };
                Ok(LogicalDevice {
                    name: borrowed(info.name),
                    physical: borrowed(info.physical),
                    memory_limit: info.memory_limit,
                })
            })
            .collect()
    }

    /// Sets the thread counts: intra-op (one op's work, counting the caller) and inter-op
    /// (independent work such as a mirrored strategy's replicas); 0 = all cores.
    /// `InvalidArgument` outside 0..=4096, `FailedPrecondition` once the devices are initialized.
    pub fn set_threads(&self, intra_op: i32, inter_op: i32) -> Result<()> {
        // SAFETY: the context is live.
        unsafe { check(sys::cairn_context_set_threads(self.as_raw(), intra_op, inter_op)) }
    }

    /// The thread counts set, `(intra_op, inter_op)`; 0 = all cores.
    pub fn threads(&self) -> Result<(i32, i32)> {
        let (mut intra, mut inter) = (0, 0);
        // SAFETY: the context is live; both receive a count.
        unsafe { check(sys::cairn_context_threads(self.as_raw(), &mut intra, &mut inter))? };
        Ok((intra, inter))
    }

    /// The memory of logical device `device` ("cpu", "cpu:1", "vulkan:0"), creating it if needed.
    /// `NotFound` for an unknown device.
    pub fn memory_info(&self, device: &str) -> Result<MemoryInfo> {
        let device = c_string(device, "Context::memory_info", "device")?;
        let mut info = init(sys::cairn_memory_info_init)?;
        // SAFETY: the context is live; the name outlives the call; `info` is initialized.
        unsafe { check(sys::cairn_context_memory_info(self.as_raw(), device.as_ptr(), &mut info))? };
        Ok(MemoryInfo { current: info.current, peak: info.peak, limit: info.limit, budget: info.budget })
    }

    /// Sets the device's peak to its current use. `NotFound` for an unknown device.
    pub fn reset_memory_stats(&self, device: &str) -> Result<()> {
        let device = c_string(device, "Context::reset_memory_stats", "device")?;
        // SAFETY: the context is live; the name outlives the call.
        unsafe { check(sys::cairn_context_reset_memory_stats(self.as_raw(), device.as_ptr())) }
    }

    /// Whether the context's devices are initialized (the configuration is then closed).
    pub fn devices_initialized(&self) -> Result<bool> {
        let mut out = 0;
        // SAFETY: the context is live; `out` receives the flag.
        unsafe { check(sys::cairn_context_devices_initialized(self.as_raw(), &mut out))? };
        Ok(out != 0)
    }
}
