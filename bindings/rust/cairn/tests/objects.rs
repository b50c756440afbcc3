//! Tracked objects: kinds and typed handles, edges, modules and name scopes, variables, lists,
//! dicts, the module queries, handles across threads, and the context's lifetime.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cairn::{
    Code, Context, ContextOptions, DType, Dict, List, LogLevel, Module, Object, ObjectKind, Tensor, Trackable,
    Variable, VariableOptions,
};

fn var(ctx: &Context, value: i32, name: &str) -> Variable {
    let t = Tensor::scalar(ctx, value).unwrap();
    Variable::with_options(ctx, &t, VariableOptions::new().name(name)).unwrap()
}

fn value(obj: &Object) -> i32 {
    let v = obj.downcast_ref::<Variable>().expect("a variable");
    v.read().unwrap().to_vec::<i32>().unwrap()[0]
}

#[test]
fn kinds_and_typed_handles() {
    let ctx = Context::new().unwrap();
    let tr = Trackable::new(&ctx).unwrap();
    let m = Module::new(&ctx, "m").unwrap();
    let l = List::new(&ctx).unwrap();
    let d = Dict::new(&ctx).unwrap();
    let v = var(&ctx, 1, "v");
    assert_eq!(
        [tr.kind(), m.kind(), l.kind(), d.kind(), v.kind()],
        [ObjectKind::Trackable, ObjectKind::Module, ObjectKind::List, ObjectKind::Dict, ObjectKind::Variable]
    );
    tr.set("v", &v).unwrap();
    let got: Object = tr.get("v").unwrap();
    assert!(got.is_same(&v) && !got.is_same(&tr));
    assert!(got.downcast_ref::<Module>().is_none());
    let got: Variable = got.downcast::<Variable>().unwrap();
    assert_eq!(got.name(), "v:0");
    // The wrong kind gives the object back, or an error through TryFrom.
    let back = Object::from(m.clone()).downcast::<Variable>().unwrap_err();
    assert!(back.is_same(&m));
    let err = Variable::try_from(Object::from(l.clone())).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("List") && err.message().contains("Variable"), "{err}");
    // Clones are handles to the same object.
    let tr2 = tr.clone();
    assert!(tr2.is_same(&tr));
    assert_eq!(format!("{v:?}"), "Variable(\"v:0\", int32 [])");
    assert_eq!(format!("{:?}", m.as_object()), "Module(\"m\", 0 edges)");
    assert_eq!(format!("{l:?}"), "List(len 0)");
}

#[test]
fn edges_set_get_delete_and_untracked() {
    let ctx = Context::new().unwrap();
    let tr = Trackable::new(&ctx).unwrap();
    let (a, b, hidden) = (var(&ctx, 1, "a"), var(&ctx, 2, "b"), var(&ctx, 3, "hidden"));
    tr.set("b", &b).unwrap();
    tr.set("a", &a).unwrap();
    tr.set_untracked("hidden", &hidden).unwrap();
    assert_eq!(tr.child_count(), 2);
    let names: Vec<String> = tr.children().unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["b", "a"], "creation order; untracked edges are not children");
    assert_eq!(value(&tr.get("hidden").unwrap()), 3);
    // Replacing an edge keeps its position.
    tr.set("b", &a).unwrap();
    let children = tr.children().unwrap();
    assert_eq!(children[0].0, "b");
    assert!(children[0].1.is_same(&a));
    tr.delete("b").unwrap();
    let err = tr.delete("b").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = tr.get("w").unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("no child named \"w\""), "{err}");
    for bad in ["", "a/b", ".ATTRIBUTES"] {
        assert_eq!(tr.set(bad, &a).unwrap_err().code(), Code::InvalidArgument, "{bad:?}");
    }
    assert_eq!(tr.set("a\0b", &a).unwrap_err().code(), Code::InvalidArgument);
    // Variables have no edges.
    assert_eq!(a.set("x", &b).unwrap_err().code(), Code::InvalidArgument);
    // Handles and objects go in any order: the edge keeps the child alive.
    let t2 = Trackable::new(&ctx).unwrap();
    tr.set("t2", &t2).unwrap();
    drop(t2);
    drop(ctx);
    assert_eq!(tr.get("t2").unwrap().kind(), ObjectKind::Trackable);
}

#[test]
fn modules_name_scopes_and_queries() {
    let ctx = Context::new().unwrap();
    let m1 = Module::new(&ctx, "m1").unwrap();
    let m2 = Module::new_in_scope(&ctx, "m2", &m1).unwrap();
    assert_eq!((m1.name(), m1.scope()), ("m1", "m1"));
    assert_eq!((m2.name(), m2.scope()), ("m2", "m1/m2"));
    let t = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    let w = Variable::with_options(&ctx, &t, VariableOptions::new().name("w").scope(&m2)).unwrap();
    let frozen =
        Variable::with_options(&ctx, &t, VariableOptions::new().name("frozen").trainable(false).scope(&m1)).unwrap();
    assert_eq!(w.name(), "m1/m2/w:0");
    assert_eq!(frozen.name(), "m1/frozen:0");
    assert!(w.trainable() && !frozen.trainable());
    m1.set("sub", &m2).unwrap();
    m1.set("frozen", &frozen).unwrap();
    m2.set("w", &w).unwrap();
    let names = |vars: Vec<Variable>| vars.iter().map(|v| v.name().to_string()).collect::<Vec<_>>();
    assert_eq!(names(m1.variables(false).unwrap()), ["m1/frozen:0", "m1/m2/w:0"]);
    assert_eq!(names(m1.variables(true).unwrap()), ["m1/m2/w:0"]);
    let subs = m1.submodules().unwrap();
    assert_eq!(subs.len(), 1);
    assert!(subs[0].is_same(&m2) && subs[0].name() == "m2");
    let flat: Vec<String> = m1.flatten().unwrap().into_iter().map(|(p, _)| p).collect();
    assert_eq!(flat, ["frozen", "sub", "sub/w"]);
    let walk: Vec<(String, ObjectKind)> = m1.walk().unwrap().into_iter().map(|(p, o)| (p, o.kind())).collect();
    assert_eq!(
        walk,
        [
            (String::new(), ObjectKind::Module),
            ("sub".into(), ObjectKind::Module),
            ("frozen".into(), ObjectKind::Variable),
            ("sub/w".into(), ObjectKind::Variable)
        ]
    );
    assert!(m1.get_path("sub/w").unwrap().is_same(&w));
    assert_eq!(Module::new(&ctx, "a/b").unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(Module::new(&ctx, "").unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn variables_read_assign_and_errors() {
    let ctx = Context::new().unwrap();
    let t = Tensor::new(&ctx, &[1i64, 2], &[2]).unwrap();
    let v = Variable::new(&ctx, &t).unwrap();
    assert_eq!(v.name(), "Variable:0");
    assert_eq!((v.dtype(), v.shape().unwrap()), (DType::Int64, vec![2]));
    let before = v.read().unwrap();
    v.assign_add(&Tensor::new(&ctx, &[10i64, 20], &[2]).unwrap()).unwrap();
    v.assign_sub(&Tensor::new(&ctx, &[1i64, 1], &[2]).unwrap()).unwrap();
    assert_eq!(v.read().unwrap().to_vec::<i64>().unwrap(), [10, 21]);
    assert_eq!(before.to_vec::<i64>().unwrap(), [1, 2], "a read is a snapshot");
    v.assign(&Tensor::new(&ctx, &[7i64, 8], &[2]).unwrap()).unwrap();
    assert_eq!(v.read().unwrap().to_vec::<i64>().unwrap(), [7, 8]);
    let err = v.assign(&Tensor::new(&ctx, &[1i64, 2, 3], &[3]).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.message(), "cairn_variable_assign: shape [3] does not match variable 'Variable:0' of shape [2]");
    let err = v.assign_add(&Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(v.read().unwrap().to_vec::<i64>().unwrap(), [7, 8], "unchanged on error");
    let b = Variable::new(&ctx, &Tensor::new(&ctx, &[true], &[1]).unwrap()).unwrap();
    let err = b.assign_add(&Tensor::new(&ctx, &[true], &[1]).unwrap()).unwrap_err();
    assert!(err.message().starts_with("cairn_variable_assign_add: "), "{err}");
    let err = Variable::with_options(&ctx, &t, VariableOptions::new().name("a:b")).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn lists_and_dicts() {
    let ctx = Context::new().unwrap();
    let l = List::new(&ctx).unwrap();
    assert!(l.is_empty());
    let (a, b, c) = (var(&ctx, 1, "a"), var(&ctx, 2, "b"), var(&ctx, 3, "c"));
    l.append(&a).unwrap();
    l.append(&b).unwrap();
    assert_eq!(l.len(), 2);
    assert!(l.get(1).unwrap().is_same(&b));
    assert!(l.as_object().get("1").unwrap().is_same(&b), "elements are edges \"0\", \"1\", ...");
    assert_eq!(l.get(2).unwrap_err().code(), Code::OutOfRange);
    l.set(0, &c).unwrap();
    assert_eq!(value(&l.get(0).unwrap()), 3);
    assert_eq!(l.set(5, &c).unwrap_err().code(), Code::OutOfRange);
    l.delete("0").unwrap();
    assert_eq!(l.len(), 1);
    assert!(l.get(0).unwrap().is_same(&b), "later elements move down");
    assert_eq!(l.set_untracked("x", &a).unwrap_err().code(), Code::InvalidArgument);

    let d = Dict::new(&ctx).unwrap();
    d.set("zeta", &a).unwrap();
    d.set("alpha", &b).unwrap();
    assert_eq!(d.len(), 2);
    assert_eq!(d.keys().unwrap(), ["zeta", "alpha"], "insertion order");
    assert!(d.get("alpha").unwrap().is_same(&b));
    d.delete("zeta").unwrap();
    assert_eq!(d.keys().unwrap(), ["alpha"]);
    assert_eq!(d.get("zeta").unwrap_err().code(), Code::NotFound);
}

#[test]
fn objects_are_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Object>();
    send_sync::<Variable>();
    send_sync::<Module>();
    send_sync::<List>();
    send_sync::<Dict>();
    send_sync::<Trackable>();
    let ctx = Context::new().unwrap();
    let counter = var(&ctx, 0, "counter");
    let list = List::new(&ctx).unwrap();
    std::thread::scope(|s| {
        for k in 0..8 {
            let (ctx, counter, list) = (&ctx, &counter, &list);
            s.spawn(move || {
                let one = Tensor::scalar(ctx, 1i32).unwrap();
                for _ in 0..250 {
                    counter.assign_add(&one).unwrap();
                }
                list.append(var(ctx, k, "item")).unwrap(); // given, not borrowed
            });
        }
    });
    assert_eq!(value(&counter), 2000, "assign_add is atomic");
    assert_eq!(list.len(), 8);
    // A handle moves to another thread and is dropped there.
    let moved = counter.clone();
    std::thread::spawn(move || assert_eq!(moved.read().unwrap().to_vec::<i32>().unwrap(), [2000])).join().unwrap();
}

#[test]
fn objects_keep_the_context_and_its_log_closure_alive() {
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let flag = Flag(dropped.clone());
    let ctx = Context::with_options(ContextOptions::new().log_level(LogLevel::Error).log_callback(move |_, _| {
        let _ = &flag;
    }))
    .unwrap();
    let v = var(&ctx, 5, "v");
    drop(ctx);
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "the variable keeps the context, and its log closure, alive");
    assert_eq!(value(&v), 5);
    drop(v);
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "released with the context, once");
}
