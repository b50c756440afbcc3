//! Versions and the ABI check, context options and the log callback, error mapping, the registry.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cairn::{Code, Context, ContextOptions, DType, Error, LogLevel, Tensor};

#[test]
fn versions_and_abi() {
    assert_eq!(cairn::abi_version().unwrap(), cairn::ABI_VERSION);
    assert_eq!(cairn::ABI_VERSION, cairn::sys::CAIRN_ABI_VERSION);
    cairn::check_abi().unwrap();
    let v = cairn::version().unwrap();
    let parts: Vec<&str> = v.split('.').collect();
    assert_eq!(parts.len(), 3, "semantic version, got {v:?}");
    assert!(parts.iter().all(|p| p.parse::<u32>().is_ok()), "semantic version, got {v:?}");
    assert_eq!(env!("CARGO_PKG_VERSION"), v, "the crate's version follows the library's");
}

#[test]
fn default_context() {
    let ctx = Context::new().unwrap();
    assert_eq!(ctx.device(), "cpu");
    assert!(format!("{ctx:?}").contains("cpu"));
}

#[test]
fn context_options_are_applied() {
    let ctx = Context::with_options(ContextOptions::new().device("cpu").num_threads(2).seed(42)).unwrap();
    assert_eq!(ctx.device(), "cpu");
    let opts = ContextOptions::new().device("cpu:0").log_level(LogLevel::Error);
    assert!(format!("{opts:?}").contains("cpu:0"));
    assert_eq!(Context::with_options(opts).unwrap().device(), "cpu");
}

#[test]
fn unknown_and_missing_devices_are_errors() {
    let err = Context::with_options(ContextOptions::new().device("tpu")).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("\"tpu\""), "{err}");

    // This build has no Vulkan backend; with one, the context would be made instead.
    match Context::with_options(ContextOptions::new().device("vulkan")) {
        Ok(ctx) => assert!(ctx.device().starts_with("vulkan")),
        Err(err) => assert_eq!(err.code(), Code::Unavailable, "{err}"),
    }

    let err = Context::with_options(ContextOptions::new().device("c\0pu")).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("NUL"), "{err}");
}

#[test]
fn log_callback_receives_messages_at_the_chosen_level() {
    let seen = Arc::new(Mutex::new(Vec::<(LogLevel, String)>::new()));
    let sink = Arc::clone(&seen);
    let ctx = Context::with_options(
        ContextOptions::new()
            .num_threads(3)
            .log_level(LogLevel::Info)
            .log_callback(move |level, message| sink.lock().unwrap().push((level, message.to_string()))),
    )
    .unwrap();
    drop(ctx);
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter().any(|(level, m)| *level == LogLevel::Info && m.contains("context created") && m.contains("3")),
        "{seen:?}"
    );

    // At the default level (warnings), the informational message is not delivered.
    let quiet = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&quiet);
    let _ctx =
        Context::with_options(ContextOptions::new().log_callback(move |_, _| *counter.lock().unwrap() += 1)).unwrap();
    assert_eq!(*quiet.lock().unwrap(), 0);
}

#[test]
fn a_panicking_log_callback_never_unwinds_into_c() {
    let called = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&called);
    let ctx =
        Context::with_options(ContextOptions::new().log_level(LogLevel::Debug).log_callback(move |_, message| {
            flag.store(true, Ordering::SeqCst);
            panic!("callback panicked on {message}")
        }))
        .unwrap();
    assert!(called.load(Ordering::SeqCst), "the callback ran and panicked");
    // The context works after the caught panic.
    let t = Tensor::new(&ctx, &[1.0f32], &[1]).unwrap();
    assert_eq!(cairn::ops::neg(&ctx, &t).unwrap().to_vec::<f32>().unwrap(), [-1.0]);
}

#[test]
fn errors_carry_code_and_the_c_message() {
    let ctx = Context::new().unwrap();
    let a = Tensor::new(&ctx, &[0.0f32; 6], &[2, 3]).unwrap();
    let b = Tensor::new(&ctx, &[0.0f32; 4], &[4]).unwrap();
    let err = cairn::ops::add(&ctx, &a, &b).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "Add: incompatible shapes [2,3] and [4]");
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Add: incompatible shapes [2,3] and [4]");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err.clone());
    assert_eq!(boxed.to_string(), err.to_string());

    let err = cairn::ops::run(&ctx, "NoSuchOp", &[&a], &[]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("NoSuchOp"), "{err}");
}

#[test]
fn codes_and_dtypes_match_the_c_constants() {
    for code in Code::ALL {
        assert_eq!(Code::from_raw(code.to_raw()), Some(code));
    }
    assert_eq!(Code::InvalidArgument.to_raw(), 3);
    assert_eq!(Code::InvalidArgument.to_string(), "INVALID_ARGUMENT");
    assert_eq!(Code::from_raw(cairn::sys::CAIRN_CODE_FORCE32), None);
    assert_eq!(Error::new(Code::Aborted, "x").code(), Code::Aborted);

    assert_eq!(DType::Float16.to_raw(), 19);
    assert_eq!(DType::Bfloat16.name(), "bfloat16");
    assert_eq!(DType::Int64.size(), 8);
    assert_eq!(DType::Bool.size(), 1);
    assert_eq!(DType::Complex64.size(), 8);
    assert_eq!(DType::String.size(), 0);
    assert_eq!(DType::Invalid.name(), "invalid");
    assert_eq!(LogLevel::Warning.to_raw(), cairn::sys::CAIRN_LOG_WARNING);
}

#[test]
fn registry_lists_every_op() {
    let names = cairn::op_names().unwrap();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
    for op in ["Add", "MatMul", "Cast", "AddN"] {
        assert!(names.contains(&op), "{op} in {names:?}");
    }
    // Every generated wrapper's op is registered in the loaded library.
    for op in cairn::ops::OP_NAMES {
        assert!(names.contains(op), "{op} has a wrapper but is not registered");
    }
    let json = cairn::op_registry_json().unwrap();
    assert!(json.trim_start().starts_with('['), "{}", &json[..40.min(json.len())]);
    assert!(json.contains("\"MatMul\"") && json.contains("\"transpose_a\""));
}

#[test]
fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Context>();
    send_sync::<Tensor>();
    send_sync::<Error>();
    send_sync::<ContextOptions>();
}
