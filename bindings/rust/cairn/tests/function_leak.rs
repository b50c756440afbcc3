//! Compiled functions keep resident memory flat: 100,000 functions created, traced, replayed and
//! dropped (the closure released through the C API's hook), and 100,000 failing traces (the
//! closure's kept error and the status that stops the trace, both freed). One test in its own
//! binary (as tests/leak.rs), so no other test allocates while it measures.

use std::time::{Duration, Instant};

use cairn::{ops, Code, Context, Error, Function, Tensor};

const N: usize = 100_000;
const ALLOWED_GROWTH_KB: u64 = 8 * 1024;

fn resident_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn assert_flat(what: &str, mut round: impl FnMut()) {
    for _ in 0..N / 10 {
        round(); // warm up allocator caches and pools
    }
    let before = resident_kb();
    for _ in 0..N {
        round();
    }
    let after = resident_kb();
    assert!(
        after <= before + ALLOWED_GROWTH_KB,
        "{what}: resident memory grew from {before} kB to {after} kB over {N} rounds"
    );
    eprintln!("{what}: {before} kB -> {after} kB over {N} rounds");
}

#[test]
fn functions_keep_resident_memory_flat() {
    let start = Instant::now();
    let ctx = Context::new().unwrap();
    let data = [1.0f32; 256]; // 1 kB a tensor: a leaked constant or output would be 100 MB
    let x = Tensor::new(&ctx, &data, &[256]).unwrap();
    assert_flat("functions traced, replayed and dropped", || {
        let owned = vec![0u8; 1024]; // 1 kB the closure owns: a closure never released would be 100 MB
        let x = &x;
        let mut f = Function::new(&ctx, "f", move |ctx, v| {
            std::hint::black_box(&owned);
            Ok(vec![ops::add(ctx, &v[0], x)?])
        })
        .unwrap();
        std::hint::black_box(f.call(&[&x]).unwrap());
        std::hint::black_box(f.call(&[&x]).unwrap());
    });
    let mut failing = Function::new(&ctx, "failing", |_, _| Err(Error::new(Code::Aborted, "no"))).unwrap();
    assert_flat("failing traces", || {
        std::hint::black_box(failing.call(&[&x]).unwrap_err());
    });
    assert!(start.elapsed() < Duration::from_secs(30), "took {:?}", start.elapsed());
}
