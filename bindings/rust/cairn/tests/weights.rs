//! Weights in other formats: a model's weights by name through safetensors, TensorFlow and Cairn
//! files (`Object::save_weights` / `load_weights`), a checkpoint exported as TensorFlow and restored,
//! the committed goldens of tests/golden (a Keras 3 checkpoint written by TensorFlow, safetensors
//! files written by the reference package) through the reader and restore, the errors, and a round
//! trip with the `safetensors` crate (the reference implementation's Rust core) both ways.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use cairn::{
    Activation, Checkpoint, CheckpointReader, Code, Context, DType, DenseOptions, ExportOptions, Initializer, Layer,
    Module, Object, Optimizer, OptimizerOptions, Result, Sequential, Tensor, Variable, VariableOptions, WeightsFormat,
    WeightsOptions, BF16,
};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde_json::Value;

const VV: &str = "/.ATTRIBUTES/VARIABLE_VALUE";
const PATHS: [&str; 4] = ["layer-0/kernel", "layer-0/bias", "layer-1/kernel", "layer-1/bias"];

/// A fresh directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("cairn-rust-weights-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn golden(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/golden").join(path)
}

fn assert_err<T: std::fmt::Debug>(result: Result<T>, code: Code, needle: &str) {
    let err = result.unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    assert!(err.message().contains(needle), "{:?} does not contain {needle:?}", err.message());
}

/// Sequential [Dense(units, relu), Dense(3)] built on 8 inputs: the goldens' Keras model. Kernels
/// and biases are drawn from the context's stream, so two models of one context differ everywhere.
fn mlp(ctx: &Context, units: i64) -> Sequential {
    let model = Sequential::new(ctx, None).unwrap();
    let dense = |units| DenseOptions::new(units).bias_initializer(Initializer::RandomUniform);
    model.add(&Layer::dense(ctx, dense(units).activation(Activation::Relu)).unwrap()).unwrap();
    model.add(&Layer::dense(ctx, dense(3)).unwrap()).unwrap();
    model.call(&Tensor::new(ctx, &[0.0f32; 8], &[1, 8]).unwrap(), false).unwrap();
    model
}

/// Every weight's values, in PATHS order.
fn values(model: &Object) -> Vec<Vec<f32>> {
    PATHS
        .iter()
        .map(|p| Variable::try_from(model.get_path(p).unwrap()).unwrap().read().unwrap().to_vec().unwrap())
        .collect()
}

fn adam(ctx: &Context) -> Optimizer {
    Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(0.25)).unwrap()
}

/// One optimizer step with the same made-up gradients for every model: creates Adam's slots.
fn step(ctx: &Context, model: &Sequential, opt: &Optimizer, g: f32) {
    let weights = model.trainable_weights().unwrap();
    let grads: Vec<Option<Tensor>> = weights
        .iter()
        .map(|w| {
            let shape = w.shape().unwrap();
            let n = shape.iter().product::<i64>() as usize;
            let x: Vec<f32> = (0..n).map(|i| g * ((i % 7) as f32 - 0.5)).collect();
            Some(Tensor::new(ctx, &x, &shape).unwrap())
        })
        .collect();
    opt.apply_gradients(&grads, &weights).unwrap();
}

fn key_set(reader: &CheckpointReader) -> Vec<String> {
    reader.entries().into_iter().map(|e| e.key).collect()
}

fn index_of(reader: &CheckpointReader, key: &str) -> usize {
    reader.entries().iter().position(|e| e.key == key).unwrap_or_else(|| panic!("no key {key:?}"))
}

#[test]
fn save_and_load_by_name_in_each_format() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("formats");
    let src = mlp(&ctx, 16);
    for (format, name, type_name) in [
        (WeightsFormat::Safetensors, "w.safetensors", "F32"),
        (WeightsFormat::Tf, "w_tf", "float32"),
        (WeightsFormat::Cairn, "w.cairn", "float32"),
    ] {
        let dst = mlp(&ctx, 16);
        assert_ne!(values(&dst)[0], values(&src)[0]);
        assert_ne!(values(&dst)[1], values(&src)[1]);
        let path = dir.join(name);
        src.save_weights(&path, format, WeightsOptions::new())?;
        assert_eq!(dst.load_weights(&path, WeightsOptions::new())?, 4, "{format:?}");
        assert_eq!(values(&dst), values(&src), "{format:?}");

        let reader = CheckpointReader::open(&path)?;
        assert_eq!(reader.format(), format);
        let mut keys = key_set(&reader);
        keys.retain(|k| k != "_CHECKPOINTABLE_OBJECT_GRAPH"); // a Cairn file's (empty) object graph
        let mut want: Vec<String> = PATHS.iter().map(|p| p.to_string()).collect();
        want.sort();
        assert_eq!(keys, want, "{format:?}");
        let k = index_of(&reader, "layer-0/kernel");
        let entry = reader.entry(k).unwrap();
        assert_eq!((entry.dtype, entry.shape), (DType::Float32, vec![8, 16]));
        assert_eq!(reader.type_name(k), Some(type_name));
        assert_eq!(reader.type_name(reader.len()), None);
        assert!(reader.verify("layer-1/bias")?, "{format:?}: every format keeps a checksum by default");
        assert_eq!(reader.load(&ctx, "layer-1/kernel")?.to_vec::<f32>()?, values(&src)[2]);
        if format == WeightsFormat::Tf {
            assert!(dir.join("w_tf.index").exists() && dir.join("w_tf.data-00000-of-00001").exists());
        }
    }
    Ok(())
}

#[test]
fn prefix_separator_metadata_and_checksums() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("prefix");
    let (src, dst) = (mlp(&ctx, 16), mlp(&ctx, 16));
    let path = dir.join("pt.safetensors");
    let torch = || WeightsOptions::new().prefix("model.").separator(".");
    let note = "a \"quoted\" note\nwith a \\ and \u{1} and é漢";
    src.save_weights(&path, WeightsFormat::Safetensors, torch().metadata("format", "pt").metadata("note", note))?;

    let reader = CheckpointReader::open(&path)?;
    assert_eq!(
        key_set(&reader),
        ["model.layer-0.bias", "model.layer-0.kernel", "model.layer-1.bias", "model.layer-1.kernel"]
    );
    let metadata = reader.metadata();
    assert_eq!(metadata.get("format").map(String::as_str), Some("pt"));
    assert_eq!(metadata.get("note").map(String::as_str), Some(note));
    for key in key_set(&reader) {
        assert!(metadata.contains_key(&format!("cairn.checksum.{key}")), "{metadata:?}");
        assert!(reader.verify(&key)?, "{key}");
    }
    assert_eq!(metadata.len(), 6, "{metadata:?}");
    assert_err(reader.verify("nope"), Code::NotFound, "nope");

    assert_eq!(dst.load_weights(&path, torch())?, 4);
    assert_eq!(values(&dst), values(&src));
    // Without the prefix nothing matches: NOT_FOUND names the variables.
    assert_err(dst.load_weights(&path, WeightsOptions::new()), Code::NotFound, "'layer-0/kernel'");
    // Only the prefix: names keep '/' and do not match either.
    assert_err(dst.load_weights(&path, WeightsOptions::new().prefix("model.")), Code::NotFound, "'model.layer-1/bias'");

    // No checksums: no metadata at all, and verify says nothing was checked.
    let plain = dir.join("plain.safetensors");
    src.save_weights(&plain, WeightsFormat::Safetensors, torch().checksums(false))?;
    let reader = CheckpointReader::open(&plain)?;
    assert!(reader.metadata().is_empty());
    assert!(!reader.verify("model.layer-0.bias")?);
    assert_eq!(mlp(&ctx, 16).load_weights(&plain, torch())?, 4);

    // The TF and Cairn formats take the same names.
    for (format, name) in [(WeightsFormat::Tf, "pt_tf"), (WeightsFormat::Cairn, "pt.cairn")] {
        let dst = mlp(&ctx, 16);
        src.save_weights(dir.join(name), format, torch())?;
        assert!(key_set(&CheckpointReader::open(dir.join(name))?).contains(&"model.layer-1.kernel".to_string()));
        assert!(CheckpointReader::open(dir.join(name))?.metadata().is_empty(), "only safetensors has metadata");
        assert_eq!(dst.load_weights(dir.join(name), torch())?, 4);
        assert_eq!(values(&dst), values(&src));
    }

    // The binding refuses strings C cannot take; an empty separator is the library's error.
    assert_err(
        src.save_weights(&plain, WeightsFormat::Safetensors, torch().prefix("a\0b")),
        Code::InvalidArgument,
        "prefix",
    );
    assert_err(
        src.save_weights(&plain, WeightsFormat::Safetensors, torch().metadata("k\0", "v")),
        Code::InvalidArgument,
        "metadata",
    );
    assert_err(
        src.save_weights(&plain, WeightsFormat::Safetensors, torch().separator("")),
        Code::InvalidArgument,
        "separator",
    );
    Ok(())
}

#[test]
fn sharded_safetensors() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("sharded");
    let (src, dst) = (mlp(&ctx, 32), mlp(&ctx, 32));
    let shards = dir.join("shards");
    // Kernel 0 is 8 * 32 * 4 = 1024 bytes: a shard of its own, the other three share one.
    src.save_weights(&shards, WeightsFormat::Safetensors, WeightsOptions::new().max_shard_bytes(1024))?;
    let index = shards.join("model.safetensors.index.json");
    assert!(index.exists());
    let files = std::fs::read_dir(&shards)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "safetensors"))
        .count();
    assert_eq!(files, 2);
    let reader = CheckpointReader::open(&shards)?;
    assert_eq!((reader.format(), reader.len()), (WeightsFormat::Safetensors, 4));
    assert_eq!(dst.load_weights(&index, WeightsOptions::new())?, 4);
    assert_eq!(values(&dst), values(&src));
    Ok(())
}

#[test]
fn export_as_tensorflow_and_restore() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("export");
    let (m1, o1) = (mlp(&ctx, 16), adam(&ctx));
    step(&ctx, &m1, &o1, 1.0);
    step(&ctx, &m1, &o1, 0.5);
    let c1 = Checkpoint::new(&ctx, &[("model", &m1), ("optimizer", &o1)])?;
    let prefix = dir.join("ckpt");
    c1.export(&prefix, WeightsFormat::Tf, ExportOptions::new())?;
    assert!(dir.join("ckpt.index").exists() && dir.join("ckpt.data-00000-of-00001").exists());
    assert_eq!(c1.save_counter()?, 0, "export leaves save_counter alone");

    // Keras 3's layout: after training steps TensorFlow reaches the weights through the optimizer
    // (the shortest path) and Adam's m and v through its _variables, so the keys are the Keras
    // golden's (tests/golden/tf_checkpoint/keras3_mlp, the same model fitted with Adam), plus
    // save_counter.
    let reader = CheckpointReader::open(&prefix)?;
    assert_eq!(reader.format(), WeightsFormat::Tf);
    let keys = key_set(&reader);
    let mut keras = key_set(&CheckpointReader::open(golden("tf_checkpoint/keras3_mlp/ckpt"))?);
    keras.push(format!("save_counter{VV}"));
    assert_eq!(keys, keras);
    assert_eq!(reader.type_name(index_of(&reader, &format!("save_counter{VV}"))), Some("int64"));
    // The object graph is a string; its one element is what load_string gives.
    let graph = reader.load_string_element("_CHECKPOINTABLE_OBJECT_GRAPH", 0)?;
    assert!(!graph.is_empty());
    assert_eq!(graph, reader.load_string("_CHECKPOINTABLE_OBJECT_GRAPH")?);
    assert_err(reader.load_string_element("_CHECKPOINTABLE_OBJECT_GRAPH", 1), Code::InvalidArgument, "");
    assert!(reader.verify(&format!("save_counter{VV}"))?);

    // A fresh model and Adam restore it: weights and step at once, the slots on the first step.
    let (m2, o2) = (mlp(&ctx, 16), adam(&ctx));
    let c2 = Checkpoint::new(&ctx, &[("model", &m2), ("optimizer", &o2)])?;
    assert_ne!(values(&m2), values(&m1));
    let status = c2.restore(&prefix)?;
    status.assert_existing_objects_matched()?;
    assert_eq!(values(&m2), values(&m1));
    assert_eq!(o2.iterations()?, 2);
    assert_err(status.assert_consumed().map(|_| ()), Code::FailedPrecondition, "");
    // The same step on both: equal results only if m and v were restored too.
    step(&ctx, &m1, &o1, 0.25);
    step(&ctx, &m2, &o2, 0.25);
    status.assert_consumed()?;
    assert_eq!(values(&m2), values(&m1));
    for (w1, w2) in m1.trainable_weights()?.iter().zip(m2.trainable_weights()?.iter()) {
        for slot in ["m", "v"] {
            let (a, b) = (o1.slot(w1, slot)?.read()?.to_vec::<f32>()?, o2.slot(w2, slot)?.read()?.to_vec::<f32>()?);
            assert_eq!(a, b, "slot {slot}");
        }
    }

    // Cairn's edge names and no save_counter; the .index path restores the same.
    let names = dir.join("cairn_names");
    c1.export(&names, WeightsFormat::Tf, ExportOptions::new().keras_names(false).save_counter(false))?;
    let reader = CheckpointReader::open(dir.join("cairn_names.index"))?;
    let keys = key_set(&reader);
    assert!(keys.contains(&format!("model/layer-0/kernel{VV}")), "{keys:?}");
    assert!(!keys.contains(&format!("save_counter{VV}")), "{keys:?}");
    let (m3, o3) = (mlp(&ctx, 16), adam(&ctx));
    let c3 = Checkpoint::new(&ctx, &[("model", &m3), ("optimizer", &o3)])?;
    c3.restore(dir.join("cairn_names.index"))?.assert_existing_objects_matched()?.expect_partial(); // Adam's slots wait
    assert_eq!(values(&m3), values(&m1));

    // As safetensors: every value by its checkpoint key, no object graph, so no restore.
    let st = dir.join("ckpt.safetensors");
    c1.export(&st, WeightsFormat::Safetensors, ExportOptions::new())?;
    let keys = key_set(&CheckpointReader::open(&st)?);
    assert!(
        keys.contains(&format!("model/layer-1/bias{VV}")) && !keys.contains(&"_CHECKPOINTABLE_OBJECT_GRAPH".into())
    );
    assert_err(c3.restore(&st), Code::InvalidArgument, "load it by name");
    // As Cairn: loads by name under the "model/" prefix.
    c1.export(dir.join("ckpt.cairn"), WeightsFormat::Cairn, ExportOptions::new())?;
    let m4 = mlp(&ctx, 16);
    assert_eq!(m4.load_weights(dir.join("ckpt.cairn"), WeightsOptions::new().prefix("model/"))?, 4);
    assert_eq!(values(&m4), values(&m1));

    assert_err(c1.export(dir.join("x"), WeightsFormat::Auto, ExportOptions::new()), Code::InvalidArgument, "AUTO");
    assert_err(c1.export(dir.join("no/such/dir/ckpt"), WeightsFormat::Tf, ExportOptions::new()), Code::NotFound, "");
    Ok(())
}

// ---- The goldens ----

fn expected(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(golden(path)).unwrap()).unwrap()
}

/// Standard base64 (with padding), as expected.json holds raw bytes.
fn base64(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::new();
    for chunk in text.trim_end_matches('=').as_bytes().chunks(4) {
        let bits = chunk.iter().enumerate().fold(0u32, |acc, (i, &c)| acc | (u32::from(digit(c)) << (18 - 6 * i)));
        out.extend_from_slice(&bits.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[test]
fn base64_decodes() {
    assert_eq!(base64("aGVsbG8sIGNoZWNrcG9pbnQ="), b"hello, checkpoint");
    assert_eq!(base64("cjBjMA=="), b"r0c0");
    assert_eq!(base64(""), b"");
}

#[test]
fn golden_keras3_checkpoint_restores_into_sequential_and_adam() -> Result<()> {
    let ctx = Context::new()?;
    let prefix = golden("tf_checkpoint/keras3_mlp/ckpt");
    let want = expected("tf_checkpoint/expected.json");
    let entries = want["checkpoints"]["keras3_mlp"]["entries"].as_array().unwrap();

    // The reader lists what TensorFlow lists.
    let reader = CheckpointReader::open(&prefix)?;
    assert_eq!(reader.format(), WeightsFormat::Tf);
    assert_eq!(reader.len(), entries.len());
    assert!(reader.metadata().is_empty());
    for (i, e) in entries.iter().enumerate() {
        let got = reader.entry(i).unwrap();
        assert_eq!(got.key, e["key"].as_str().unwrap());
        assert_eq!(reader.type_name(i), e["dtype"].as_str());
        let shape: Vec<i64> = e["shape"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
        assert_eq!(got.shape, shape, "{}", got.key);
        assert!(reader.verify(&got.key)?, "{}", got.key);
        if let Some(raw) = e["raw_b64"].as_str() {
            assert_eq!(reader.load(&ctx, &got.key)?.to_bytes()?, base64(raw), "{}", got.key);
        }
    }

    // The Cairn twin: Sequential Dense(16, relu), Dense(3) with Adam, as tf.train.Checkpoint(model=, optimizer=).
    let (model, opt) = (mlp(&ctx, 16), adam(&ctx));
    let ckpt = Checkpoint::new(&ctx, &[("model", &model), ("optimizer", &opt)])?;
    let status = ckpt.restore(&prefix)?;
    status.assert_existing_objects_matched()?;
    assert_eq!(opt.iterations()?, 4); // one epoch of 4 batches
    assert!((opt.learning_rate()? - 0.01).abs() < 1e-6);
    let golden_values = |key: String| reader.load(&ctx, &key).unwrap().to_vec::<f32>().unwrap();
    let tv = |i: usize| golden_values(format!("optimizer/_trainable_variables/{i}{VV}"));
    assert_eq!(values(&model), (0..4).map(tv).collect::<Vec<_>>());
    // Adam's m and v wait for the slots the first step creates.
    assert_err(status.assert_consumed().map(|_| ()), Code::FailedPrecondition, "optimizer/_variables/");
    step(&ctx, &model, &opt, 0.0); // a zero gradient scales m by beta_1 and v by beta_2
    status.assert_consumed()?;
    for (i, w) in model.trainable_weights()?.iter().enumerate() {
        let m = golden_values(format!("optimizer/_variables/{}{VV}", 2 + 2 * i));
        let v = golden_values(format!("optimizer/_variables/{}{VV}", 3 + 2 * i));
        let (got_m, got_v) = (opt.slot(w, "m")?.read()?.to_vec::<f32>()?, opt.slot(w, "v")?.read()?.to_vec::<f32>()?);
        assert_eq!((got_m.len(), got_v.len()), (m.len(), v.len()));
        for j in 0..m.len() {
            assert!(
                (got_m[j] - 0.9 * m[j]).abs() <= 1e-5 * m[j].abs().max(1e-3),
                "m[{i}][{j}]: {} vs {}",
                got_m[j],
                m[j]
            );
            assert!(
                (got_v[j] - 0.999 * v[j]).abs() <= 1e-5 * v[j].abs().max(1e-6),
                "v[{i}][{j}]: {} vs {}",
                got_v[j],
                v[j]
            );
        }
    }

    // By name it matches nothing: TensorFlow's keys follow the object graph, not the model's paths.
    assert_err(mlp(&ctx, 16).load_weights(&prefix, WeightsOptions::new()), Code::NotFound, "'layer-0/kernel'");
    // A model of other shapes: INVALID_ARGUMENT naming the key and its shape.
    let wide = mlp(&ctx, 17);
    let ckpt = Checkpoint::new(&ctx, &[("model", &wide), ("optimizer", &adam(&ctx))])?;
    assert_err(
        ckpt.restore(&prefix),
        Code::InvalidArgument,
        "optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE' is float32[8,16] in the checkpoint",
    );
    // A TF1 checkpoint has no object graph (NOT_FOUND), a missing one is NOT_FOUND too.
    assert_err(ckpt.restore(golden("tf_checkpoint/tf1_saver/model.ckpt")), Code::NotFound, "name-based (TF1)");
    assert_err(ckpt.restore(golden("tf_checkpoint/nowhere/ckpt")), Code::NotFound, "");
    Ok(())
}

#[test]
fn golden_tensorflow_strings_and_dtypes_through_the_reader() -> Result<()> {
    let ctx = Context::new()?;
    let want = expected("tf_checkpoint/expected.json");
    let reader = CheckpointReader::open(golden("tf_checkpoint/dtypes_strings/ckpt"))?;
    assert_eq!(reader.format(), WeightsFormat::Tf);
    let mut strings = 0;
    for (i, e) in want["checkpoints"]["dtypes_strings"]["entries"].as_array().unwrap().iter().enumerate() {
        let key = e["key"].as_str().unwrap();
        assert_eq!(reader.entry(i).unwrap().key, key);
        assert_eq!(reader.type_name(i), e["dtype"].as_str(), "{key}");
        if let Some(elements) = e["strings_b64"].as_array() {
            assert_eq!(reader.entry(i).unwrap().dtype, DType::String);
            for (j, s) in elements.iter().enumerate() {
                assert_eq!(reader.load_string_element(key, j)?, base64(s.as_str().unwrap()), "{key}[{j}]");
            }
            assert_err(reader.load_string_element(key, elements.len()), Code::InvalidArgument, "past the");
            strings += 1;
        } else if let Some(raw) = e["raw_b64"].as_str() {
            if reader.entry(i).unwrap().dtype == DType::Invalid {
                // uint16 and complex128: listed with TensorFlow's name, not loadable.
                assert_err(reader.load(&ctx, key), Code::Unimplemented, key);
            } else {
                assert_eq!(reader.load(&ctx, key)?.to_bytes()?, base64(raw), "{key}");
            }
        }
    }
    assert_eq!(strings, 4);
    assert_eq!(reader.load_string_element(&format!("m/s_matrix{VV}"), 3)?, b"r1c0");
    assert_err(reader.load_string_element(&format!("m/i8{VV}"), 0), Code::InvalidArgument, "not a string");
    assert_err(reader.load_string_element("nope", 0), Code::NotFound, "nope");
    Ok(())
}

/// expected.json's values of one tensor as f64 (NaN and infinities are strings there).
fn numbers(values: &Value) -> Vec<f64> {
    values
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|v| match v {
            Value::Array(pair) => pair.iter().map(|x| x.as_f64().unwrap()).collect(),
            Value::String(s) => vec![s.parse::<f64>().unwrap()],
            v => vec![v.as_f64().unwrap()],
        })
        .collect()
}

/// A loaded tensor's values as f64, for the dtypes the golden holds.
fn as_f64s(t: &Tensor) -> Vec<f64> {
    match t.dtype() {
        DType::Float32 => t.to_vec::<f32>().unwrap().into_iter().map(f64::from).collect(),
        DType::Float64 => t.to_vec::<f64>().unwrap(),
        DType::Int32 => t.to_vec::<i32>().unwrap().into_iter().map(f64::from).collect(),
        DType::Int16 => t.to_vec::<i16>().unwrap().into_iter().map(f64::from).collect(),
        DType::Int8 => t.to_vec::<i8>().unwrap().into_iter().map(f64::from).collect(),
        DType::Uint8 => t.to_vec::<u8>().unwrap().into_iter().map(f64::from).collect(),
        DType::Int64 => t.to_vec::<i64>().unwrap().into_iter().map(|x| x as f64).collect(),
        DType::Bool => t.to_vec::<bool>().unwrap().into_iter().map(|b| f64::from(u8::from(b))).collect(),
        DType::Complex64 => {
            t.to_vec::<[f32; 2]>().unwrap().into_iter().flat_map(|[re, im]| [f64::from(re), f64::from(im)]).collect()
        }
        DType::Bfloat16 => {
            t.to_vec::<BF16>().unwrap().into_iter().map(|b| f64::from(f32::from_bits(u32::from(b.0) << 16))).collect()
        }
        DType::Float16 => t.to_vec::<cairn::F16>().unwrap().into_iter().map(|h| f16_to_f64(h.0)).collect(),
        other => panic!("unexpected dtype {other:?}"),
    }
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (exp, frac) = (i32::from((h >> 10) & 0x1f), f64::from(h & 0x3ff));
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

fn same_numbers(got: &[f64], want: &[f64]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g == w || (g.is_nan() && w.is_nan()))
}

#[test]
fn golden_safetensors_through_the_reader() -> Result<()> {
    let ctx = Context::new()?;
    let want = expected("safetensors/expected.json");
    let files = want["files"].as_object().unwrap();
    assert_eq!(files.len(), 6);
    for (file, spec) in files {
        let reader = CheckpointReader::open(golden(&format!("safetensors/{file}")))?;
        assert_eq!(reader.format(), WeightsFormat::Safetensors, "{file}");
        let metadata: BTreeMap<String, String> = match &spec["metadata"] {
            Value::Null => BTreeMap::new(),
            m => m.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect(),
        };
        assert_eq!(reader.metadata(), metadata, "{file}");
        let tensors = spec["tensors"].as_object().unwrap();
        let mut names: Vec<&String> = tensors.keys().collect();
        names.sort(); // byte order, as the reader sorts
        assert_eq!(key_set(&reader).iter().collect::<Vec<_>>(), names, "{file}");
        for (i, name) in names.into_iter().enumerate() {
            let t = &tensors[name];
            let type_name = t["dtype"].as_str().unwrap();
            let entry = reader.entry(i).unwrap();
            assert_eq!(reader.type_name(i), Some(type_name), "{file} {name:?}");
            let shape: Vec<i64> = t["shape"].as_array().unwrap().iter().map(|d| d.as_i64().unwrap()).collect();
            assert_eq!(entry.shape, shape, "{file} {name:?}");
            assert!(!reader.verify(name)?, "the package writes no Cairn checksum");
            if type_name.starts_with('U') && type_name != "U8" {
                assert_eq!(entry.dtype, DType::Invalid);
                assert_err(reader.load(&ctx, name), Code::Unimplemented, name);
                continue;
            }
            if type_name.starts_with("F8_") {
                assert_eq!(entry.dtype, DType::Float32, "F8 loads as float32");
            }
            let loaded = reader.load(&ctx, name)?;
            assert_eq!(loaded.dtype(), entry.dtype);
            assert_eq!(loaded.shape(), shape);
            let (got, want) = (as_f64s(&loaded), numbers(&t["values"]));
            assert!(same_numbers(&got, &want), "{file} {name:?}: {got:?} vs {want:?}");
        }
    }
    Ok(())
}

// ---- Errors ----

#[test]
fn errors_leave_the_variables_unchanged() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("errors");
    let (src, wide) = (mlp(&ctx, 16), mlp(&ctx, 17));
    let before = values(&wide);
    let path = dir.join("src.safetensors");
    src.save_weights(&path, WeightsFormat::Safetensors, WeightsOptions::new())?;

    // Missing files.
    let missing = dir.join("missing.safetensors");
    assert_err(wide.load_weights(&missing, WeightsOptions::new()), Code::NotFound, "missing.safetensors");
    assert_err(CheckpointReader::open(&missing), Code::NotFound, "missing.safetensors");

    // Layer 0's shapes differ ([8,17] vs [8,16]): nothing is assigned, not even layer 1's weights.
    let err = wide.load_weights(&path, WeightsOptions::new()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("variable 'layer-0/kernel' has shape [8,17]"), "{err}");
    assert!(err.to_string().starts_with("INVALID_ARGUMENT: "), "{err}");
    assert_eq!(values(&wide), before);

    // A truncated file is DATA_LOSS, and changes nothing either.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    assert_err(wide.load_weights(&cut, WeightsOptions::new()), Code::DataLoss, "cut.safetensors");
    assert_eq!(values(&wide), before);
    // So is a flipped byte of a value, caught by the checksum Cairn stored.
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x40;
    let bad = dir.join("flipped.safetensors");
    std::fs::write(&bad, &flipped).unwrap();
    let dst = mlp(&ctx, 16);
    let dst_before = values(&dst);
    assert_err(dst.load_weights(&bad, WeightsOptions::new()), Code::DataLoss, "");
    assert_eq!(values(&dst), dst_before);
    let reader = CheckpointReader::open(&bad)?;
    let failures = key_set(&reader).iter().filter(|k| reader.verify(k).is_err()).count();
    assert_eq!(failures, 1);

    // One layer: the file's layer-1 values are unused unless allowed; the other way they are missing.
    let one = Sequential::new(&ctx, None)?;
    one.add(&Layer::dense(&ctx, DenseOptions::new(16))?)?;
    one.call(&Tensor::new(&ctx, &[0.0f32; 8], &[1, 8])?, false)?;
    assert_err(one.load_weights(&path, WeightsOptions::new()), Code::InvalidArgument, "2 values of");
    assert_eq!(one.load_weights(&path, WeightsOptions::new().allow_unused(true))?, 2);
    let one_path = dir.join("one.safetensors");
    one.save_weights(&one_path, WeightsFormat::Safetensors, WeightsOptions::new())?;
    assert_err(src.load_weights(&one_path, WeightsOptions::new()), Code::NotFound, "'layer-1/kernel', 'layer-1/bias'");
    assert_eq!(src.load_weights(&one_path, WeightsOptions::new().allow_missing(true))?, 2);

    // Saving: AUTO is for reading; an object without variables has nothing to save.
    assert_err(
        src.save_weights(dir.join("x"), WeightsFormat::Auto, WeightsOptions::new()),
        Code::InvalidArgument,
        "AUTO",
    );
    let empty = Module::new(&ctx, "empty")?;
    assert_err(
        empty.save_weights(dir.join("x"), WeightsFormat::Safetensors, WeightsOptions::new()),
        Code::InvalidArgument,
        "has no variables",
    );
    assert!(!dir.join("x").exists());
    Ok(())
}

// ---- The safetensors crate ----

/// A module holding one variable of each dtype both sides know, two levels deep.
fn dtype_module(ctx: &Context) -> Module {
    let m = Module::new(ctx, "enc").unwrap();
    let var = |t: Tensor| Variable::with_options(ctx, &t, VariableOptions::new()).unwrap();
    m.set("w", var(Tensor::new(ctx, &[0.5f32, -1.0, 2.0, 3.5, -4.25, 6.0], &[2, 3]).unwrap())).unwrap();
    m.set("f64", var(Tensor::new(ctx, &[std::f64::consts::PI, -1e-300], &[2]).unwrap())).unwrap();
    m.set("i32", var(Tensor::new(ctx, &[-7i32, 0, 1 << 30], &[3]).unwrap())).unwrap();
    m.set("bf16", var(Tensor::new(ctx, &[BF16(0x3f80), BF16(0xc060)], &[2]).unwrap())).unwrap();
    m.set("mask", var(Tensor::new(ctx, &[true, false, true, true], &[2, 2]).unwrap())).unwrap();
    let sub = Module::new(ctx, "sub").unwrap();
    sub.set("step", var(Tensor::new(ctx, &[i64::MIN, 42], &[2]).unwrap())).unwrap();
    sub.set("u8", var(Tensor::new(ctx, &[0u8, 255], &[2]).unwrap())).unwrap();
    m.set("sub", &sub).unwrap();
    m
}

const DTYPE_PATHS: [(&str, Dtype, &str); 7] = [
    ("bf16", Dtype::BF16, "BF16"),
    ("f64", Dtype::F64, "F64"),
    ("i32", Dtype::I32, "I32"),
    ("mask", Dtype::BOOL, "BOOL"),
    ("sub/step", Dtype::I64, "I64"),
    ("sub/u8", Dtype::U8, "U8"),
    ("w", Dtype::F32, "F32"),
];

fn variable_bytes(m: &Object, path: &str) -> (Vec<i64>, Vec<u8>) {
    let t = Variable::try_from(m.get_path(path).unwrap()).unwrap().read().unwrap();
    (t.shape(), t.to_bytes().unwrap())
}

#[test]
fn cairn_writes_the_safetensors_crate_reads() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("crate_reads");
    let m = dtype_module(&ctx);
    let path = dir.join("enc.safetensors");
    let options = WeightsOptions::new().prefix("enc.").separator(".").metadata("format", "pt");
    m.save_weights(&path, WeightsFormat::Safetensors, options)?;

    let bytes = std::fs::read(&path).unwrap();
    let st = SafeTensors::deserialize(&bytes).expect("the safetensors crate reads Cairn's file");
    let mut names = st.names();
    names.sort();
    let want: Vec<String> = DTYPE_PATHS.iter().map(|(p, _, _)| format!("enc.{}", p.replace('/', "."))).collect();
    assert_eq!(names, want);
    for (p, dtype, _) in DTYPE_PATHS {
        let view = st.tensor(&format!("enc.{}", p.replace('/', "."))).unwrap();
        let (shape, data) = variable_bytes(&m, p);
        assert_eq!(view.dtype(), dtype, "{p}");
        assert_eq!(view.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(), shape, "{p}");
        assert_eq!(view.data(), &data[..], "{p}");
    }
    let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
    let metadata = header.metadata().as_ref().expect("metadata");
    assert_eq!(metadata.get("format").map(String::as_str), Some("pt"));
    assert!(metadata.contains_key("cairn.checksum.enc.sub.step"), "{metadata:?}");
    assert_eq!(metadata.len(), 1 + DTYPE_PATHS.len());
    Ok(())
}

#[test]
fn the_safetensors_crate_writes_cairn_reads_and_loads() -> Result<()> {
    let ctx = Context::new()?;
    let dir = TempDir::new("crate_writes");
    let src = dtype_module(&ctx);
    let data: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = DTYPE_PATHS
        .iter()
        .map(|&(p, dtype, _)| {
            let (shape, mut bytes) = variable_bytes(&src, p);
            // Other values than the module's: what the load must bring in.
            if dtype == Dtype::F32 {
                bytes = [1.5f32, 2.5, -3.5, 4.5, 5.5, -6.5].iter().flat_map(|x| x.to_le_bytes()).collect();
            }
            (format!("model.{}", p.replace('/', ".")), dtype, shape.iter().map(|&d| d as usize).collect(), bytes)
        })
        .collect();
    let views: Vec<(&str, TensorView<'_>)> = data
        .iter()
        .map(|(name, dtype, shape, bytes)| (name.as_str(), TensorView::new(*dtype, shape.clone(), bytes).unwrap()))
        .collect();
    let path = dir.join("from_crate.safetensors");
    let metadata: HashMap<String, String> = [("format".to_string(), "pt".to_string())].into();
    safetensors::serialize_to_file(views, Some(metadata), &path).expect("serialize_to_file");

    // The reader: names, the file's dtype names, shapes, bytes, metadata; no Cairn checksums.
    let reader = CheckpointReader::open(&path)?;
    assert_eq!(reader.format(), WeightsFormat::Safetensors);
    let mut want_names: Vec<&str> = data.iter().map(|(n, ..)| n.as_str()).collect();
    want_names.sort();
    assert_eq!(key_set(&reader), want_names);
    assert_eq!(reader.metadata(), BTreeMap::from([("format".to_string(), "pt".to_string())]));
    for (name, _, shape, bytes) in &data {
        let i = index_of(&reader, name);
        let type_name = DTYPE_PATHS.iter().find(|(p, ..)| format!("model.{}", p.replace('/', ".")) == *name).unwrap().2;
        assert_eq!(reader.type_name(i), Some(type_name));
        assert_eq!(reader.entry(i).unwrap().shape, shape.iter().map(|&d| d as i64).collect::<Vec<_>>());
        assert!(!reader.verify(name)?);
        assert_eq!(&reader.load(&ctx, name)?.to_bytes()?, bytes, "{name}");
    }

    // Loaded into a module of the same variables (zeros), by PyTorch-style names.
    let dst = dtype_module(&ctx);
    for (p, ..) in DTYPE_PATHS {
        let v = Variable::try_from(dst.get_path(p).unwrap()).unwrap();
        let t = v.read()?;
        v.assign(&Tensor::from_bytes(&ctx, t.dtype(), &t.shape(), &vec![0u8; t.nbytes()])?)?;
    }
    let options = WeightsOptions::new().prefix("model.").separator(".");
    assert_eq!(dst.load_weights(&path, options)?, DTYPE_PATHS.len());
    for (p, ..) in DTYPE_PATHS {
        let want = &data.iter().find(|(n, ..)| *n == format!("model.{}", p.replace('/', "."))).unwrap().3;
        assert_eq!(&variable_bytes(&dst, p).1, want, "{p}");
    }
    assert_eq!(
        Variable::try_from(dst.get_path("w").unwrap())?.read()?.to_vec::<f32>()?,
        [1.5, 2.5, -3.5, 4.5, 5.5, -6.5]
    );
    Ok(())
}
