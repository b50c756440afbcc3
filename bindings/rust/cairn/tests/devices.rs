//! Device configuration (tf.config) from Rust: physical devices and heaps, a CPU split into two
//! logical devices with a memory limit, memory counts and the limit refusing an allocation,
//! configuration closed after the first tensor, and the errors of bad input.

use cairn::devices::{LogicalDevice, LogicalDeviceConfig};
use cairn::{ops, Code, Context, Error, Tensor};

fn expect_err<T: std::fmt::Debug>(result: cairn::Result<T>, code: Code, fragment: &str) -> Error {
    let err = result.unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    assert!(err.message().contains(fragment), "{err:?} does not contain {fragment:?}");
    err
}

#[test]
fn physical_devices_are_listed() {
    let ctx = Context::new().unwrap();
    let devices = ctx.physical_devices().unwrap();
    let cpu = &devices[0];
    assert_eq!((cpu.name.as_str(), cpu.kind.as_str(), cpu.device_type.as_str()), ("cpu:0", "CPU", "cpu"));
    assert!(cpu.memory > 0 && cpu.queues == 1 && !cpu.description.is_empty(), "{cpu:?}");
    assert_eq!(cpu.heaps.len(), 1);
    let heap = cpu.heaps[0];
    assert!(heap.size == cpu.memory && heap.budget == cpu.memory && heap.device_local, "{heap:?}");
    // A Vulkan device appears where a driver is installed (lavapipe on the test machines); none is required.
    for d in &devices[1..] {
        assert!(d.kind == "VULKAN" && d.name.starts_with("vulkan:") && d.queues >= 1 && !d.heaps.is_empty(), "{d:?}");
        for h in &d.heaps {
            assert!(h.size > 0 && h.budget <= h.size && h.usage <= h.budget, "{}: {h:?}", d.name);
        }
    }
    let visible = ctx.visible_devices().unwrap();
    assert_eq!(visible, devices.iter().map(|d| d.name.clone()).collect::<Vec<_>>());
    assert!(ctx.memory_growth("cpu:0").unwrap());
    // Listing physical devices does not initialize the logical ones.
    assert!(!ctx.devices_initialized().unwrap());
}

#[test]
fn split_cpu_counts_memory_and_enforces_the_limit() {
    let ctx = Context::new().unwrap();
    ctx.set_logical_devices("cpu:0", &[LogicalDeviceConfig::new(), LogicalDeviceConfig::with_limit(4096)]).unwrap();
    expect_err(
        ctx.set_logical_devices("cpu:0", &[LogicalDeviceConfig::new(); 2]),
        Code::FailedPrecondition,
        "already configured as 2 logical device(s)",
    );
    let logical = ctx.logical_devices().unwrap(); // initializes
    assert!(logical.len() >= 2 && logical[0].name == "cpu:0", "{logical:?}");
    assert_eq!(logical[1], LogicalDevice { name: "cpu:1".into(), physical: "cpu:0".into(), memory_limit: 4096 });
    assert!(ctx.devices_initialized().unwrap());

    let a = Tensor::new(&ctx, &[0.0f32; 256], &[256]).unwrap(); // 1 KiB
    assert_eq!(a.device(), "cpu:0");
    let b = a.copy_to_device(&ctx, "cpu:1").unwrap();
    assert_eq!(b.device(), "cpu:1");
    let info = ctx.memory_info("cpu:1").unwrap();
    assert!(info.current == 1024 && info.peak == 1024 && info.limit == 4096 && info.budget > 0, "{info:?}");
    // Three more KiB fit under the 4 KiB limit; a fifth is refused.
    let sums: Vec<Tensor> = (0..3).map(|_| ops::add(&ctx, &b, &b).unwrap()).collect();
    assert!(sums.iter().all(|s| s.device() == "cpu:1"));
    expect_err(
        ops::add(&ctx, &b, &b),
        Code::ResourceExhausted,
        "cpu:1: allocating 1024 bytes would pass the device's memory limit of 4096",
    );
    drop(sums);
    let info = ctx.memory_info("cpu:1").unwrap();
    assert_eq!((info.current, info.peak), (1024, 4096));
    ctx.reset_memory_stats("cpu:1").unwrap();
    assert_eq!(ctx.memory_info("cpu:1").unwrap().peak, 1024);
    expect_err(ctx.memory_info("cpu:2"), Code::NotFound, "cpu:0, cpu:1");
    expect_err(ctx.reset_memory_stats("tpu"), Code::NotFound, "tpu");
}

#[test]
fn configuration_is_closed_after_the_first_tensor() {
    let ctx = Context::new().unwrap();
    ctx.set_threads(1, 3).unwrap();
    assert_eq!(ctx.threads().unwrap(), (1, 3));
    ctx.set_visible_devices(&[]).unwrap(); // the CPU only
    assert_eq!(ctx.visible_devices().unwrap(), ["cpu:0"]);
    let _t = Tensor::new(&ctx, &[1.0f32], &[1]).unwrap();
    assert!(ctx.devices_initialized().unwrap());
    expect_err(
        ctx.set_logical_devices("cpu:0", &[LogicalDeviceConfig::new()]),
        Code::FailedPrecondition,
        "cannot be modified after",
    );
    expect_err(ctx.set_visible_devices(&[]), Code::FailedPrecondition, "already initialized");
    expect_err(ctx.set_threads(2, 2), Code::FailedPrecondition, "cairn_context_set_threads");
    let logical = ctx.logical_devices().unwrap();
    assert_eq!(logical.len(), 1, "Vulkan is hidden: {logical:?}");
    assert_eq!(logical[0].name, "cpu");
}

#[test]
fn bad_configuration_is_refused() {
    let ctx = Context::new().unwrap();
    expect_err(
        ctx.set_logical_devices("cpu:0", &[LogicalDeviceConfig::with_limit(1 << 62)]),
        Code::InvalidArgument,
        "is more than",
    );
    expect_err(ctx.set_logical_devices("cpu:0", &[]), Code::InvalidArgument, "give 1 to 64");
    expect_err(ctx.set_logical_devices("gpu:0", &[LogicalDeviceConfig::new()]), Code::NotFound, "gpu:0");
    expect_err(ctx.set_visible_devices(&["cpu:0", "npu:0"]), Code::NotFound, "npu:0");
    expect_err(ctx.set_memory_growth("cpu:0", false), Code::InvalidArgument, "applies to Vulkan devices");
    expect_err(ctx.set_threads(-2, 0), Code::InvalidArgument, "thread counts");
    expect_err(ctx.memory_growth("cpu\0"), Code::InvalidArgument, "NUL");
    // None of these initialized the devices.
    assert!(!ctx.devices_initialized().unwrap());
}

/// Splitting a Vulkan device where one is installed (lavapipe on the test machines; nothing to
/// check without one): two logical devices with their own limits, a tensor copied between them
/// and counted on each, and memory growth read back.
#[test]
fn split_vulkan_where_present() {
    let ctx = Context::new().unwrap();
    if ctx.physical_devices().unwrap().len() < 2 {
        eprintln!("no Vulkan device: nothing to split");
        return;
    }
    ctx.set_visible_devices(&["vulkan:0"]).unwrap();
    ctx.set_memory_growth("vulkan:0", true).unwrap();
    ctx.set_logical_devices(
        "vulkan:0",
        &[LogicalDeviceConfig::with_limit(1 << 20), LogicalDeviceConfig::with_limit(2 << 20)],
    )
    .unwrap();
    assert!(ctx.memory_growth("vulkan:0").unwrap());
    let logical = ctx.logical_devices().unwrap();
    let names: Vec<_> = logical.iter().map(|d| (d.name.as_str(), d.physical.as_str(), d.memory_limit)).collect();
    assert_eq!(names, [("cpu", "cpu:0", 0), ("vulkan:0", "vulkan:0", 1 << 20), ("vulkan:1", "vulkan:0", 2 << 20)]);
    let x = Tensor::new(&ctx, &[0.0f32; 256], &[256]).unwrap();
    let on0 = x.copy_to_device(&ctx, "vulkan:0").unwrap();
    let on1 = on0.copy_to_device(&ctx, "vulkan:1").unwrap();
    assert_eq!(on1.device(), "vulkan:1");
    for (name, limit) in [("vulkan:0", 1 << 20), ("vulkan:1", 2 << 20)] {
        let info = ctx.memory_info(name).unwrap();
        assert_eq!((info.current, info.limit), (1024, limit), "{name}: {info:?}");
    }
    assert_eq!(on1.to_vec::<f32>().unwrap(), vec![0.0f32; 256]);
}
