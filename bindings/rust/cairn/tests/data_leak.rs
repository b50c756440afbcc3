//! Input pipelines keep resident memory flat: 100,000 pipelines with an eager map closure built,
//! iterated (elements and their tensors dropped) and dropped (the closure released through the C
//! API's hook), and 100,000 failing elements (the closure's error and its status, both freed).
//! One test in its own binary (as tests/leak.rs), so no other test allocates while it measures.

use cairn::data::{ComponentSpec, Dataset, MapOptions};
use cairn::{Code, Context, DType, Error, Tensor};

mod common;
use common::assert_flat;

#[test]
fn pipelines_keep_resident_memory_flat() {
    let ctx = Context::new().unwrap();
    let spec = [ComponentSpec::new("v", DType::Float32, &[256])];
    let source = Dataset::range(&ctx, 0, 2, 1).unwrap();
    assert_flat("pipelines built, iterated and dropped", || {
        let owned = vec![0u8; 1024]; // 1 kB the closure owns: a closure never released would be 100 MB
        let mapped = source
            .map(
                "fill",
                move |ctx, _| {
                    std::hint::black_box(&owned);
                    Ok(vec![Tensor::new(ctx, &[1.0f32; 256], &[256])?]) // 1 kB a tensor
                },
                MapOptions::new().compile(false).output_specs(&spec),
            )
            .unwrap();
        let batches = mapped.batch(2, false).unwrap();
        for element in batches.iterate().unwrap() {
            std::hint::black_box(element.unwrap());
        }
    });
    let failing = source
        .map("fails", |_, _| Err(Error::new(Code::Aborted, "no")), MapOptions::new().compile(false).output_specs(&spec))
        .unwrap();
    let it = failing.repeat(None).unwrap().iterate().unwrap();
    assert_flat("failing elements", || {
        std::hint::black_box(it.get_next().unwrap_err());
    });
}
