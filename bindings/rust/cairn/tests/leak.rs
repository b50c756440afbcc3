//! Creating and freeing 100,000 tensors (and op results, and errors), 100,000 object graphs (a
//! trackable with a variable edge) and 100,000 training steps keeps resident memory flat, whether
//! handles are dropped explicitly or by going out of scope (Rust has no finalizers: scope exit is
//! its only implicit release). One test in its own binary, so no other test allocates while it measures.

use std::time::{Duration, Instant};

use cairn::{
    losses, ops, Checkpoint, Context, DenseOptions, GradientTape, Layer, Mean, Module, Optimizer, OptimizerOptions,
    Tensor, Trackable, Variable, VariableOptions,
};

mod common;
use common::assert_flat;

#[test]
fn resident_memory_stays_flat() {
    let start = Instant::now();
    let ctx = Context::new().unwrap();
    let data = [1.0f32; 256]; // 1 kB a tensor: a leak would be 100 MB
    let x = Tensor::new(&ctx, &data, &[16, 16]).unwrap();

    assert_flat("explicit drop", || {
        let t = Tensor::new(&ctx, &data, &[16, 16]).unwrap();
        drop(t);
    });
    assert_flat("scope drop", || {
        let _t = Tensor::new(&ctx, &data, &[256]).unwrap();
    });
    assert_flat("op results", || {
        let sum = ops::add(&ctx, &x, &x).unwrap();
        std::hint::black_box(&sum);
    });
    assert_flat("errors", || {
        let bad = Tensor::new(&ctx, &data, &[3]).unwrap_err();
        std::hint::black_box(&bad);
    });

    // Objects: a trackable and a variable joined by an edge, then both handles dropped (the
    // edge's reference goes with the trackable).
    let small = Tensor::new(&ctx, &data[..16], &[16]).unwrap();
    assert_flat("objects, explicit drop", || {
        let tr = Trackable::new(&ctx).unwrap();
        let v = Variable::new(&ctx, &small).unwrap();
        tr.set("v", &v).unwrap();
        drop(v);
        drop(tr);
    });
    assert_flat("objects, scope drop", || {
        let tr = Trackable::new(&ctx).unwrap();
        tr.set("v", Variable::new(&ctx, &small).unwrap()).unwrap();
        let _again = tr.get("v").unwrap();
    });
    // Assignments replace values; queries hand out shared handles and free their arrays; a cycle
    // is broken by deleting an edge.
    let m = Module::new(&ctx, "m").unwrap();
    m.set("w", Variable::with_options(&ctx, &small, VariableOptions::new().name("w").scope(&m)).unwrap()).unwrap();
    let w = m.variables(false).unwrap().pop().unwrap();
    assert_flat("assign and queries", || {
        w.assign_add(&small).unwrap();
        let vars = m.variables(true).unwrap();
        std::hint::black_box(&vars);
        let sub = Trackable::new(&ctx).unwrap();
        m.set("sub", &sub).unwrap();
        sub.set("back", &*m).unwrap();
        m.delete("sub").unwrap();
    });
    // Checkpoints over the module (no file written), and NOT_FOUND errors from restoring.
    assert_flat("checkpoints", || {
        let ckpt = Checkpoint::new(&ctx, &[("m", &m)]).unwrap();
        std::hint::black_box(ckpt.root().child_count());
        let err = ckpt.restore("/nonexistent/cairn-leak-test").unwrap_err();
        std::hint::black_box(&err);
    });
    // Training steps: a tape, gradients, an optimizer update (slots made once), the layer's
    // weight list, a loss and a metric; a layer's summary string.
    let layer = Layer::dense(&ctx, DenseOptions::new(2)).unwrap();
    let opt = Optimizer::new(&ctx, OptimizerOptions::adam()).unwrap();
    let metric = Mean::new(&ctx, None).unwrap();
    let (xs, ys) = (Tensor::new(&ctx, &data[..8], &[4, 2]).unwrap(), Tensor::new(&ctx, &data[..8], &[4, 2]).unwrap());
    assert_flat("training steps", || {
        let tape = GradientTape::new(&ctx).unwrap();
        let loss = losses::mean_squared_error(&ctx, &ys, &layer.call(&xs, true).unwrap()).unwrap();
        let weights = layer.trainable_weights().unwrap();
        opt.apply_gradients(&tape.gradient_variables(&loss, &weights).unwrap(), &weights).unwrap();
        metric.update(&loss).unwrap();
        std::hint::black_box(layer.summary().unwrap());
    });
    assert!(start.elapsed() < Duration::from_secs(20), "took {:?}", start.elapsed());
}
