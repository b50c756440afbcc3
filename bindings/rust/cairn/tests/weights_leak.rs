//! Weights in other formats keep resident memory flat: 100,000 readers over a safetensors file
//! and a TensorFlow export (format, type names, metadata, checksums, string elements, a value),
//! and 100,000 loads by name with their options' strings, plus the errors of a missing file and a
//! mismatched load (their statuses freed). The files are written once. One test in its own binary
//! (as tests/leak.rs), so no other test allocates while it measures.

use cairn::{
    Checkpoint, CheckpointReader, Context, ExportOptions, Module, Tensor, Variable, VariableOptions, WeightsFormat,
    WeightsOptions,
};

mod common;
use common::assert_flat;

#[test]
fn weights_keep_resident_memory_flat() {
    let ctx = Context::new().unwrap();
    let data = [0.5f32; 256]; // 1 kB a value: a leaked copy would be 100 MB
    let m = Module::new(&ctx, "m").unwrap();
    let w = Tensor::new(&ctx, &data, &[16, 16]).unwrap();
    m.set("w", Variable::with_options(&ctx, &w, VariableOptions::new().name("w").scope(&m)).unwrap()).unwrap();
    let wrong = Module::new(&ctx, "wrong").unwrap();
    wrong.set("w", Variable::new(&ctx, &Tensor::new(&ctx, &data, &[256]).unwrap()).unwrap()).unwrap();

    let dir = std::env::temp_dir().join(format!("cairn-rust-weights-leak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let st = dir.join("m.safetensors");
    let names = || WeightsOptions::new().prefix("m.").separator(".");
    m.save_weights(&st, WeightsFormat::Safetensors, names().metadata("format", "pt")).unwrap();
    let tf = dir.join("tf");
    Checkpoint::new(&ctx, &[("m", &m)]).unwrap().export(&tf, WeightsFormat::Tf, ExportOptions::new()).unwrap();

    assert_flat("readers", || {
        let reader = CheckpointReader::open(&st).unwrap();
        std::hint::black_box((reader.format(), reader.type_name(0), reader.metadata(), reader.verify("m.w").unwrap()));
        std::hint::black_box(reader.load(&ctx, "m.w").unwrap());
        let reader = CheckpointReader::open(&tf).unwrap();
        std::hint::black_box(reader.load_string_element("_CHECKPOINTABLE_OBJECT_GRAPH", 0).unwrap());
    });
    assert_flat("loads by name, and errors", || {
        assert_eq!(m.load_weights(&st, names()).unwrap(), 1);
        std::hint::black_box(m.load_weights(dir.join("missing"), names()).unwrap_err());
        std::hint::black_box(wrong.load_weights(&st, names()).unwrap_err());
    });
    std::fs::remove_dir_all(&dir).unwrap();
}
