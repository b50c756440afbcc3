// Creates a context and two tensors, adds them (broadcasting the row), and prints the result.
// Run with `cargo run --example add` in bindings/rust.

use cairn::{ops, Context, Tensor};

fn main() -> Result<(), cairn::Error> {
    let ctx = Context::new()?;
    let x = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let y = Tensor::new(&ctx, &[10.0f32, 20.0, 30.0], &[3])?;
    let z = ops::add(&ctx, &x, &y)?;
    println!("{:?} = {:?}", z, z.to_vec::<f32>()?);
    Ok(())
}
