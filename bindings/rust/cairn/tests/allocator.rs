//! Host allocator hooks: every allocation comes back, also after the context is gone, and a
//! panicking allocator is contained.

use std::alloc::{self, Layout};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cairn::{ops, Code, Context, ContextOptions, HostAllocator, Tensor};

/// Counts calls and keeps each block's layout (deallocate is not told the alignment).
struct Counting {
    live: Mutex<Option<HashMap<usize, Layout>>>,
    allocations: AtomicUsize,
    deallocations: AtomicUsize,
}

impl Counting {
    const fn new() -> Self {
        Counting { live: Mutex::new(None), allocations: AtomicUsize::new(0), deallocations: AtomicUsize::new(0) }
    }
}

unsafe impl HostAllocator for Counting {
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8 {
        assert!(alignment.is_power_of_two() && alignment >= 64, "alignment {alignment}");
        let layout = Layout::from_size_align(size.max(1), alignment).unwrap();
        let p = unsafe { alloc::alloc(layout) };
        self.live.lock().unwrap().get_or_insert_with(HashMap::new).insert(p as usize, layout);
        self.allocations.fetch_add(1, Ordering::SeqCst);
        p
    }

    unsafe fn deallocate(&self, ptr: *mut u8, _size: usize) {
        let layout = self.live.lock().unwrap().as_mut().unwrap().remove(&(ptr as usize)).expect("known block");
        alloc::dealloc(ptr, layout);
        self.deallocations.fetch_add(1, Ordering::SeqCst);
    }
}

static COUNTING: Counting = Counting::new();

#[test]
fn allocations_balance_after_context_and_tensors_are_gone() {
    let ctx = Context::with_options(ContextOptions::new().allocator(&COUNTING)).unwrap();
    let a = Tensor::new(&ctx, &[1.0f32; 100], &[10, 10]).unwrap();
    let b = ops::add(&ctx, &a, &a).unwrap();
    assert!(COUNTING.allocations.load(Ordering::SeqCst) >= 2);
    drop(a);
    drop(ctx);
    // The allocator still serves the surviving tensor's release.
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![2.0; 100]);
    drop(b);
    assert_eq!(COUNTING.allocations.load(Ordering::SeqCst), COUNTING.deallocations.load(Ordering::SeqCst));
    assert!(COUNTING.live.lock().unwrap().as_ref().unwrap().is_empty());
}

struct Panicking;

unsafe impl HostAllocator for Panicking {
    fn allocate(&self, _size: usize, _alignment: usize) -> *mut u8 {
        panic!("allocator panicked");
    }

    unsafe fn deallocate(&self, _ptr: *mut u8, _size: usize) {
        unreachable!("nothing was allocated");
    }
}

static PANICKING: Panicking = Panicking;

#[test]
fn a_panicking_allocator_reads_as_an_allocation_failure() {
    let ctx = Context::with_options(ContextOptions::new().allocator(&PANICKING)).unwrap();
    let err = Tensor::new(&ctx, &[1.0f32; 16], &[16]).unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err}");
}

/// An allocator owned by the runtime: counts its drops.
struct Owned {
    dropped: std::sync::Arc<AtomicUsize>,
}

unsafe impl HostAllocator for Owned {
    fn allocate(&self, size: usize, alignment: usize) -> *mut u8 {
        unsafe { alloc::alloc(Layout::from_size_align(size, alignment).unwrap()) }
    }

    unsafe fn deallocate(&self, ptr: *mut u8, size: usize) {
        alloc::dealloc(ptr, Layout::from_size_align(size, 64).unwrap());
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        self.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn an_owned_allocator_is_dropped_once_after_the_last_tensor() {
    let dropped = std::sync::Arc::new(AtomicUsize::new(0));
    let ctx = Context::with_options(ContextOptions::new().allocator(Owned { dropped: dropped.clone() })).unwrap();
    let t = Tensor::new(&ctx, &[1.0f32; 8], &[8]).unwrap();
    drop(ctx);
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "a tensor still uses it");
    // The last tensor may go on another thread: the allocator is dropped there.
    std::thread::spawn(move || drop(t)).join().unwrap();
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn allocator_and_log_closure_are_dropped_once_when_creation_fails_or_options_go_unused() {
    struct Flag(std::sync::Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let allocs = std::sync::Arc::new(AtomicUsize::new(0));
    let logs = std::sync::Arc::new(AtomicUsize::new(0));
    let options = || {
        let flag = Flag(logs.clone());
        ContextOptions::new().allocator(Owned { dropped: allocs.clone() }).log_callback(move |_, _| {
            let _ = &flag;
        })
    };
    // An unknown device fails after the runtime took the allocator hooks (and released them).
    let err = Context::with_options(options().device("tpu")).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert_eq!((allocs.load(Ordering::SeqCst), logs.load(Ordering::SeqCst)), (1, 1));
    // A bad option fails before the runtime looks at the hooks.
    let err = Context::with_options(options().device("c\0pu")).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!((allocs.load(Ordering::SeqCst), logs.load(Ordering::SeqCst)), (2, 2));
    drop(options());
    assert_eq!((allocs.load(Ordering::SeqCst), logs.load(Ordering::SeqCst)), (3, 3));
    drop(Context::with_options(options()).unwrap());
    assert_eq!((allocs.load(Ordering::SeqCst), logs.load(Ordering::SeqCst)), (4, 4));
}

#[test]
fn an_arc_allocator_stays_usable_by_its_owner() {
    let shared = std::sync::Arc::new(Counting::new());
    let ctx = Context::with_options(ContextOptions::new().allocator(shared.clone())).unwrap();
    drop(Tensor::new(&ctx, &[1u8; 3], &[3]).unwrap());
    drop(ctx);
    assert_eq!(std::sync::Arc::strong_count(&shared), 1, "the runtime released its reference");
    assert_eq!(shared.allocations.load(Ordering::SeqCst), shared.deallocations.load(Ordering::SeqCst));
}
