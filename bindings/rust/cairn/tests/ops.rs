//! The generated op wrappers, their attributes and defaults, and ops::run.

use cairn::ops::{self, Attr, AttrValue, CastAttrs, EqualAttrs, MatMulAttrs, SplitAttrs, SumAttrs, UnpackAttrs};
use cairn::{Code, Complex64, Context, DType, Tensor, F16};

fn t<T: cairn::Element>(ctx: &Context, data: &[T], shape: &[i64]) -> Tensor {
    Tensor::new(ctx, data, shape).unwrap()
}

#[test]
fn add_broadcasts() {
    let ctx = Context::new().unwrap();
    let x = t(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let row = t(&ctx, &[10.0f32, 20.0, 30.0], &[3]);
    let col = t(&ctx, &[100.0f32, 200.0], &[2, 1]);
    let z = ops::add(&ctx, &x, &row).unwrap();
    assert_eq!(z.shape(), [2, 3]);
    assert_eq!(z.to_vec::<f32>().unwrap(), [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    let z = ops::add(&ctx, &col, &row).unwrap();
    assert_eq!(z.shape(), [2, 3]);
    assert_eq!(z.to_vec::<f32>().unwrap(), [110.0, 120.0, 130.0, 210.0, 220.0, 230.0]);
    let s = Tensor::scalar(&ctx, 1i64).unwrap();
    let v = t(&ctx, &[1i64, 2], &[2]);
    assert_eq!(ops::add(&ctx, &s, &v).unwrap().to_vec::<i64>().unwrap(), [2, 3]);
}

#[test]
fn mat_mul_with_transpose_a() {
    let ctx = Context::new().unwrap();
    // a is 3x2; a^T is [[1, 3, 5], [2, 4, 6]].
    let a = t(&ctx, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
    let b = t(&ctx, &[1.0f64, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    let p = ops::mat_mul(&ctx, &a, &b, MatMulAttrs { transpose_a: Some(true), ..Default::default() }).unwrap();
    assert_eq!(p.shape(), [2, 2]);
    assert_eq!(p.to_vec::<f64>().unwrap(), [6.0, 8.0, 8.0, 10.0]);
    // The builder form is the same.
    let q = ops::mat_mul(&ctx, &a, &b, MatMulAttrs::new().transpose_a(true)).unwrap();
    assert_eq!(q.to_vec::<f64>().unwrap(), p.to_vec::<f64>().unwrap());
    // Nothing set, nothing sent: the registry's defaults (no transposes), so [3,2] x [3,2] does not fit.
    assert_eq!(MatMulAttrs::default(), MatMulAttrs { transpose_a: None, transpose_b: None });
    let err = ops::mat_mul(&ctx, &a, &b, MatMulAttrs::default()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().starts_with("MatMul"), "{err}");
    // transpose_b: a x b^T is 3x3.
    let r = ops::mat_mul(&ctx, &a, &b, MatMulAttrs::new().transpose_b(true)).unwrap();
    assert_eq!(r.shape(), [3, 3]);
    assert_eq!(r.to_vec::<f64>().unwrap(), [1.0, 2.0, 3.0, 3.0, 4.0, 7.0, 5.0, 6.0, 11.0]);
}

#[test]
fn required_attribute_and_optional_defaults() {
    let ctx = Context::new().unwrap();
    let x = t(&ctx, &[1.5f32, -2.7, 0.0], &[3]);
    let i = ops::cast(&ctx, &x, DType::Int32, CastAttrs::default()).unwrap();
    assert_eq!(i.to_vec::<i32>().unwrap(), [1, -2, 0]);
    let b = ops::cast(&ctx, &x, DType::Bool, CastAttrs::default()).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), [true, true, false]);
    let h = ops::cast(&ctx, &x, DType::Float16, CastAttrs::new().truncate(true)).unwrap();
    assert_eq!(h.dtype(), DType::Float16);
    let c = ops::cast(&ctx, &x, DType::Complex64, CastAttrs::default()).unwrap();
    assert_eq!(c.to_vec::<Complex64>().unwrap()[0], Complex64::new(1.5, 0.0));
    let one = ops::cast(&ctx, &t(&ctx, &[1.0f32], &[1]), DType::Float16, CastAttrs::default()).unwrap();
    assert_eq!(one.to_vec::<F16>().unwrap(), [F16(0x3c00)]);

    // Equal's incompatible_shape_error defaults to true in the registry; unset, it is not sent.
    assert_eq!(EqualAttrs::default().incompatible_shape_error, None);
    let a = t(&ctx, &[1i32, 2, 3], &[3]);
    let b = t(&ctx, &[1i32, 2], &[2]);
    assert_eq!(ops::equal(&ctx, &a, &b, EqualAttrs::default()).unwrap_err().code(), Code::InvalidArgument);
    let z = ops::equal(&ctx, &a, &b, EqualAttrs::new().incompatible_shape_error(false)).unwrap();
    assert_eq!(z.to_vec::<bool>().unwrap(), [false]);
    let z = ops::equal(&ctx, &a, &a, EqualAttrs::default()).unwrap();
    assert_eq!(z.to_vec::<bool>().unwrap(), [true, true, true]);
}

#[test]
fn variadic_and_bool_inputs() {
    let ctx = Context::new().unwrap();
    let a = t(&ctx, &[1i64, 2], &[2]);
    let b = t(&ctx, &[10i64, 20], &[2]);
    let c = t(&ctx, &[100i64, 200], &[2]);
    assert_eq!(ops::add_n(&ctx, &[&a, &b, &c]).unwrap().to_vec::<i64>().unwrap(), [111, 222]);
    assert_eq!(ops::add_n(&ctx, &[&a]).unwrap().to_vec::<i64>().unwrap(), [1, 2]);
    assert_eq!(ops::add_n(&ctx, &[]).unwrap_err().code(), Code::InvalidArgument);

    let p = t(&ctx, &[true, false], &[2]);
    let q = t(&ctx, &[true, true], &[2]);
    assert_eq!(ops::logical_and(&ctx, &p, &q).unwrap().to_vec::<bool>().unwrap(), [true, false]);
    let chosen = ops::select_v2(&ctx, &p, &a, &b).unwrap();
    assert_eq!(chosen.to_vec::<i64>().unwrap(), [1, 20]);
    // A wrong input dtype names the input.
    let err = ops::logical_and(&ctx, &a, &q).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().starts_with("LogicalAnd: input 'x'"), "{err}");
}

#[test]
fn run_any_op_by_name() {
    let ctx = Context::new().unwrap();
    let a = t(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    let out = ops::run(&ctx, "MatMul", &[&a, &a], &[Attr::new("transpose_b", AttrValue::Bool(true))]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [5.0, 11.0, 11.0, 25.0]);
    let out = ops::run(&ctx, "Cast", &[&a], &[Attr::new("DstT", AttrValue::DType(DType::Int8))]).unwrap();
    assert_eq!(out[0].to_vec::<i8>().unwrap(), [1, 2, 3, 4]);

    let err = ops::run(&ctx, "MatMul", &[&a, &a], &[Attr::new("transpose_c", AttrValue::Bool(true))]).unwrap_err();
    assert_eq!(err.message(), "MatMul: unknown attribute 'transpose_c'");
    let err = ops::run(&ctx, "MatMul", &[&a, &a], &[Attr::new("transpose_a", AttrValue::Int(1))]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("transpose_a"), "{err}");
    let err = ops::run(&ctx, "Cast", &[&a], &[]).unwrap_err();
    assert_eq!(err.message(), "Cast: missing required attribute 'DstT'");
    // The output count comes from the registry, also for ops whose count is an attribute.
    let parts = ops::run(&ctx, "Split", &[&a], &[Attr::new("num_split", AttrValue::Int(2))]).unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[1].to_vec::<f32>().unwrap(), [3.0, 4.0]);
    let err = ops::run(&ctx, "Split", &[&a], &[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("num_split"), "{err}");
    assert_eq!(AttrValue::Ints(&[1, 2]).kind(), cairn::AttrKind::Ints);
    assert_eq!(AttrValue::String("x").kind(), cairn::AttrKind::String);
}

#[test]
fn unary_ops_across_dtypes() {
    let ctx = Context::new().unwrap();
    let x = t(&ctx, &[-1.0f32, 0.0, 2.0], &[3]);
    assert_eq!(ops::relu(&ctx, &x).unwrap().to_vec::<f32>().unwrap(), [0.0, 0.0, 2.0]);
    assert_eq!(ops::abs(&ctx, &x).unwrap().to_vec::<f32>().unwrap(), [1.0, 0.0, 2.0]);
    assert_eq!(ops::square(&ctx, &x).unwrap().to_vec::<f32>().unwrap(), [1.0, 0.0, 4.0]);
    let i = t(&ctx, &[-3i16, 4], &[2]);
    assert_eq!(ops::neg(&ctx, &i).unwrap().to_vec::<i16>().unwrap(), [3, -4]);
    assert_eq!(ops::zeros_like(&ctx, &i).unwrap().to_vec::<i16>().unwrap(), [0, 0]);
    assert_eq!(ops::ones_like(&ctx, &i).unwrap().to_vec::<i16>().unwrap(), [1, 1]);
    let u = t(&ctx, &[7u8, 9], &[2]);
    let v = t(&ctx, &[2u8, 4], &[2]);
    assert_eq!(ops::floor_mod(&ctx, &u, &v).unwrap().to_vec::<u8>().unwrap(), [1, 1]);
}

#[test]
fn ints_attributes_through_the_generated_wrappers() {
    let ctx = Context::new().unwrap();
    let x = t(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let rows = ops::sum(&ctx, &x, SumAttrs::new().axis([1])).unwrap();
    assert_eq!(rows.shape(), [2]);
    assert_eq!(rows.to_vec::<f32>().unwrap(), [6.0, 15.0]);
    let cols = ops::sum(&ctx, &x, SumAttrs { axis: Some(vec![0]), keep_dims: Some(true) }).unwrap();
    assert_eq!(cols.shape(), [1, 3]);
    assert_eq!(cols.to_vec::<f32>().unwrap(), [5.0, 7.0, 9.0]);
    // The registry's default axis [] (not sent) reduces nothing (TensorFlow's Sum with an empty axis list).
    assert_eq!(SumAttrs::default().axis, None);
    let err = ops::sum(&ctx, &x, SumAttrs::new().axis([2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    // A required INTS attribute is a parameter.
    let r = ops::reshape(&ctx, &x, &[3, -1]).unwrap();
    assert_eq!(r.shape(), [3, 2]);
    assert_eq!(r.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    let err = ops::reshape(&ctx, &x, &[4, 2]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().starts_with("Reshape"), "{err}");

    // The same through ops::run.
    let attrs = [Attr::new("axis", AttrValue::Ints(&[0])), Attr::new("keep_dims", AttrValue::Bool(true))];
    let cols = ops::run(&ctx, "Sum", &[&x], &attrs).unwrap();
    assert_eq!(cols[0].to_vec::<f32>().unwrap(), [5.0, 7.0, 9.0]);
}

#[test]
fn variadic_outputs_count_from_their_attribute() {
    let ctx = Context::new().unwrap();
    let x = t(&ctx, &[1i32, 2, 3, 4, 5, 6], &[2, 3]);
    let cols = ops::split(&ctx, &x, 3, SplitAttrs::new().axis(1)).unwrap();
    assert_eq!(cols.len(), 3);
    assert_eq!(cols[2].shape(), [2, 1]);
    assert_eq!(cols[2].to_vec::<i32>().unwrap(), [3, 6]);
    let rows = ops::unpack(&ctx, &x, 2, UnpackAttrs::default()).unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1].to_vec::<i32>().unwrap(), [4, 5, 6]);
    let err = ops::split(&ctx, &x, 4, SplitAttrs::new().axis(1)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = ops::split(&ctx, &x, -1, SplitAttrs::default()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}
