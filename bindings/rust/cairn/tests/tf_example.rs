//! tf.train.Example and SequenceExample: build, serialize, parse and read back; batched parsing
//! into tensors with every kind of feature spec; malformed records and missing features.

use cairn::{
    parse_examples, parse_sequence_examples, Code, Context, DType, Example, ExampleKind, Feature, FeatureSpec,
    FeatureSpecKind, Parsed, Tensor,
};

#[test]
fn example_round_trip() {
    let mut ex = Example::new().unwrap();
    assert_eq!(ex.kind(), ExampleKind::Example);
    ex.set_int64s("label", &[3, -1]).unwrap();
    ex.set_floats("pixels", &[0.25, 1.5]).unwrap();
    ex.set_bytes("name", &[&b"a\0b"[..], b""]).unwrap();
    ex.set_bytes("tags", &["x", "yz"]).unwrap();
    ex.set_int64s("empty", &[]).unwrap();
    ex.set_int64s("label", &[7]).unwrap(); // replaces
    let bytes = ex.serialize().unwrap();
    // Deterministic: the same bytes again, and from an example built in another order.
    let mut other = Example::new().unwrap();
    for key in ["tags", "pixels", "name", "label", "empty"] {
        match ex.feature(key).unwrap() {
            Feature::Int64s(v) => other.set_int64s(key, &v).unwrap(),
            Feature::Floats(v) => other.set_floats(key, &v).unwrap(),
            Feature::Bytes(v) => other.set_bytes(key, &v).unwrap(),
            Feature::None => unreachable!(),
        }
    }
    assert_eq!(other.serialize().unwrap(), bytes);

    let back = Example::parse(&bytes).unwrap();
    assert_eq!(back.keys(), ["empty", "label", "name", "pixels", "tags"]);
    assert_eq!(back.feature("label").unwrap(), Feature::Int64s(vec![7]));
    assert_eq!(back.feature("pixels").unwrap(), Feature::Floats(vec![0.25, 1.5]));
    assert_eq!(back.feature("name").unwrap(), Feature::Bytes(vec![b"a\0b".to_vec(), vec![]]));
    assert_eq!(back.feature("tags").unwrap(), Feature::Bytes(vec![b"x".to_vec(), b"yz".to_vec()]));
    assert!(back.feature_list_keys().is_empty());
    let err = back.feature("nope").unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("nope"), "{err}");
    // An Example has no feature lists.
    assert_eq!(ex.append_step_int64s("seq", &[1]).unwrap_err().code(), Code::InvalidArgument);
    assert!(format!("{back:?}").contains("label"));
}

#[test]
fn sequence_example_round_trip() {
    let mut ex = Example::new_sequence().unwrap();
    ex.set_int64s("length", &[3]).unwrap();
    ex.append_step_floats("frames", &[1.0, 2.0]).unwrap();
    ex.append_step_floats("frames", &[3.0]).unwrap();
    ex.append_step_int64s("ids", &[]).unwrap();
    ex.append_step_bytes("words", &["hello"]).unwrap();
    let back = Example::parse_sequence(&ex.serialize().unwrap()).unwrap();
    assert_eq!(back.kind(), ExampleKind::SequenceExample);
    assert_eq!(back.keys(), ["length"]);
    assert_eq!(back.feature_list_keys(), ["frames", "ids", "words"]);
    assert_eq!(back.steps("frames").unwrap(), 2);
    assert_eq!(back.step("frames", 1).unwrap(), Feature::Floats(vec![3.0]));
    assert_eq!(back.step("words", 0).unwrap(), Feature::Bytes(vec![b"hello".to_vec()]));
    assert_eq!(back.step("frames", 2).unwrap_err().code(), Code::OutOfRange);
    assert_eq!(back.steps("missing").unwrap_err().code(), Code::NotFound);
}

#[test]
fn malformed_bytes_are_data_loss() {
    let err = Example::parse(&[0x0a, 0x05, 0x01]).unwrap_err();
    assert_eq!(err.code(), Code::DataLoss, "{err}");
    assert!(err.message().contains("at byte 1"), "{err}");
}

fn record(label: i64, pixels: &[f32], tags: &[&str]) -> Vec<u8> {
    let mut ex = Example::new().unwrap();
    ex.set_int64s("label", &[label]).unwrap();
    ex.set_floats("pixels", pixels).unwrap();
    ex.set_floats("scores", &vec![label as f32; label as usize]).unwrap();
    if !tags.is_empty() {
        ex.set_bytes("tags", tags).unwrap();
    }
    ex.serialize().unwrap()
}

#[test]
fn parse_examples_into_tensors() {
    let ctx = Context::new().unwrap();
    let records = [record(1, &[1.0, 2.0], &["ab"]), record(2, &[3.0, 4.0], &[]), record(3, &[5.0, 6.0], &["c", "de"])];
    let specs = [
        FeatureSpec::fixed_len("label", DType::Int64, &[]),
        FeatureSpec::fixed_len("pixels", DType::Float32, &[2]),
        FeatureSpec::var_len("scores", DType::Float32),
        FeatureSpec::var_len("tags", DType::Uint8),
        FeatureSpec::fixed_len("weight", DType::Float32, &[]).default_value(Tensor::scalar(&ctx, 0.5f32).unwrap()),
    ];
    assert_eq!(specs[2].kind(), FeatureSpecKind::VarLen);
    let parsed = parse_examples(&ctx, &records, &specs).unwrap();
    assert_eq!(parsed.len(), 5);
    let Parsed::FixedLen { values } = &parsed[0] else { panic!("{:?}", parsed[0]) };
    assert_eq!((values.shape(), values.to_vec::<i64>().unwrap()), (vec![3], vec![1, 2, 3]));
    assert_eq!(parsed[1].values().shape(), [3, 2]);
    assert_eq!(parsed[1].values().to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let Parsed::VarLen { values, row_lengths } = &parsed[2] else { panic!("{:?}", parsed[2]) };
    assert_eq!(values.to_vec::<f32>().unwrap(), [1.0, 2.0, 2.0, 3.0, 3.0, 3.0]);
    assert_eq!(row_lengths.to_vec::<i64>().unwrap(), [1, 2, 3]);
    let Parsed::VarLen { values, row_lengths } = &parsed[3] else { panic!("{:?}", parsed[3]) };
    assert_eq!(values.to_vec::<u8>().unwrap(), b"abcde");
    assert_eq!(row_lengths.to_vec::<i64>().unwrap(), [2, 0, 3]);
    assert_eq!(parsed[4].values().to_vec::<f32>().unwrap(), [0.5, 0.5, 0.5]);
    let tensors: Vec<Tensor> = parsed.into_iter().flat_map(Parsed::into_tensors).collect();
    assert_eq!(tensors.len(), 1 + 1 + 2 + 2 + 1);

    // A missing feature without a default names the record and the key.
    let err = parse_examples(&ctx, &records, &[FeatureSpec::fixed_len("weight", DType::Float32, &[])]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("example 0: feature 'weight' is missing"), "{err}");
    let err = parse_examples(&ctx, &[&[0x0a, 0x05][..]], &specs[..1]).unwrap_err();
    assert_eq!(err.code(), Code::DataLoss, "{err}");
}

#[test]
fn parse_sequence_examples_into_tensors() {
    let ctx = Context::new().unwrap();
    let make = |id: i64, frames: &[&[f32]]| {
        let mut ex = Example::new_sequence().unwrap();
        ex.set_int64s("id", &[id]).unwrap();
        for f in frames {
            ex.append_step_floats("frames", f).unwrap();
            ex.append_step_floats("ragged", &f[..1]).unwrap();
        }
        ex.serialize().unwrap()
    };
    let records = [make(10, &[&[1.0, 2.0], &[3.0, 4.0]]), make(11, &[&[5.0, 6.0]])];
    let specs = [
        FeatureSpec::fixed_len("id", DType::Int64, &[]),
        FeatureSpec::fixed_len_sequence("frames", DType::Float32, &[2])
            .default_value(Tensor::scalar(&ctx, -1.0f32).unwrap()),
        FeatureSpec::var_len_sequence("ragged", DType::Float32),
    ];
    let parsed = parse_sequence_examples(&ctx, &records, &specs).unwrap();
    assert_eq!(parsed[0].values().to_vec::<i64>().unwrap(), [10, 11]);
    let Parsed::FixedLenSequence { values, lengths } = &parsed[1] else { panic!("{:?}", parsed[1]) };
    assert_eq!(values.shape(), [2, 2, 2]);
    assert_eq!(values.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, -1.0, -1.0]);
    assert_eq!(lengths.to_vec::<i64>().unwrap(), [2, 1]);
    let Parsed::VarLenSequence { values, step_lengths, steps } = &parsed[2] else { panic!("{:?}", parsed[2]) };
    assert_eq!(values.to_vec::<f32>().unwrap(), [1.0, 3.0, 5.0]);
    assert_eq!(step_lengths.to_vec::<i64>().unwrap(), [1, 1, 1]);
    assert_eq!(steps.to_vec::<i64>().unwrap(), [2, 1]);
}
