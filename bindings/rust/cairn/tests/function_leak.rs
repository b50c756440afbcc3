//! Compiled functions keep resident memory flat: 100,000 functions created, traced, replayed and
//! dropped (the closure released through the C API's hook), and 100,000 failing traces (the
//! closure's kept error and the status that stops the trace, both freed). One test in its own
//! binary (as tests/leak.rs), so no other test allocates while it measures.

use std::time::{Duration, Instant};

use cairn::{ops, Code, Context, Error, Function, Tensor};

mod common;
use common::assert_flat;

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
