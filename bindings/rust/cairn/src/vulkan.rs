//! The Vulkan backend: availability, the device list, Vulkan settings of a context, the CPU
//! fallback counter and synchronization.

use std::ffi::{c_void, CStr};
use std::ptr;

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::options::{init, set_fields};
use crate::{Context, Result, VulkanDeviceType};

/// Whether a Vulkan loader and driver report at least one device. Never fails: false when no
/// libcairn can be loaded either.
pub fn available() -> bool {
    // SAFETY: no arguments, no state.
    crate::check_abi().is_ok() && unsafe { sys::cairn_vulkan_available() == 1 }
}

/// The number of Vulkan devices ("vulkan:0" .. "vulkan:N-1"); `Unavailable` without a driver.
pub fn device_count() -> Result<usize> {
    crate::check_abi()?;
    let mut n = 0usize;
    // SAFETY: `n` receives the count.
    unsafe { check(sys::cairn_vulkan_device_count(&mut n))? };
    Ok(n)
}

/// One Vulkan physical device (`cairn_vulkan_device_info`); `index` N is the device "vulkan:N".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VulkanDevice {
    /// N in "vulkan:N".
    pub index: usize,
    /// The driver's device name.
    pub name: String,
    /// `None` for a type this binding does not know.
    pub device_type: Option<VulkanDeviceType>,
    /// `VK_MAKE_API_VERSION` encoding; see [`VulkanDevice::api_version_triple`].
    pub api_version: u32,
    /// Bytes in device-local heaps.
    pub device_local_memory: u64,
    /// Bytes in all heaps.
    pub total_memory: u64,
    /// Threads per subgroup (warp, wavefront).
    pub subgroup_size: u32,
    /// Reductions use subgroup operations.
    pub subgroup_arithmetic: bool,
    /// float16 tensors have kernels (16-bit storage).
    pub float16: bool,
    /// The largest tensor in bytes.
    pub max_storage_buffer_range: u64,
    /// Bytes of workgroup shared memory.
    pub max_shared_memory: u32,
}

impl VulkanDevice {
    /// The name contexts and tensors use for the device, "vulkan:N".
    pub fn device_name(&self) -> String {
        format!("vulkan:{}", self.index)
    }

    /// The API version as (major, minor, patch).
    pub fn api_version_triple(&self) -> (u32, u32, u32) {
        let v = self.api_version;
        ((v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff)
    }
}

/// Describes device `index`: `OutOfRange` past the last device, `Unavailable` without a driver.
pub fn describe(index: usize) -> Result<VulkanDevice> {
    let mut info = init(sys::cairn_vulkan_device_info_init)?;
    // SAFETY: `info` is initialized (struct_size set); the library fills it.
    unsafe { check(sys::cairn_vulkan_device_describe(index, &mut info))? };
    let name = if info.name.is_null() {
        String::new()
    } else {
        // SAFETY: the name is borrowed from the library for the process's life.
        unsafe { CStr::from_ptr(info.name) }.to_string_lossy().into_owned()
    };
    Ok(VulkanDevice {
        index,
        name,
        device_type: VulkanDeviceType::from_raw(info.r#type),
        api_version: info.api_version,
        device_local_memory: info.device_local_memory,
        total_memory: info.total_memory,
        subgroup_size: info.subgroup_size,
        subgroup_arithmetic: info.subgroup_arithmetic != 0,
        float16: info.float16 != 0,
        max_storage_buffer_range: info.max_storage_buffer_range,
        max_shared_memory: info.max_shared_memory,
    })
}

/// Every Vulkan device in index order; `Unavailable` without a driver (check [`available`]
/// first to read that as "no devices").
pub fn devices() -> Result<Vec<VulkanDevice>> {
    (0..device_count()?).map(describe).collect()
}

/// The Vulkan settings of a context (`cairn_vulkan_options`). Settings not made keep cairn.h's
/// defaults (`cairn_vulkan_options_init`): Cairn's own instance and device, no memory limit, no CPU
/// fallback.
#[derive(Clone, Copy, Debug, Default)]
pub struct VulkanOptions {
    memory_limit: Option<u64>,
    cpu_fallback: Option<bool>,
    external: Option<External>,
}

/// The handles of [`VulkanOptions::external`].
#[derive(Clone, Copy, Debug)]
struct External {
    instance: *mut c_void,
    physical_device: *mut c_void,
    device: *mut c_void,
    queue_family: u32,
    queue: *mut c_void,
}

// SAFETY: the external handles are opaque Vulkan objects Cairn only hands to the driver; the
// caller of `external` promised they stay valid (see there).
unsafe impl Send for VulkanOptions {}
unsafe impl Sync for VulkanOptions {}

impl VulkanOptions {
    /// cairn.h's defaults.
    pub fn new() -> VulkanOptions {
        VulkanOptions::default()
    }

    /// Bytes of device memory each Vulkan device of the context may hold; 0 (default) = no limit.
    /// Going past it fails with `ResourceExhausted`.
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// Ops without a Vulkan kernel for their dtype run on the CPU (inputs and outputs copied;
    /// counted by [`Context::vulkan_fallback_count`]) instead of failing with `Unimplemented`.
    pub fn cpu_fallback(mut self, on: bool) -> Self {
        self.cpu_fallback = Some(on);
        self
    }

    /// Experimental (the external-device fields of `cairn_vulkan_options` may change): external
    /// mode, an engine's own VkInstance, VkPhysicalDevice, VkDevice and VkQueue (of
    /// `queue_family`), cast to pointers. Set all four or none (the C API refuses a partial set).
    /// Cairn destroys none of them and runs only 32-bit dtypes there.
    ///
    /// # Safety
    /// The handles must be valid Vulkan objects of one instance that outlive every context made
    /// with these options, and the engine must not use the queue from another thread while Cairn
    /// records work on it.
    pub unsafe fn external(
        mut self,
        instance: *mut c_void,
        physical_device: *mut c_void,
        device: *mut c_void,
        queue_family: u32,
        queue: *mut c_void,
    ) -> Self {
        self.external = Some(External { instance, physical_device, device, queue_family, queue });
        self
    }

    /// The C struct, for `sys::cairn_context_create_vulkan`: `cairn_vulkan_options_init`, then the
    /// settings made here.
    pub fn to_raw(&self) -> Result<sys::cairn_vulkan_options> {
        let mut raw = init(sys::cairn_vulkan_options_init)?;
        set_fields!(raw, self, { memory_limit, cpu_fallback });
        if let Some(e) = self.external {
            (raw.instance, raw.physical_device, raw.device) = (e.instance, e.physical_device, e.device);
            (raw.queue_family, raw.queue) = (e.queue_family, e.queue);
        }
        Ok(raw)
    }
}

impl Context {
    /// How many op calls on the context's Vulkan device `device` (`None`: the default device) ran
    /// on the CPU through [`VulkanOptions::cpu_fallback`]. `InvalidArgument` for a device that is
    /// not a Vulkan device, `NotFound` for an unknown one.
    pub fn vulkan_fallback_count(&self, device: Option<&str>) -> Result<u64> {
        let device = device.map(|d| c_string(d, "Context::vulkan_fallback_count", "device")).transpose()?;
        let mut n = 0u64;
        // SAFETY: the context is live; the device string outlives the call.
        unsafe {
            check(sys::cairn_vulkan_fallback_count(
                self.as_raw(),
                device.as_ref().map_or(ptr::null(), |d| d.as_ptr()),
                &mut n,
            ))?
        };
        Ok(n)
    }

    /// Waits until the work queued on every device of the context has finished. Vulkan records
    /// eager ops and submits them in batches; reading a tensor waits by itself, so this is for
    /// timing and for handing results to an engine sharing the device.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the context is live.
        unsafe { check(sys::cairn_context_synchronize(self.as_raw())) }
    }
}
