//! What the leak tests share: a resident-memory probe and the flat-memory check. Each leak test is
//! its own binary (one test in it), so no other test allocates while it measures.

/// Rounds per check; a leak of 1 kB a round shows as 100 MB.
pub const N: usize = 100_000;
pub const ALLOWED_GROWTH_KB: u64 = 8 * 1024;

fn resident_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Runs `round` N/10 times to warm up allocator caches and pools, then N times, and fails when
/// resident memory grew by more than ALLOWED_GROWTH_KB.
pub fn assert_flat(what: &str, mut round: impl FnMut()) {
    for _ in 0..N / 10 {
        round();
    }
    let before = resident_kb();
    for _ in 0..N {
        round();
    }
    let after = resident_kb();
    assert!(
        after <= before + ALLOWED_GROWTH_KB,
        "{what}: resident memory grew from {before} kB to {after} kB over {N} rounds"
    );
    eprintln!("{what}: {before} kB -> {after} kB over {N} rounds");
}
