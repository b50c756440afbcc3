//! The Vulkan section on lavapipe (Mesa's CPU Vulkan driver, installed on the test machines): the
//! device list, Vulkan contexts, the memory limit, the CPU fallback and its counter, and a small
//! network giving the same numbers on "cpu" and "vulkan".

use std::ptr;
use std::sync::{Arc, Mutex};

use cairn::ops::{self, MeanAttrs, SoftmaxAttrs};
use cairn::{sys, vulkan, Code, Context, ContextOptions, LogLevel, Tensor, VulkanDeviceType, VulkanOptions};

#[test]
fn devices_are_listed() {
    assert!(vulkan::available(), "lavapipe should be installed");
    let devices = vulkan::devices().unwrap();
    assert!(!devices.is_empty());
    for (i, d) in devices.iter().enumerate() {
        assert_eq!((d.index, d.device_name()), (i, format!("vulkan:{i}")));
        assert!(!d.name.is_empty(), "device {i} has no name");
        assert!(d.total_memory > 0 && d.device_local_memory <= d.total_memory, "{d:?}");
        assert!(d.subgroup_size >= 1 && d.max_storage_buffer_range >= 1 << 20 && d.max_shared_memory >= 16384, "{d:?}");
        let (major, minor, _) = d.api_version_triple();
        assert!(major == 1 && minor >= 1, "API version {:?}", d.api_version_triple());
    }
    assert_eq!(devices[0].device_type, Some(VulkanDeviceType::Cpu), "lavapipe is a CPU device");
    assert_eq!(vulkan::device_count().unwrap(), devices.len());
}

#[test]
fn bad_device_index_is_an_error() {
    let n = vulkan::device_count().unwrap();
    let err = vulkan::describe(n).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert!(err.message().contains("Vulkan device(s)"), "{err}");
    let err = Context::with_options(ContextOptions::new().device(&format!("vulkan:{n}"))).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains(&format!("vulkan:{n}")), "{err}");
}

#[test]
fn fallback_count_and_synchronize_on_a_vulkan_context() {
    let ctx = Context::with_options(ContextOptions::new().device("vulkan")).unwrap();
    assert_eq!(ctx.device(), "vulkan:0");
    assert_eq!(ctx.vulkan_fallback_count(None).unwrap(), 0);
    assert_eq!(ctx.vulkan_fallback_count(Some("vulkan:0")).unwrap(), 0);
    let err = ctx.vulkan_fallback_count(Some("cpu")).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("not a Vulkan device"), "{err}");
    assert_eq!(ctx.vulkan_fallback_count(Some("vulkan:9")).unwrap_err().code(), Code::NotFound);
    assert_eq!(ctx.vulkan_fallback_count(Some("vul\0kan")).unwrap_err().code(), Code::InvalidArgument);
    ctx.synchronize().unwrap();

    // Without the fallback, float64 (no Vulkan kernels) is refused with a clear error.
    let x = Tensor::new(&ctx, &[1.5f64, -2.5], &[2]).unwrap();
    let err = ops::neg(&ctx, &x).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented);
    assert!(err.message().contains("Neg: no Vulkan kernel for dtype float64"), "{err}");
}

fn with_vulkan(vk: &VulkanOptions) -> cairn::Result<Context> {
    Context::with_vulkan(ContextOptions::new(), vk)
}

#[test]
fn memory_limit_gives_resource_exhausted() {
    let ctx = with_vulkan(&VulkanOptions::new().memory_limit(2 << 20)).unwrap(); // 2 MiB
    assert_eq!(ctx.device(), "vulkan:0", "Vulkan settings make \"vulkan\" the default device");
    let big = vec![0.5f32; 300_000]; // 1.2 MB each
    let a = Tensor::new(&ctx, &big, &[300_000]).unwrap();
    assert_eq!(a.device(), "vulkan:0");
    let err = Tensor::new(&ctx, &big, &[300_000]).unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    assert!(err.message().contains("memory limit"), "{err}");
    drop(a); // frees its device memory, so the next one fits
    Tensor::new(&ctx, &big, &[300_000]).unwrap();
}

#[test]
fn cpu_fallback_is_counted() {
    let ctx = with_vulkan(&VulkanOptions::new().cpu_fallback(true)).unwrap();
    let x = Tensor::new(&ctx, &[1.5f64, -2.5], &[2]).unwrap();
    let before = ctx.vulkan_fallback_count(None).unwrap();
    let y = ops::neg(&ctx, &x).unwrap();
    assert_eq!(y.device(), "vulkan:0");
    assert_eq!(y.to_vec::<f64>().unwrap(), [-1.5, 2.5]);
    assert_eq!(ctx.vulkan_fallback_count(None).unwrap(), before + 1);
}

#[test]
fn context_options_reach_the_vulkan_constructor() {
    // Device "cpu" keeps the CPU as default; the Vulkan settings still apply to "vulkan:0".
    let logged = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&logged);
    let options = ContextOptions::new()
        .device("cpu")
        .log_level(LogLevel::Info)
        .log_callback(move |_, message| sink.lock().unwrap().push(message.to_string()));
    let ctx = Context::with_vulkan(options, &VulkanOptions::new().cpu_fallback(true)).unwrap();
    assert_eq!(ctx.device(), "cpu");
    assert_eq!(ctx.vulkan_fallback_count(Some("vulkan:0")).unwrap(), 0);
    drop(ctx);
    let logged = logged.lock().unwrap();
    assert!(logged.iter().any(|m| m.contains("context created: default device cpu")), "{logged:?}");
    let err = Context::with_vulkan(ContextOptions::new().device("vul\0kan"), &VulkanOptions::new()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().starts_with("Context::with_vulkan: device"), "{err}");
}

#[test]
fn options_are_checked_by_the_constructor() {
    let fake = 1usize as *mut std::ffi::c_void;
    // SAFETY: a partial set is refused before any handle is used.
    let partial = unsafe { VulkanOptions::new().external(ptr::null_mut(), ptr::null_mut(), fake, 0, ptr::null_mut()) };
    let err = with_vulkan(&partial).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("1 of 4 set"), "{err}");
    assert_eq!(
        VulkanOptions::new().to_raw().unwrap().struct_size as usize,
        std::mem::size_of::<sys::cairn_vulkan_options>()
    );
}

/// Two dense layers, a softmax and a mean-squared loss on `ctx`'s default device.
fn small_network(ctx: &Context) -> (Vec<f32>, f32) {
    let t = |v: &[f32], s: &[i64]| Tensor::new(ctx, v, s).unwrap();
    let x = t(
        &[0.1, -0.2, 0.3, 0.5, -1.0, 1.2, 0.7, -0.3, 0.2, 0.0, -0.4, 0.9, 0.8, -0.6, 0.25, 0.05, 0.3, -0.9, 1.1, -0.2],
        &[4, 5],
    );
    let w1 = t(
        &[
            0.2, -0.1, 0.4, 0.3, -0.5, 0.1, 0.7, 0.2, -0.3, 0.05, 0.6, -0.4, -0.2, 0.3, 0.1, 0.8, -0.6, 0.25, 0.15,
            -0.7, 0.45, -0.1, 0.3, 0.2, 0.5, 0.35, -0.25, 0.1, 0.9, -0.3,
        ],
        &[5, 6],
    );
    let b1 = t(&[0.01, -0.02, 0.03, 0.0, 0.05, -0.01], &[6]);
    let w2 = t(
        &[0.3, -0.2, 0.1, 0.5, 0.4, -0.6, -0.1, 0.2, 0.7, 0.25, -0.35, 0.15, 0.6, 0.1, -0.2, -0.4, 0.3, 0.05],
        &[6, 3],
    );
    let target = t(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0], &[4, 3]);
    let h = ops::mat_mul(ctx, &x, &w1, Default::default()).unwrap();
    let h = ops::relu(ctx, &ops::add(ctx, &h, &b1).unwrap()).unwrap();
    let logits = ops::mat_mul(ctx, &h, &w2, Default::default()).unwrap();
    let p = ops::softmax(ctx, &logits, SoftmaxAttrs { axis: Some(-1) }).unwrap();
    let d = ops::sub(ctx, &p, &target).unwrap();
    let loss = ops::mean(ctx, &ops::square(ctx, &d).unwrap(), MeanAttrs::default()).unwrap();
    assert_eq!((p.device(), loss.device()), (ctx.device(), ctx.device()));
    ctx.synchronize().unwrap();
    (p.to_vec::<f32>().unwrap(), loss.to_vec::<f32>().unwrap()[0])
}

#[test]
fn same_numbers_on_cpu_and_vulkan() {
    let cpu = Context::with_options(ContextOptions::new().device("cpu")).unwrap();
    let vk = Context::with_options(ContextOptions::new().device("vulkan")).unwrap();
    let (p_cpu, loss_cpu) = small_network(&cpu);
    let (p_vk, loss_vk) = small_network(&vk);
    for (i, (a, b)) in p_cpu.iter().zip(&p_vk).enumerate() {
        assert!((a - b).abs() <= 1e-5 * (1.0 + a.abs()), "probability {i}: cpu {a}, vulkan {b}");
    }
    for row in p_vk.chunks(3) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "softmax row {row:?}");
    }
    assert!(loss_cpu > 0.0 && (loss_cpu - loss_vk).abs() <= 1e-6, "loss: cpu {loss_cpu}, vulkan {loss_vk}");
    assert_eq!(vk.vulkan_fallback_count(None).unwrap(), 0);
}
