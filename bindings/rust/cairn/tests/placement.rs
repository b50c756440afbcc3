//! Device scopes (Context::device_scope) and soft placement with its copy counter; the Vulkan case
//! runs on lavapipe where a driver exists.

use cairn::{ops, vulkan, Code, Context, Tensor, Variable};

#[test]
fn device_scopes_nest_and_close_on_drop() {
    let ctx = Context::new().unwrap();
    assert_eq!(ctx.current_device_scope().unwrap(), None);
    {
        let _outer = ctx.device_scope("cpu").unwrap();
        assert_eq!(ctx.current_device_scope().unwrap().as_deref(), Some("cpu"));
        {
            let _inner = ctx.device_scope("cpu:0").unwrap();
            let x = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
            assert_eq!(x.device(), "cpu");
        }
        assert_eq!(ctx.current_device_scope().unwrap().as_deref(), Some("cpu"));
        // Another thread sees no scope.
        std::thread::scope(|s| {
            s.spawn(|| assert_eq!(ctx.current_device_scope().unwrap(), None));
        });
    }
    assert_eq!(ctx.current_device_scope().unwrap(), None);
    let err = ctx.device_scope("tpu:9").err().unwrap();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("\"tpu:9\""), "{err}");
}

#[test]
fn soft_placement_copies_are_counted() {
    let ctx = Context::new().unwrap();
    let other = Context::new().unwrap(); // another context's CPU is another device
    let a = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    let b = Tensor::new(&other, &[10.0f32, 20.0], &[2]).unwrap();
    assert!(!ctx.soft_placement().unwrap());
    assert_eq!(ops::add(&ctx, &a, &b).err().unwrap().code(), Code::InvalidArgument);
    ctx.set_soft_placement(true).unwrap();
    assert!(ctx.soft_placement().unwrap());
    let sum = ops::add(&ctx, &a, &b).unwrap();
    assert_eq!(sum.to_vec::<f32>().unwrap(), [11.0, 22.0]);
    assert_eq!(ctx.auto_copies().unwrap(), 1);
}

#[test]
fn vulkan_scope_places_variables_and_ops() {
    if !vulkan::available() {
        eprintln!("no Vulkan driver: skipped");
        return;
    }
    let ctx = Context::new().unwrap();
    ctx.set_soft_placement(true).unwrap();
    let host = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    {
        let _scope = ctx.device_scope("vulkan:0").unwrap();
        let v = Variable::new(&ctx, &host).unwrap();
        assert_eq!(v.read().unwrap().device(), "vulkan:0");
        let sum = ops::add(&ctx, &host, &host).unwrap();
        assert_eq!(sum.device(), "vulkan:0");
        assert_eq!(sum.to_vec::<f32>().unwrap(), [2.0, 4.0]);
    }
    assert_eq!(ctx.auto_copies().unwrap(), 2);
}
