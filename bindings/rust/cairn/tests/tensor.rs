//! Tensor round trips for every dtype, shapes, size and dtype errors, devices, lifetimes.

use cairn::{ops, Code, Complex64, Context, DType, Element, Tensor, BF16, F16};

fn round_trip<T: Element + PartialEq + std::fmt::Debug>(ctx: &Context, data: &[T], shape: &[i64]) {
    let t = Tensor::new(ctx, data, shape).unwrap();
    assert_eq!(t.dtype(), T::DTYPE);
    assert_eq!(t.shape(), shape);
    assert_eq!(t.rank(), shape.len());
    assert_eq!(t.num_elements(), data.len());
    assert_eq!(t.nbytes(), std::mem::size_of_val(data));
    assert_eq!(t.nbytes(), data.len() * T::DTYPE.size());
    assert_eq!(t.device(), "cpu");
    assert_eq!(t.to_vec::<T>().unwrap(), data, "{:?}", T::DTYPE);
    // The raw bytes are the slice's bytes.
    let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data)) };
    assert_eq!(t.to_bytes().unwrap(), bytes);
}

#[test]
fn every_dtype_round_trips() {
    let ctx = Context::new().unwrap();
    round_trip(&ctx, &[1.5f32, -2.25, f32::MAX, f32::MIN_POSITIVE, 0.0, -0.0], &[2, 3]);
    round_trip(&ctx, &[1.5f64, -2.25, f64::MAX, 1e-300], &[4]);
    round_trip(&ctx, &[i32::MIN, -1, 0, i32::MAX], &[2, 2]);
    round_trip(&ctx, &[i64::MIN, -1, 0, i64::MAX], &[4, 1]);
    round_trip(&ctx, &[i16::MIN, -1, 0, i16::MAX], &[1, 4]);
    round_trip(&ctx, &[i8::MIN, -1, 0, i8::MAX], &[2, 1, 2]);
    round_trip(&ctx, &[0u8, 1, 128, 255], &[4]);
    round_trip(&ctx, &[true, false, false, true, true, false], &[3, 2]);
    round_trip(&ctx, &[Complex64::new(1.0, -2.0), Complex64::new(0.5, 3.0)], &[2]);
    round_trip(&ctx, &[[1.0f32, -2.0], [0.5, 3.0]], &[2]);
    round_trip(&ctx, &[F16(0x3c00), F16(0xc000), F16(0x7c00), F16(0)], &[2, 2]); // 1, -2, inf, 0
    round_trip(&ctx, &[BF16(0x3f80), BF16(0xc000), BF16(0x7f80)], &[3]); // 1, -2, inf
}

#[test]
fn scalars_and_empty_tensors() {
    let ctx = Context::new().unwrap();
    let s = Tensor::scalar(&ctx, 7i64).unwrap();
    assert_eq!(s.rank(), 0);
    assert_eq!(s.shape(), Vec::<i64>::new());
    assert_eq!(s.num_elements(), 1);
    assert_eq!(s.to_vec::<i64>().unwrap(), [7]);
    assert_eq!(s.dim(0), None);

    let e = Tensor::new::<f32>(&ctx, &[], &[0, 3]).unwrap();
    assert_eq!(e.shape(), [0, 3]);
    assert_eq!(e.num_elements(), 0);
    assert_eq!(e.nbytes(), 0);
    assert_eq!(e.to_vec::<f32>().unwrap(), Vec::<f32>::new());
    assert_eq!(e.dim(1), Some(3));
    assert_eq!(e.dim(2), None);
}

#[test]
fn mismatched_sizes_are_errors_in_the_bindings_terms() {
    let ctx = Context::new().unwrap();
    let err = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Tensor::new: 3 values for shape [2, 2] (needs 4)");

    let err = Tensor::new(&ctx, &[1i32, 2], &[]).unwrap_err(); // a scalar holds one value
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Tensor::new: 2 values for shape [] (needs 1)");

    let err = Tensor::new(&ctx, &[0u8; 4], &[-1, -4]).unwrap_err();
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Tensor::new: negative dimension -1 in shape [-1, -4]");

    let err = Tensor::from_bytes(&ctx, DType::Float32, &[3], &[0u8; 8]).unwrap_err();
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Tensor::from_bytes: 8 bytes for float32 shape [3] (needs 12)");
    let err = Tensor::from_bytes(&ctx, DType::String, &[1], &[0u8; 8]).unwrap_err();
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Tensor::from_bytes: string tensors cannot be made from bytes");
    let err = Tensor::from_bytes(&ctx, DType::Int64, &[i64::MAX, 4], &[]).unwrap_err();
    assert!(err.message().ends_with("(needs more than fit in memory)"), "{err}");

    let err = Tensor::new(&ctx, &[0u8], &[1; 9]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "rank 9 is over the limit of 8: {err}");

    let err = Tensor::from_bytes(&ctx, DType::Int32, &[2], &[0u8; 7]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = Tensor::from_bytes(&ctx, DType::String, &[], &[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("string"), "{err}");
}

#[test]
fn reading_as_another_type_is_an_error() {
    let ctx = Context::new().unwrap();
    let t = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    let err = t.to_vec::<i32>().unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("float32") && err.message().contains("int32"), "{err}");
    // Same size, different dtype: still refused.
    let h = Tensor::new(&ctx, &[F16(0x3c00)], &[1]).unwrap();
    assert_eq!(h.to_vec::<BF16>().unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(h.to_vec::<F16>().unwrap(), [F16(0x3c00)]);
}

#[test]
fn from_bytes_takes_any_dtype() {
    let ctx = Context::new().unwrap();
    let bits: Vec<u8> = [0x3c00u16, 0xbc00].iter().flat_map(|b| b.to_ne_bytes()).collect();
    let t = Tensor::from_bytes(&ctx, DType::Float16, &[2], &bits).unwrap();
    assert_eq!(t.dtype(), DType::Float16);
    assert_eq!(t.to_vec::<F16>().unwrap(), [F16(0x3c00), F16(0xbc00)]);
    let as_f32 = ops::cast(&ctx, &t, DType::Float32, Default::default()).unwrap();
    assert_eq!(as_f32.to_vec::<f32>().unwrap(), [1.0, -1.0]);
}

#[test]
fn bool_reads_any_nonzero_byte_as_true() {
    let ctx = Context::new().unwrap();
    let t = Tensor::from_bytes(&ctx, DType::Bool, &[3], &[0, 1, 2]).unwrap();
    assert_eq!(t.to_vec::<bool>().unwrap(), [false, true, true]);
}

#[test]
fn tensors_outlive_their_context() {
    let ctx = Context::new().unwrap();
    let t = Tensor::new(&ctx, &[1.0f64, 2.0], &[2]).unwrap();
    let u = ops::mul(&ctx, &t, &t).unwrap();
    drop(ctx);
    assert_eq!(t.to_vec::<f64>().unwrap(), [1.0, 2.0]);
    assert_eq!(u.to_vec::<f64>().unwrap(), [1.0, 4.0]);
    assert_eq!(u.device(), "cpu");
    // And freeing the other way round.
    let ctx = Context::new().unwrap();
    let v = Tensor::new(&ctx, &[1u8], &[1]).unwrap();
    drop(v);
    drop(ctx);
}

#[test]
fn copy_to_device() {
    let ctx = Context::new().unwrap();
    let t = Tensor::new(&ctx, &[1i32, 2, 3], &[3]).unwrap();
    let same = t.copy_to_device(&ctx, "cpu").unwrap();
    drop(t);
    assert_eq!(same.to_vec::<i32>().unwrap(), [1, 2, 3]);
    assert_eq!(same.device(), "cpu");
    assert_eq!(same.copy_to_device(&ctx, "tpu").unwrap_err().code(), Code::NotFound);
    match same.copy_to_device(&ctx, "vulkan") {
        Ok(v) => assert_eq!(v.to_vec::<i32>().unwrap(), [1, 2, 3]),
        Err(err) => assert_eq!(err.code(), Code::Unavailable, "{err}"),
    }
}

#[test]
fn raw_handles_round_trip() {
    let ctx = Context::new().unwrap();
    let t = Tensor::new(&ctx, &[5i16], &[1]).unwrap();
    let raw = t.into_raw();
    let t = unsafe { Tensor::from_raw(std::ptr::NonNull::new(raw).unwrap()) };
    assert_eq!(t.to_vec::<i16>().unwrap(), [5]);
    assert_eq!(format!("{t:?}"), "Tensor(int16 [1] on cpu)");
}

#[test]
fn clones_share_the_value_without_a_context() {
    let ctx = Context::new().unwrap();
    let t = Tensor::new(&ctx, &[1i32, 2, 3], &[3]).unwrap();
    drop(ctx);
    let u = t.clone();
    drop(t);
    assert_eq!(u.to_vec::<i32>().unwrap(), [1, 2, 3]);
    assert_eq!(u.share().unwrap().shape(), [3]);
}
