//! Summaries: every kind written to an event file and read back with the binding's own record
//! reader; the default writer and step; a compiled function that logs writes on every call; the
//! graph of a compiled function; errors naming the tag; a writer used after close.
//! The default writer and step are process-wide, so the tests that use them hold LOCK.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use cairn::summary::{self, SummaryWriter, SummaryWriterOptions};
use cairn::{ops, Code, Context, Function, RecordReader, Result, Tensor};

static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn logdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("summary-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The records of the writer's event file, after a flush.
fn events(w: &SummaryWriter) -> Vec<Vec<u8>> {
    w.flush().unwrap();
    RecordReader::open(w.path().unwrap(), Default::default()).unwrap().collect::<Result<_>>().unwrap()
}

/// How many records hold `what`.
fn holding(records: &[Vec<u8>], what: impl AsRef<[u8]>) -> usize {
    let what = what.as_ref();
    records.iter().filter(|r| r.windows(what.len()).any(|w| w == what)).count()
}

#[test]
fn every_kind_of_summary_is_written() {
    let ctx = Context::new().unwrap();
    let dir = logdir("kinds");
    let w = SummaryWriter::create(&dir, SummaryWriterOptions::new().max_queue(2).flush_millis(0)).unwrap();
    let path = w.path().unwrap();
    assert_eq!(path.parent().unwrap(), dir);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("events.out.tfevents.") && name.ends_with(".v2"), "{name}");
    assert_eq!(events(&w).len(), 1); // file_version
    assert_eq!(holding(&events(&w), "brain.Event:2"), 1);

    w.scalar("loss", 0.25, Some(1)).unwrap();
    w.text("notes", "hello, TensorBoard", Some(1)).unwrap();
    w.scalar_tensor(&ctx, "loss_t", &Tensor::scalar(&ctx, 0.5f64).unwrap(), Some(2)).unwrap();
    let values = Tensor::new(&ctx, &[1.0f32, 2.0, 2.5, 7.0], &[2, 2]).unwrap();
    w.histogram(&ctx, "weights", &values, 0, Some(3)).unwrap();
    let image = Tensor::new(&ctx, &[0u8, 64, 128, 255, 10, 20, 30, 40, 50, 60, 70, 80], &[1, 2, 2, 3]).unwrap();
    w.image(&ctx, "image", &image, None, Some(4)).unwrap();
    let clip: Vec<f32> = (0..80).map(|i| (i as f32 / 10.0).sin()).collect();
    w.audio(&ctx, "tone", &Tensor::new(&ctx, &clip, &[1, 80, 1]).unwrap(), 8000.0, Some(1), Some(5)).unwrap();

    let records = events(&w);
    assert_eq!(records.len(), 1 + 6);
    for tag in ["loss", "notes", "loss_t", "weights", "image", "tone"] {
        assert!(holding(&records, tag) >= 1, "no record holds {tag}");
    }
    assert_eq!(holding(&records, "hello, TensorBoard"), 1);
    assert_eq!(holding(&records, b"\x89PNG"), 1);
    assert_eq!(holding(&records, "RIFF"), 1);
    w.close().unwrap();
    assert_eq!(cairn::record_file_count(&path, Default::default()).unwrap(), 7);
}

#[test]
fn errors_name_the_tag_and_a_closed_writer_refuses() {
    let _g = lock();
    let ctx = Context::new().unwrap();
    let w = SummaryWriter::create(logdir("errors"), SummaryWriterOptions::new().filename_suffix("test")).unwrap();
    assert!(w.path().unwrap().to_str().unwrap().ends_with(".test"));

    let err = w.scalar_tensor(&ctx, "not_scalar", &Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap(), Some(1));
    let err = err.unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("not_scalar"), "{err}");
    let err = w.image(&ctx, "flat_image", &Tensor::new(&ctx, &[1u8; 4], &[4]).unwrap(), None, Some(1)).unwrap_err();
    assert!(err.message().contains("flat_image"), "{err}");
    let nan = Tensor::new(&ctx, &[f32::NAN], &[1]).unwrap();
    assert!(w.histogram(&ctx, "nan_hist", &nan, 5, Some(1)).unwrap_err().message().contains("nan_hist"));

    summary::set_step(None);
    assert_eq!(summary::step(), None);
    let err = w.scalar("no_step", 1.0, None).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("no_step"), "{err}");

    w.close().unwrap();
    w.close().unwrap(); // twice is fine
    for err in [w.scalar("late", 1.0, Some(1)).unwrap_err(), w.flush().unwrap_err()] {
        assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    }
    let err = SummaryWriter::create(logdir("errors").join("x"), SummaryWriterOptions::new().max_queue(0)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

#[test]
fn the_default_writer_and_step() {
    let _g = lock();
    let w = SummaryWriter::create(logdir("default"), SummaryWriterOptions::new()).unwrap();
    SummaryWriter::clear_default();
    summary::scalar("nowhere", 1.0, Some(1)).unwrap(); // no default writer: nothing, no error
    w.set_default();
    summary::set_step(Some(42));
    assert_eq!(summary::step(), Some(42));
    summary::scalar("default_scalar", 2.0, None).unwrap();
    summary::text("default_text", "via the default", None).unwrap();
    SummaryWriter::clear_default();
    summary::set_step(None);
    summary::scalar("cleared", 3.0, Some(1)).unwrap();
    let records = events(&w);
    assert_eq!(records.len(), 1 + 2);
    assert_eq!(holding(&records, "nowhere") + holding(&records, "cleared"), 0);
    assert_eq!(holding(&records, "default_scalar"), 1);
}

/// A traced function that logs writes on every call (the summary is recorded as an op), at the
/// default step read when it runs; its graph is a graph event.
#[test]
fn a_compiled_function_logs_on_every_call() {
    let _g = lock();
    let ctx = Context::new().unwrap();
    let w = SummaryWriter::create(logdir("function"), SummaryWriterOptions::new()).unwrap();
    let writer = &w;
    let mut traces = 0;
    let mut square = Function::new(&ctx, "square", |ctx, x| {
        traces += 1;
        let y = ops::mul(ctx, &x[0], &x[0])?;
        let total = ops::sum(ctx, &y, Default::default())?;
        writer.scalar_tensor(ctx, "traced_total", &total, None)?;
        writer.histogram(ctx, "traced_values", &y, 4, None)?;
        Ok(vec![y])
    })
    .unwrap();
    for step in 1..=3 {
        summary::set_step(Some(step));
        let x = Tensor::new(&ctx, &[step as f32, 1.0], &[2]).unwrap();
        assert_eq!(square.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), [(step * step) as f32, 1.0]);
    }
    summary::set_step(None);
    assert_eq!(square.num_traces(), 1);
    let records = events(&w);
    assert_eq!(holding(&records, "traced_total"), 3);
    assert_eq!(holding(&records, "traced_values"), 3);

    w.graph(&square, 0, Some(0)).unwrap();
    let records = events(&w);
    assert_eq!(records.len(), 1 + 6 + 1);
    assert_eq!(w.graph(&square, 1, Some(0)).unwrap_err().code(), Code::OutOfRange);
    drop(square);
    assert_eq!(traces, 1);
}
