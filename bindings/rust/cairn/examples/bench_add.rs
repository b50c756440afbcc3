//! Per-call overhead of a 16-element float32 Add: through the safe binding (`ops::add`), and
//! through the raw cairn-sys calls for comparison. Run with
//! `cargo run --release --example bench_add [iterations]`.

use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use cairn::{ops, sys, Context, Tensor};

fn main() -> Result<(), cairn::Error> {
    let iterations: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    // One intra-op thread: 16 elements never go to the pool, and the figure is the call overhead.
    let ctx = Context::with_options(cairn::ContextOptions::new().num_threads(1))?;
    let data: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let x = Tensor::new(&ctx, &data, &[16])?;
    let y = Tensor::new(&ctx, &data, &[16])?;

    let binding = time(iterations, || {
        black_box(ops::add(&ctx, &x, &y).unwrap());
    });

    let raw = time(iterations, || unsafe {
        let inputs = [x.as_raw(), y.as_raw()];
        let mut out = [ptr::null_mut(); 1];
        let status =
            sys::cairn_op_run(ctx.as_raw(), c"Add".as_ptr(), inputs.as_ptr(), 2, ptr::null(), 0, out.as_mut_ptr(), 1);
        assert!(status.is_null());
        sys::cairn_tensor_free(black_box(out[0]));
    });

    println!("ops::add (safe binding), 16 x float32: {binding:.1} ns/op");
    println!("cairn_op_run via cairn-sys, 16 x float32: {raw:.1} ns/op");
    println!("binding overhead: {:.1} ns/op ({iterations} iterations, best of 5)", binding - raw);
    Ok(())
}

/// The best of five runs of `iterations` calls, in ns per call.
fn time(iterations: u32, mut f: impl FnMut()) -> f64 {
    for _ in 0..iterations / 10 {
        f();
    }
    (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(iterations)
        })
        .fold(f64::INFINITY, f64::min)
}
