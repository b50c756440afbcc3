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
