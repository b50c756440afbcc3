//! The profiler: process-wide, so this binary has one test. Eager ops and a compiled function's
//! replay are recorded; the profile's events, Chrome trace JSON, its file and the TensorBoard
//! profile plugin's file; max_events drops; start twice and stop when off fail.

use std::path::Path;

use cairn::profiler::{self, ProfilerOptions};
use cairn::{ops, Code, Context, Function, Tensor};

#[test]
fn profiler_records_exports_and_refuses_misuse() {
    let ctx = Context::new().unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("profiler-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let x = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    let mut double = Function::new(&ctx, "double", |ctx, x| Ok(vec![ops::add(ctx, &x[0], &x[0])?])).unwrap();
    double.call(&[&x]).unwrap(); // traced before the profile starts

    assert_eq!(profiler::stop().unwrap_err().code(), Code::FailedPrecondition);
    assert!(!profiler::active());
    profiler::start(ProfilerOptions::new()).unwrap();
    assert!(profiler::active());
    assert_eq!(profiler::start(ProfilerOptions::new()).unwrap_err().code(), Code::FailedPrecondition);
    ops::mul(&ctx, &x, &x).unwrap();
    double.call(&[&x]).unwrap(); // replayed
    let profile = profiler::stop().unwrap();
    assert!(!profiler::active());

    let events: Vec<_> = profile.events().collect();
    assert_eq!(events.len(), profile.event_count());
    assert_eq!(profile.dropped(), 0);
    let mul = events.iter().find(|e| e.name == "Mul").unwrap_or_else(|| panic!("no Mul in {events:#?}"));
    assert_eq!((mul.category.as_str(), mul.device.as_str()), ("eager", "cpu"));
    assert!(mul.duration_ns >= 0 && mul.start_ns >= 0);
    assert!(events.iter().any(|e| e.category == "graph"), "{events:#?}");
    assert!(events.iter().any(|e| e.category == "function"), "{events:#?}");
    assert!(events.windows(2).all(|w| w[0].start_ns <= w[1].start_ns), "sorted by start");
    assert_eq!(profile.event(events.len()).unwrap_err().code(), Code::OutOfRange);

    let json = profile.chrome_trace().unwrap();
    assert!(json.contains("traceEvents") && json.contains("\"Mul\""), "{json}");
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.json");
    profile.export_chrome_trace(&trace).unwrap();
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), json);
    let gz = profile.export_to_logdir(dir.join("logs"), Some("run1")).unwrap();
    assert!(gz.starts_with(dir.join("logs/plugins/profile/run1")), "{}", gz.display());
    assert!(gz.to_str().unwrap().ends_with(".trace.json.gz") && gz.exists(), "{}", gz.display());
    let err = profile.export_to_logdir(dir.join("logs"), Some("a/b")).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = profile.export_chrome_trace(dir.join("missing/dir/trace.json")).unwrap_err();
    assert!(err.message().contains("missing/dir"), "{err}");

    // max_events: later events are counted, not kept.
    profiler::start(ProfilerOptions::new().max_events(2).vulkan_timestamps(false)).unwrap();
    for _ in 0..5 {
        ops::mul(&ctx, &x, &x).unwrap();
    }
    let small = profiler::stop().unwrap();
    assert_eq!(small.event_count(), 2);
    assert_eq!(small.dropped(), 3);
    assert_eq!(profiler::start(ProfilerOptions::new().max_events(0)).unwrap_err().code(), Code::InvalidArgument);
    std::fs::remove_dir_all(&dir).unwrap();
}
