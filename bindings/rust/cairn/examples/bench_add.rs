//! Per-call overhead of a 16-element float32 Add: through the safe binding (`ops::add`), and
//! through the raw cairn-sys calls for comparison. Run with
//! `cargo run --release --example bench_add [iterations [binding|raw]]`; naming one variant runs
//! only its loop and prints nothing, for instruction counts under callgrind.

use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use cairn::{ops, sys, Context, Tensor};

const ROUNDS: u32 = 40;

fn main() -> Result<(), cairn::Error> {
    let iterations: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(4_000_000);
    let only = std::env::args().nth(2);
    // One intra-op thread: 16 elements never go to the pool, and the figure is the call overhead.
    let ctx = Context::with_options(cairn::ContextOptions::new().num_threads(1))?;
    let data: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let x = Tensor::new(&ctx, &data, &[16])?;
    let y = Tensor::new(&ctx, &data, &[16])?;

    let mut binding = || {
        black_box(ops::add(&ctx, &x, &y).unwrap());
    };
    let mut raw = || unsafe {
        let inputs = [x.as_raw(), y.as_raw()];
        let mut out = [ptr::null_mut(); 1];
        let status =
            sys::cairn_op_run(ctx.as_raw(), c"Add".as_ptr(), inputs.as_ptr(), 2, ptr::null(), 0, out.as_mut_ptr(), 1);
        assert!(status.is_null());
        sys::cairn_tensor_free(black_box(out[0]));
    };
    match only.as_deref() {
        Some("binding") => {
            time_batch(iterations, &mut binding);
            return Ok(());
        }
        Some("raw") => {
            time_batch(iterations, &mut raw);
            return Ok(());
        }
        _ => {}
    }
    // Alternate short batches of the two and keep each one's fastest batch, so that load from
    // other processes affects both alike and mostly drops out.
    let batch = (iterations / ROUNDS).max(1);
    let (mut best_binding, mut best_raw) = (f64::INFINITY, f64::INFINITY);
    time_batch(batch, &mut binding);
    time_batch(batch, &mut raw);
    for _ in 0..ROUNDS {
        best_binding = best_binding.min(time_batch(batch, &mut binding));
        best_raw = best_raw.min(time_batch(batch, &mut raw));
    }
    let (binding, raw) = (best_binding, best_raw);

    println!("ops::add (safe binding), 16 x float32: {binding:.1} ns/op");
    println!("cairn_op_run via cairn-sys, 16 x float32: {raw:.1} ns/op");
    println!("binding overhead: {:.1} ns/op (fastest of {ROUNDS} alternating batches of {batch})", binding - raw);
    Ok(())
}

/// ns per call of `iterations` calls.
fn time_batch(iterations: u32, f: &mut impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    start.elapsed().as_nanos() as f64 / f64::from(iterations)
}
