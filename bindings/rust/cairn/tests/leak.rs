//! Creating and freeing 100,000 tensors (and op results, and errors) keeps resident memory flat,
//! whether handles are dropped explicitly or by going out of scope. One test in its own binary, so
//! no other test allocates while it measures.

use std::time::{Duration, Instant};

use cairn::{ops, Context, Tensor};

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
fn resident_memory_stays_flat() {
    let start = Instant::now();
    let ctx = Context::new().unwrap();
    let data = [1.0f32; 256]; // 1 kB a tensor: a leak would be 100 MB
    let x = Tensor::new(&ctx, &data, &[16, 16]).unwrap();

    assert_flat("explicit drop", || {
        let t = Tensor::new(&ctx, &data, &[16, 16]).unwrap();
        drop(t);
    });
    assert_flat("scope drop", || {
        let _t = Tensor::new(&ctx, &data, &[256]).unwrap();
    });
    assert_flat("op results", || {
        let sum = ops::add(&ctx, &x, &x).unwrap();
        std::hint::black_box(&sum);
    });
    assert_flat("errors", || {
        let bad = Tensor::new(&ctx, &data, &[3]).unwrap_err();
        std::hint::black_box(&bad);
    });
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
}
