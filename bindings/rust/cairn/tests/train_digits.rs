//! The training demo (examples/train_digits.rs, examples/TRAINING_DEMO.md): a run and a resumed
//! run in a fresh directory, a run killed mid-epoch and restarted (the same weights as an
//! uninterrupted run), a bad data file, and, when `bazel build //examples/c:train_digits` has run,
//! the same lines as the C demo apart from examples/s and the checkpoint path.
#![allow(dead_code)] // main() of the included example

include!("../examples/train_digits.rs");

use std::path::Path;
use std::process::Command;

fn data() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../examples/data/digits.csv").to_str().unwrap().to_string()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("train-digits-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The demo's report for `epochs` in `dir`, as lines.
fn rust_demo(dir: &Path, epochs: i64) -> Vec<String> {
    let mut out = Vec::new();
    run(&Args::new(data(), dir.to_path_buf(), epochs), &mut out).unwrap();
    String::from_utf8(out).unwrap().lines().map(String::from).collect()
}

/// A line with the examples/s figure and the checkpoint directory replaced, for comparison.
fn masked(line: &str, dir: &Path) -> String {
    let line = line.replace(dir.to_str().unwrap(), "<dir>");
    match line.rsplit_once("  ") {
        Some((head, tail)) if tail.ends_with(" examples/s") => format!("{head}  <n> examples/s"),
        _ => line,
    }
}

fn epoch_loss(line: &str) -> f64 {
    line.split("loss ").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn demo_trains_saves_and_resumes() {
    let dir = fresh_dir("rust");
    let first = rust_demo(&dir, 2);
    assert_eq!(first[0], "digits: 1438 training and 359 test samples of 8x8 pixels");
    assert_eq!(first[1], "Model: \"mlp\"");
    assert!(first.iter().any(|l| l.starts_with("Total params: 4,810")), "{first:#?}");
    let epochs: Vec<&String> = first.iter().filter(|l| l.starts_with("epoch ")).collect();
    assert_eq!(epochs.len(), 2, "{first:#?}");
    assert!(epochs[0].starts_with("epoch  1/2  loss ") && epochs[0].ends_with(" examples/s"), "{}", epochs[0]);
    assert!(epoch_loss(epochs[1]) < epoch_loss(epochs[0]), "{epochs:?}");
    assert!(first.last().unwrap().starts_with("weights: ") && first.last().unwrap().len() == 9 + 16, "{first:#?}");
    assert!(first[first.len() - 2].starts_with("test accuracy: 0."), "{first:#?}");

    // 1438 samples in batches of 32: 45 steps per epoch, a checkpoint at the end of each.
    let resumed = rust_demo(&dir, 3);
    assert_eq!(resumed[1], format!("resumed from {} after step 90", dir.join("ckpt-90").display()));
    let epochs: Vec<&String> = resumed.iter().filter(|l| l.starts_with("epoch ")).collect();
    assert_eq!(epochs.len(), 1);
    assert!(epochs[0].starts_with("epoch  3/3  loss "), "{}", epochs[0]);
    let reader = cairn::CheckpointReader::open(dir.join("ckpt-135")).unwrap();
    let keys: Vec<String> = reader.entries().into_iter().map(|e| e.key).collect();
    assert!(keys.iter().any(|k| k == "data/.ATTRIBUTES/ITERATOR_STATE"), "{keys:#?}");
    // Nothing left to train: the report goes straight to the test accuracy and the weights.
    let done = rust_demo(&dir, 3);
    assert!(!done.iter().any(|l| l.starts_with("epoch ")), "{done:#?}");
    assert_eq!(done[done.len() - 2..], resumed[resumed.len() - 2..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// --save-every 7 --kill-after 52 (mid-epoch 2; the last save was at step 49), then a restart: it
/// resumes at step 49, mid-epoch, and its metrics and final weights are the uninterrupted run's,
/// bit for bit.
#[test]
fn demo_killed_mid_epoch_resumes_exactly() {
    let (whole, killed) = (fresh_dir("whole"), fresh_dir("killed"));
    let uninterrupted = rust_demo(&whole, 3);
    let args = Args { save_every: 7, kill_after: 52, ..Args::new(data(), killed.clone(), 3) };
    let err = run(&args, &mut Vec::new()).unwrap_err().to_string();
    assert_eq!(err, "killed");
    let resumed = rust_demo(&killed, 3);
    assert_eq!(resumed[1], format!("resumed from {} after step 49", killed.join("ckpt-49").display()));
    let tail = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.starts_with("epoch  2/") || l.starts_with("epoch  3/") || l.starts_with("weights"))
            .map(|l| masked(l, Path::new("/nowhere")))
            .collect()
    };
    assert_eq!(tail(&resumed), tail(&uninterrupted));
    assert_eq!(tail(&resumed).len(), 3);
    std::fs::remove_dir_all(&whole).unwrap();
    std::fs::remove_dir_all(&killed).unwrap();
}

/// --logdir: one event file holding file_version, epoch_loss and epoch_accuracy per epoch, and
/// the graph of train_step once per run, read back with the binding's record reader.
#[test]
fn demo_writes_tensorboard_summaries() {
    let dir = fresh_dir("logdir");
    let logdir = dir.join("logs");
    let args = |epochs| Args { logdir: Some(logdir.clone()), ..Args::new(data(), dir.join("ckpt"), epochs) };
    let mut out = Vec::new();
    run(&args(2), &mut out).unwrap();
    let events: Vec<PathBuf> = std::fs::read_dir(&logdir).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(events.len(), 1, "{events:?}");
    let name = events[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("events.out.tfevents.") && name.ends_with(".v2"), "{name}");
    let records: Vec<Vec<u8>> =
        cairn::RecordReader::open(&events[0], Default::default()).unwrap().collect::<cairn::Result<_>>().unwrap();
    assert_eq!(records.len(), 1 + 2 * 2 + 1);
    let has = |what: &[u8]| records.iter().filter(|r| r.windows(what.len()).any(|w| w == what)).count();
    assert_eq!(has(b"epoch_loss"), 2);
    assert_eq!(has(b"epoch_accuracy"), 2);
    assert_eq!(has(b"brain.Event:2"), 1);
    // The resumed run writes a new file: one epoch and the graph again.
    run(&args(3), &mut out).unwrap();
    let mut counts: Vec<u64> = std::fs::read_dir(&logdir)
        .unwrap()
        .map(|e| cairn::record_file_count(e.unwrap().path(), Default::default()).unwrap())
        .collect();
    counts.sort();
    assert_eq!(counts, [1 + 2 + 1, 1 + 2 * 2 + 1]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn demo_refuses_a_bad_data_file() {
    let dir = fresh_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "1,2,3\n".repeat(5)).unwrap(); // line 5 is a test sample: read at the start
    let args = Args::new(bad.to_str().unwrap().into(), dir.join("ckpt"), 1);
    let err = run(&args, &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("bad.csv"), "{err}");
    let args = Args::new(dir.join("missing.csv").to_str().unwrap().into(), dir.join("ckpt"), 1);
    let err = run(&args, &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("missing.csv"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The spec's check: the C demo and this one print the same lines, fresh and resumed.
#[test]
fn demo_prints_the_lines_of_the_c_demo() {
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../bazel-bin/examples/c/train_digits");
    if !c.exists() {
        eprintln!("skipped: no {} (bazel build //examples/c:train_digits)", c.display());
        return;
    }
    let (c_dir, rust_dir) = (fresh_dir("c"), fresh_dir("vs-c"));
    for epochs in [2, 3] {
        let out = Command::new(&c)
            .args(["--data", &data(), "--dir", c_dir.to_str().unwrap(), "--epochs", &epochs.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let c_lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(|l| masked(l, &c_dir)).collect();
        let rust_lines: Vec<String> = rust_demo(&rust_dir, epochs).iter().map(|l| masked(l, &rust_dir)).collect();
        assert_eq!(rust_lines, c_lines, "--epochs {epochs}");
    }
    std::fs::remove_dir_all(&c_dir).unwrap();
    std::fs::remove_dir_all(&rust_dir).unwrap();
}
