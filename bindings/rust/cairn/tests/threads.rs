//! One context used from several threads at once; tensors shared and moved between threads.

use std::sync::Arc;
use std::thread;

use cairn::ops::{self, MatMulAttrs};
use cairn::{Context, ContextOptions, Tensor};

#[test]
fn one_context_from_many_threads() {
    let ctx = Context::with_options(ContextOptions::new().num_threads(2)).unwrap();
    let shared = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|k| {
                let (ctx, shared) = (&ctx, &shared);
                s.spawn(move || {
                    let mine = Tensor::new(ctx, &[k as f32; 4], &[2, 2]).unwrap();
                    for _ in 0..500 {
                        let sum = ops::add(ctx, shared, &mine).unwrap();
                        let k = k as f32;
                        assert_eq!(sum.to_vec::<f32>().unwrap(), [1.0 + k, 2.0 + k, 3.0 + k, 4.0 + k]);
                        let p = ops::mat_mul(ctx, shared, &sum, MatMulAttrs::default()).unwrap();
                        assert_eq!(p.shape(), [2, 2]);
                    }
                    mine // a tensor made on this thread goes back to the spawning one
                })
            })
            .collect();
        for (k, h) in handles.into_iter().enumerate() {
            assert_eq!(h.join().unwrap().to_vec::<f32>().unwrap(), [k as f32; 4]);
        }
    });
}

#[test]
fn context_in_an_arc_outlived_by_tensors_on_other_threads() {
    let ctx = Arc::new(Context::new().unwrap());
    let workers: Vec<_> = (0..4i32)
        .map(|k| {
            let ctx = Arc::clone(&ctx);
            thread::spawn(move || {
                let t = Tensor::new(&ctx, &[k, k], &[2]).unwrap();
                ops::add(&ctx, &t, &t).unwrap()
            })
        })
        .collect();
    drop(ctx); // the threads may still hold the last reference
    for (k, w) in workers.into_iter().enumerate() {
        let k = k as i32;
        assert_eq!(w.join().unwrap().to_vec::<i32>().unwrap(), [2 * k, 2 * k]);
    }
}
