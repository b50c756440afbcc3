//! Control flow keeps resident memory flat: 100,000 rounds each of eager cond and while_loop,
//! of closures that fail (the status that carries the error to C, and results the binding drops
//! because their count is wrong, both freed), and of compiled functions with a loop traced,
//! replayed and dropped. One test in its own binary (as tests/leak.rs), so no other test
//! allocates while it measures.

use std::time::{Duration, Instant};

use cairn::{cond, ops, while_loop, Code, Context, Error, Function, Tensor};

mod common;
use common::assert_flat;

#[test]
fn control_flow_keeps_resident_memory_flat() {
    let start = Instant::now();
    let ctx = Context::new().unwrap();
    // 1 kB tensors and messages: leaking one per round would be 100 MB.
    let x = Tensor::new(&ctx, &[1.0f32; 256], &[256]).unwrap();
    let (zero, one, two) =
        (Tensor::scalar(&ctx, 0i32).unwrap(), Tensor::scalar(&ctx, 1i32).unwrap(), Tensor::scalar(&ctx, 2i32).unwrap());
    let truth = Tensor::scalar(&ctx, true).unwrap();
    let long_message = "x".repeat(1024);

    // while i < 2: (i, x) = (i + 1, x + x); then a cond on the result.
    let twice_doubled = |ctx: &Context, x: &Tensor| -> cairn::Result<Tensor> {
        let body = |ctx: &Context, v: &[Tensor]| Ok(vec![ops::add(ctx, &v[0], &one)?, ops::add(ctx, &v[1], &v[1])?]);
        let out = while_loop(ctx, |ctx, v| ops::less(ctx, &v[0], &two), body, &[&zero, x], None)?;
        let positive = ops::greater(ctx, &ops::sum(ctx, &out[1], Default::default())?, &Tensor::scalar(ctx, 0.0f32)?)?;
        let mut y = cond(
            ctx,
            &positive,
            &[&out[1]],
            |_, v| Ok(vec![v[0].clone()]),
            |ctx, v| Ok(vec![ops::neg(ctx, &v[0])?]),
            1,
        )?;
        Ok(y.remove(0))
    };
    assert_flat("eager cond and while_loop", || {
        std::hint::black_box(twice_doubled(&ctx, &x).unwrap());
    });

    assert_flat("failing closures", || {
        let fail = |_: &Context, _: &[Tensor]| -> cairn::Result<Vec<Tensor>> {
            Err(Error::new(Code::Aborted, long_message.as_str()))
        };
        let too_many = |ctx: &Context, v: &[Tensor]| Ok(vec![ops::add(ctx, &v[0], &v[0])?, v[0].clone()]);
        std::hint::black_box(cond(&ctx, &truth, &[&x], fail, fail, 1).unwrap_err());
        std::hint::black_box(cond(&ctx, &truth, &[&x], too_many, too_many, 1).unwrap_err());
    });

    assert_flat("functions with control flow traced, replayed and dropped", || {
        let mut f = Function::new(&ctx, "f", |ctx, v| Ok(vec![twice_doubled(ctx, &v[0])?])).unwrap();
        std::hint::black_box(f.call(&[&x]).unwrap());
        std::hint::black_box(f.call(&[&x]).unwrap());
    });
    assert!(start.elapsed() < Duration::from_secs(60), "took {:?}", start.elapsed());
}
