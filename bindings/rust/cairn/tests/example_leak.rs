//! tf.train.Example and batched parsing keep resident memory flat: 100,000 examples built,
//! serialized, parsed and read back, and 100,000 batches parsed into tensors (every output
//! freed), plus failing parses (their statuses freed). One test in its own binary (as
//! tests/leak.rs), so no other test allocates while it measures.

use cairn::{parse_examples, Context, DType, Example, Feature, FeatureSpec};

mod common;
use common::assert_flat;

#[test]
fn examples_keep_resident_memory_flat() {
    let ctx = Context::new().unwrap();
    let pixels = [0.5f32; 256]; // 1 kB a feature: a leaked copy would be 100 MB
    let tag = [7u8; 1024];
    let mut ex = Example::new().unwrap();
    ex.set_floats("pixels", &pixels).unwrap();
    ex.set_bytes("tag", &[&tag[..]]).unwrap();
    let record = ex.serialize().unwrap();
    assert_flat("examples built, serialized, parsed and read", || {
        let mut ex = Example::new().unwrap();
        ex.set_floats("pixels", &pixels).unwrap();
        ex.set_bytes("tag", &[&tag[..]]).unwrap();
        let back = Example::parse(&ex.serialize().unwrap()).unwrap();
        let Feature::Bytes(b) = back.feature("tag").unwrap() else { panic!() };
        std::hint::black_box((b, back.keys()));
    });
    let specs = [FeatureSpec::fixed_len("pixels", DType::Float32, &[256]), FeatureSpec::var_len("tag", DType::Uint8)];
    let missing = [FeatureSpec::fixed_len("absent", DType::Float32, &[])];
    assert_flat("batches parsed into tensors, and failing parses", || {
        std::hint::black_box(parse_examples(&ctx, &[&record, &record], &specs).unwrap());
        std::hint::black_box(parse_examples(&ctx, &[&record], &missing).unwrap_err());
    });
}
