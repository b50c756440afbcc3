//! Input pipelines (cairn::data): each source (tensors, range, CSV and text files, TFRecord files
//! written with the record writer, list_files, a generator) and transformation, compiled and eager
//! map callbacks on worker threads (in order, deterministic), failing and panicking callbacks (an
//! error naming the map and the element, then the next element), end of data, save and restore
//! into a fresh iterator, and the iterator as a checkpoint child restored by a new checkpoint.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use cairn::data::{
    Cardinality, ComponentSpec, CsvOptions, Dataset, Element, FilterOptions, InterleaveOptions, MapOptions,
    TfRecordOptions, AUTOTUNE,
};
use cairn::{
    ops, Checkpoint, Code, Context, DType, DatasetIterator, Error, Example, FeatureSpec, Object, ObjectKind,
    RecordWriter, RecordWriterOptions, Result, Tensor, Variable,
};

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("data-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Every element's component `c` as int64 values, one vector per element.
fn column(ds: &Dataset, c: &str) -> Vec<Vec<i64>> {
    ds.iterate().unwrap().map(|e| e.unwrap()[c].to_vec::<i64>().unwrap()).collect()
}

/// The scalars of a dataset of int64 scalars (component `c`).
fn scalars(ds: &Dataset, c: &str) -> Vec<i64> {
    column(ds, c).into_iter().map(|v| v[0]).collect()
}

/// The first value of an int64 scalar element (eager callbacks read their inputs).
fn value(t: &Tensor) -> i64 {
    t.to_vec::<i64>().unwrap()[0]
}

#[test]
fn range_map_shuffle_batch_repeat_prefetch() -> Result<()> {
    let ctx = Context::new()?;
    let range = Dataset::range(&ctx, 0, 10, 1)?;
    assert_eq!(range.element_spec()?, [ComponentSpec::new("value", DType::Int64, &[])]);
    assert_eq!(range.cardinality(), Cardinality::Finite(10));
    assert_eq!(scalars(&range, "value"), (0..10).collect::<Vec<_>>());

    let doubled =
        range.map("double", |ctx, x| Ok(vec![ops::add(ctx, &x[0], &x[0])?]), MapOptions::new().output_names(&["y"]))?;
    assert_eq!(doubled.element_spec()?, [ComponentSpec::new("y", DType::Int64, &[])]);
    assert!(doubled.describe()?.contains("double"), "{}", doubled.describe()?);
    assert_eq!(scalars(&doubled, "y"), (0..10).map(|i| 2 * i).collect::<Vec<_>>());
    // The input stays usable.
    assert_eq!(scalars(&range, "value").len(), 10);

    // shuffle over an indexable input: a permutation; without reshuffling every pass is the same.
    let shuffled = doubled.shuffle(10, 3, false)?;
    let once = scalars(&shuffled, "y");
    let mut sorted = once.clone();
    sorted.sort();
    assert_eq!(sorted, scalars(&doubled, "y"));
    assert_eq!(scalars(&shuffled, "y"), once);
    let twice = scalars(&shuffled.repeat(Some(2))?, "y");
    assert_eq!(twice, [once.clone(), once.clone()].concat());
    // With reshuffle_each_iteration each pass is its own permutation.
    let passes = scalars(&doubled.shuffle(10, 3, true)?.repeat(Some(3))?, "y");
    assert_eq!(passes.len(), 30);
    for pass in passes.chunks(10) {
        let mut p = pass.to_vec();
        p.sort();
        assert_eq!(p, sorted);
    }
    assert!(passes[..10] != passes[10..20] || passes[10..20] != passes[20..], "{passes:?}");

    let batched = shuffled.batch(4, false)?;
    assert_eq!(batched.cardinality(), Cardinality::Finite(3));
    assert_eq!(batched.component(0)?.shape, [-1]);
    let batches = column(&batched, "y");
    assert_eq!(batches.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 2]);
    assert_eq!(batches.concat(), once);
    assert_eq!(shuffled.batch(4, true)?.component(0)?.shape, [4]);

    let pipeline = batched.repeat(None)?.prefetch(AUTOTUNE)?;
    assert_eq!(pipeline.cardinality(), Cardinality::Infinite);
    let first: Vec<Vec<i64>> = column(&pipeline.take(6)?, "y");
    assert_eq!(first[..3], first[3..]);
    assert_eq!(first[..3], batches[..]);
    Ok(())
}

#[test]
fn tensor_slices_and_the_small_transformations() -> Result<()> {
    let ctx = Context::new()?;
    let x = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
    let label = Tensor::new(&ctx, &[7i64, 8, 9], &[3])?;
    let slices = Dataset::from_tensor_slices(&ctx, &[("x", &x), ("label", &label)])?;
    assert_eq!(slices.num_components(), 2);
    assert_eq!(
        slices.element_spec()?,
        [ComponentSpec::new("x", DType::Float32, &[2]), ComponentSpec::new("label", DType::Int64, &[])]
    );
    let elements: Vec<Element> = slices.iterate()?.collect::<Result<_>>()?;
    assert_eq!(elements.len(), 3);
    assert_eq!(elements[1].names(), ["x", "label"]);
    assert_eq!(elements[1][0].to_vec::<f32>()?, [3.0, 4.0]);
    assert_eq!(elements[1].by_name("label").unwrap().to_vec::<i64>()?, [8]);
    assert!(elements[1].by_name("nope").is_none());
    assert_eq!(elements[2].len(), 2);

    let one = Dataset::from_tensors(&ctx, &[("x", &x)])?;
    assert_eq!(one.cardinality(), Cardinality::Finite(1));
    assert_eq!(one.iterate()?.next().unwrap()?["x"].shape(), [3, 2]);
    assert_eq!(
        scalars(
            &one.unbatch()?.select(&["x"], Some(&["row"]))?.map(
                "first",
                |ctx, r| Ok(vec![ops::cast(
                    ctx,
                    &ops::slice(ctx, &r[0], &[0], &[1])?,
                    DType::Int64,
                    Default::default()
                )?]),
                MapOptions::new().output_names(&["first"]),
            )?,
            "first"
        ),
        [1, 3, 5]
    );

    let range = |a, b| Dataset::range(&ctx, a, b, 1);
    assert_eq!(scalars(&range(0, 10)?.take(3)?, "value"), [0, 1, 2]);
    assert_eq!(scalars(&range(0, 10)?.skip(7)?, "value"), [7, 8, 9]);
    assert_eq!(scalars(&range(0, 10)?.shard(3, 1)?, "value"), [1, 4, 7]);
    assert_eq!(scalars(&range(0, 3)?.concatenate(&range(10, 12)?)?, "value"), [0, 1, 2, 10, 11]);
    let enumerated = range(5, 8)?.enumerate(100)?;
    assert_eq!(enumerated.component(0)?.name, "index");
    assert_eq!(scalars(&enumerated, "index"), [100, 101, 102]);
    let zipped = Dataset::zip(&[&range(0, 5)?, &range(10, 13)?.select(&["value"], Some(&["other"]))?])?;
    assert_eq!(zipped.cardinality(), Cardinality::Finite(3));
    assert_eq!(scalars(&zipped, "other"), [10, 11, 12]);
    assert_eq!(scalars(&range(0, 4)?.cache(None)?.repeat(Some(2))?, "value"), [0, 1, 2, 3, 0, 1, 2, 3]);
    let cache_file = temp("cache.bin");
    let cached = range(0, 4)?.cache(Some(&cache_file))?;
    assert_eq!(scalars(&cached, "value"), [0, 1, 2, 3]);
    assert_eq!(scalars(&cached, "value"), [0, 1, 2, 3]);

    // padded_batch: TensorFlow's example, elements [1], [2, 2], [3, 3, 3], [4, 4, 4, 4].
    let ragged = range(1, 5)?.map(
        "fill",
        |ctx, x| {
            let n = value(&x[0]);
            Ok(vec![Tensor::new(ctx, &vec![n; n as usize], &[n])?])
        },
        MapOptions::new().compile(false).output_specs(&[ComponentSpec::new("v", DType::Int64, &[-1])]),
    )?;
    let padded = column(&ragged.padded_batch(2, false, None, None)?, "v");
    assert_eq!(padded, [vec![1, 0, 2, 2], vec![3, 3, 3, 0, 4, 4, 4, 4]]);
    let minus_one = Tensor::scalar(&ctx, -1i64)?;
    let padded = ragged.padded_batch(4, false, Some(&[&[5]]), Some(&[Some(&minus_one)]))?;
    let batch = padded.iterate()?.next().unwrap()?;
    assert_eq!(batch[0].shape(), [4, 5]);
    assert_eq!(batch[0].to_vec::<i64>()?[..5], [1, -1, -1, -1, -1]);
    let err = ragged.padded_batch(2, false, Some(&[&[5], &[5]]), None).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    // Filter, compiled: the even values.
    let even = range(0, 10)?.filter(
        "even",
        |ctx, x| {
            let two = Tensor::scalar(ctx, 2i64)?;
            ops::equal(ctx, &ops::floor_mod(ctx, &x[0], &two)?, &Tensor::scalar(ctx, 0i64)?, Default::default())
        },
        FilterOptions::new(),
    )?;
    assert_eq!(even.cardinality(), Cardinality::Unknown);
    assert_eq!(scalars(&even, "value"), [0, 2, 4, 6, 8]);
    let eager = range(0, 10)?.filter(
        "big",
        |ctx, x| Tensor::scalar(ctx, value(&x[0]) > 6),
        FilterOptions::new().compile(false),
    )?;
    assert_eq!(scalars(&eager, "value"), [7, 8, 9]);
    Ok(())
}

#[test]
fn bad_arguments_are_errors_naming_the_transformation() -> Result<()> {
    let ctx = Context::new()?;
    let range = Dataset::range(&ctx, 0, 10, 1)?;
    let err = range.batch(0, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("batch"), "{err}");
    assert_eq!(range.shuffle(0, 1, true).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(Dataset::range(&ctx, 0, 10, 0).unwrap_err().code(), Code::InvalidArgument);
    assert_eq!(range.select(&["nope"], None).unwrap_err().code(), Code::NotFound);
    assert_eq!(range.component(1).unwrap_err().code(), Code::OutOfRange);
    // A compiled map's closure runs now: its error comes back from map().
    let err = range.map("broken", |_, _| Err(Error::new(Code::Unimplemented, "nope")), MapOptions::new()).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
    assert!(err.message().contains("nope"), "{err}");
    // Options the binding checks itself.
    let err = range.map("m", |_, x| Ok(x.to_vec()), MapOptions::new().outputs(2).output_names(&["a"])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = Dataset::csv(&ctx, &["x.csv"], &CsvOptions::new(&[DType::Int64]).defaults(&[None, None])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    Ok(())
}

#[test]
fn csv_and_text_files() -> Result<()> {
    let ctx = Context::new()?;
    let path = temp("table.csv");
    std::fs::write(&path, "id,score,name\n1,2.5,hello\n2,,\"a,b\"\n3,NA,x\n").unwrap();
    let options = CsvOptions::new(&[DType::Int64, DType::Float32, DType::String])
        .header(true)
        .defaults(&[None, Some("-1"), None])
        .na_value("NA");
    let csv = Dataset::csv(&ctx, &[&path], &options)?;
    let spec = csv.element_spec()?;
    assert_eq!(spec.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["id", "score", "name"]);
    assert_eq!(spec[2].dtype, DType::Uint8);
    let rows: Vec<Element> = csv.iterate()?.collect::<Result<_>>()?;
    assert_eq!(rows.len(), 3);
    assert_eq!(rows.iter().map(|r| value(&r["id"])).collect::<Vec<_>>(), [1, 2, 3]);
    let scores: Vec<f32> = rows.iter().map(|r| r["score"].to_vec::<f32>().unwrap()[0]).collect();
    assert_eq!(scores, [2.5, -1.0, -1.0]);
    assert_eq!(rows[1]["name"].to_vec::<u8>()?, b"a,b");

    let selected = CsvOptions::new(&[DType::Float32])
        .header(true)
        .select_columns(&[1])
        .column_names(&["s"])
        .defaults(&[Some("0")]);
    let s = Dataset::csv(&ctx, &[&path], &selected.na_value("NA"))?;
    assert_eq!(s.element_spec()?, [ComponentSpec::new("s", DType::Float32, &[])]);

    let semi = temp("semi.csv");
    std::fs::write(&semi, "1;2\n3;4\n").unwrap();
    let d = Dataset::csv(&ctx, &[&semi], &CsvOptions::new(&[DType::Int32, DType::Int32]).delimiter(b';'))?;
    let rows: Vec<Vec<i32>> = d.iterate()?.map(|e| e.unwrap()["1"].to_vec::<i32>().unwrap()).collect();
    assert_eq!(rows, [[2], [4]]);

    // A field that does not parse: an error naming the file, and the iterator goes on.
    let bad = temp("bad.csv");
    std::fs::write(&bad, "1\nx\n3\n").unwrap();
    let results: Vec<Result<Element>> =
        Dataset::csv(&ctx, &[&bad], &CsvOptions::new(&[DType::Int64]))?.iterate()?.collect();
    assert_eq!(results.len(), 3);
    let err = results[1].as_ref().unwrap_err();
    assert!(err.message().contains("bad.csv"), "{err}");
    assert_eq!(value(&results[2].as_ref().unwrap()[0]), 3);

    let text = temp("lines.txt");
    std::fs::write(&text, "first\nsecond line\n\nlast").unwrap();
    let lines: Vec<Vec<u8>> =
        Dataset::text_lines(&ctx, &[&text])?.iterate()?.map(|e| e.unwrap()["line"].to_vec::<u8>().unwrap()).collect();
    assert_eq!(lines, [b"first".to_vec(), b"second line".to_vec(), vec![], b"last".to_vec()]);

    let pattern = temp("lines.txt").parent().unwrap().join("*.csv");
    let files: Vec<String> = Dataset::list_files(&ctx, &[pattern.to_str().unwrap()], false, 0)?
        .iterate()?
        .map(|e| String::from_utf8(e.unwrap()["filename"].to_vec::<u8>().unwrap()).unwrap())
        .collect();
    assert!(files.len() >= 3 && files.windows(2).all(|w| w[0] < w[1]), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("/table.csv")), "{files:?}");
    let err = Dataset::list_files(&ctx, &["/nonexistent/*.nothing"], false, 0)
        .and_then(|d| d.iterate()?.next().transpose().map(|_| ()))
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    Ok(())
}

#[test]
fn tfrecord_files_and_examples() -> Result<()> {
    let ctx = Context::new()?;
    let path = temp("records.tfrecord");
    let mut w = RecordWriter::create(&path, RecordWriterOptions::new())?;
    for i in 0..5i64 {
        let mut ex = Example::new()?;
        ex.set_int64s("label", &[i])?;
        ex.set_floats("pixels", &[i as f32, 0.5])?;
        w.write(&ex.serialize()?)?;
    }
    w.close()?;
    let records = Dataset::tfrecord(&ctx, &[&path], TfRecordOptions::new())?;
    assert_eq!(records.element_spec()?, [ComponentSpec::new("record", DType::Uint8, &[-1])]);
    let bytes: Vec<Vec<u8>> = records.iterate()?.map(|e| e.unwrap()["record"].to_vec::<u8>().unwrap()).collect();
    assert_eq!(bytes.len(), 5);
    assert_eq!(Example::parse(&bytes[3])?.feature("label")?, cairn::Feature::Int64s(vec![3]));

    let specs =
        [FeatureSpec::fixed_len("label", DType::Int64, &[]), FeatureSpec::fixed_len("pixels", DType::Float32, &[2])];
    let parsed = records.parse_example("record", &specs)?.batch(5, false)?;
    let batch = parsed.iterate()?.next().unwrap()?;
    assert_eq!(batch["label"].to_vec::<i64>()?, [0, 1, 2, 3, 4]);
    assert_eq!(batch["pixels"].shape(), [5, 2]);

    let gz = temp("records.tfrecord.gz");
    let mut w = RecordWriter::create(&gz, RecordWriterOptions::new().compression(cairn::Compression::Gzip))?;
    for r in &bytes {
        w.write(r)?;
    }
    w.close()?;
    let gzipped = Dataset::tfrecord(
        &ctx,
        &[&gz, &gz],
        TfRecordOptions::new().compression(cairn::Compression::Gzip).num_parallel_reads(2),
    )?;
    assert_eq!(gzipped.iterate()?.count(), 10);
    let err = Dataset::tfrecord(&ctx, &[temp("missing.tfrecord")], TfRecordOptions::new())?
        .iterate()?
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("missing.tfrecord"), "{err}");
    Ok(())
}

#[test]
fn generator_and_interleave() -> Result<()> {
    let ctx = Context::new()?;
    let spec = [ComponentSpec::new("i", DType::Int64, &[]), ComponentSpec::new("pair", DType::Float32, &[2])];
    let generated = Dataset::from_generator(&ctx, &spec, |ctx, index| {
        if index >= 4 {
            return Ok(None);
        }
        Ok(Some(vec![Tensor::scalar(ctx, index)?, Tensor::new(ctx, &[index as f32, -1.0], &[2])?]))
    })?;
    assert_eq!(generated.element_spec()?, spec);
    let elements: Vec<Element> = generated.iterate()?.collect::<Result<_>>()?;
    assert_eq!(elements.iter().map(|e| value(&e["i"])).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert_eq!(elements[2]["pair"].to_vec::<f32>()?, [2.0, -1.0]);
    assert_eq!(scalars(&generated.batch(3, false)?.unbatch()?, "i"), [0, 1, 2, 3]); // usable again

    // An element that does not match the spec, and a generator that panics: errors, then more.
    let checked = Dataset::from_generator(&ctx, &spec[..1], |ctx, index| match index {
        1 => Ok(Some(vec![Tensor::scalar(ctx, 1.5f32)?])),
        2 => panic!("generator broke at {index}"),
        0..=3 => Ok(Some(vec![Tensor::scalar(ctx, index)?])),
        _ => Ok(None),
    })?;
    let results: Vec<Result<Element>> = checked.iterate()?.take(10).collect();
    assert_eq!(value(&results[0].as_ref().unwrap()["i"]), 0);
    assert_eq!(results[1].as_ref().unwrap_err().code(), Code::InvalidArgument);
    let err = results[2].as_ref().unwrap_err();
    assert!(err.message().contains("generator broke at 2"), "{err}");
    assert_eq!(value(&results.last().unwrap().as_ref().unwrap()["i"]), 3);

    // TensorFlow's interleave example: range(1, 6), each x repeated 6 times, cycle 2, block 4.
    let inner = [ComponentSpec::new("value", DType::Int64, &[])];
    let interleave = |parallel| -> Result<Vec<i64>> {
        let ds = Dataset::range(&ctx, 1, 6, 1)?.interleave(
            |ctx, x| Dataset::from_tensors(ctx, &[("value", &x[0])])?.repeat(Some(6)),
            &inner,
            InterleaveOptions::new().cycle_length(2).block_length(4).num_parallel_calls(parallel),
        )?;
        Ok(scalars(&ds, "value"))
    };
    let want = [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5];
    assert_eq!(interleave(0)?, want);
    assert_eq!(interleave(2)?, want);
    // A callback returning a dataset of another spec, or an error: errors naming the element.
    let wrong = Dataset::range(&ctx, 0, 3, 1)?.interleave(
        |ctx, x| match value(&x[0]) {
            1 => Dataset::range(ctx, 0, 1, 1)?.select(&["value"], Some(&["other"])),
            2 => Err(Error::new(Code::Aborted, "no dataset for 2")),
            _ => Dataset::from_tensors(ctx, &[("value", &x[0])]),
        },
        &inner,
        InterleaveOptions::new().cycle_length(1),
    )?;
    let results: Vec<Result<Element>> = wrong.iterate()?.collect();
    assert_eq!(value(&results[0].as_ref().unwrap()["value"]), 0);
    assert!(results[1..].iter().all(|r| r.is_err()), "{results:?}");
    assert!(results.iter().any(|r| r.as_ref().is_err_and(|e| e.message().contains("no dataset for 2"))), "{results:?}");
    Ok(())
}

#[test]
fn callbacks_run_on_worker_threads_in_order() -> Result<()> {
    let ctx = Context::new()?;
    let threads = Arc::new(Mutex::new(HashSet::<ThreadId>::new()));
    let seen = Arc::clone(&threads);
    let squares = Dataset::range(&ctx, 0, 200, 1)?.map(
        "square",
        move |ctx, x| {
            seen.lock().unwrap().insert(thread::current().id());
            let v = value(&x[0]);
            if v % 7 == 0 {
                thread::yield_now(); // let later elements overtake this one
            }
            Ok(vec![Tensor::scalar(ctx, v * v)?])
        },
        MapOptions::new().compile(false).num_parallel_calls(4).output_specs(&[ComponentSpec::new(
            "sq",
            DType::Int64,
            &[],
        )]),
    )?;
    let want: Vec<i64> = (0..200).map(|i| i * i).collect();
    assert_eq!(scalars(&squares, "sq"), want);
    assert_eq!(scalars(&squares.prefetch(4)?, "sq"), want); // deterministic, run after run
    let threads = threads.lock().unwrap();
    assert!(threads.iter().any(|t| *t != thread::current().id()), "{threads:?}");

    // Compiled with 4 parallel calls: traced once, replayed on the workers.
    let traces = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&traces);
    let compiled = Dataset::range(&ctx, 0, 200, 1)?.map(
        "square",
        move |ctx, x| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(vec![ops::mul(ctx, &x[0], &x[0])?])
        },
        MapOptions::new().num_parallel_calls(4),
    )?;
    assert_eq!(scalars(&compiled, "0"), want);
    assert_eq!(traces.load(Ordering::SeqCst), 1);

    // Several threads pulling from one iterator: each element goes to exactly one of them.
    let it = compiled.iterate()?;
    let mut got: Vec<i64> = thread::scope(|s| {
        let pullers: Vec<_> =
            (0..4).map(|_| s.spawn(|| (&it).map(|e| value(&e.unwrap()["0"])).collect::<Vec<_>>())).collect();
        pullers.into_iter().flat_map(|p| p.join().unwrap()).collect()
    });
    got.sort();
    assert_eq!(got, want);
    Ok(())
}

#[test]
fn a_failing_callback_names_the_map_and_the_element_and_the_iterator_continues() -> Result<()> {
    let ctx = Context::new()?;
    for parallel in [0, 4] {
        let ds = Dataset::range(&ctx, 0, 6, 1)?.map(
            "checked",
            |ctx, x| match value(&x[0]) {
                2 => Err(Error::new(Code::FailedPrecondition, "two is not allowed")),
                4 => panic!("four panics"),
                v => Ok(vec![Tensor::scalar(ctx, v * 10)?]),
            },
            MapOptions::new().compile(false).num_parallel_calls(parallel).output_specs(&[ComponentSpec::new(
                "v",
                DType::Int64,
                &[],
            )]),
        )?;
        let it = ds.iterate()?;
        let results: Vec<Result<Element>> = (&it).collect();
        assert_eq!(results.len(), 6, "parallel {parallel}: {results:?}");
        let ok: Vec<i64> = results.iter().filter_map(|r| r.as_ref().ok()).map(|e| value(&e["v"])).collect();
        assert_eq!(ok, [0, 10, 30, 50]);
        let err = results[2].as_ref().unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
        assert!(
            err.message().contains("map 'checked' (element 2)") && err.message().contains("two is not allowed"),
            "{err}"
        );
        let err = results[4].as_ref().unwrap_err();
        assert_eq!(err.code(), Code::Unknown, "{err}");
        assert!(err.message().contains("element 4") && err.message().contains("panicked: four panics"), "{err}");
        assert_eq!(it.position(), 4);
    }

    // A closure returning the wrong number of tensors.
    let ds = Dataset::range(&ctx, 0, 2, 1)?.map(
        "two",
        |_, x| Ok(vec![x[0].clone(), x[0].clone()]),
        MapOptions::new().compile(false).output_specs(&[ComponentSpec::new("v", DType::Int64, &[])]),
    )?;
    let err = ds.iterate()?.next().unwrap().unwrap_err();
    assert!(err.message().contains("returned 2 tensor(s)"), "{err}");
    Ok(())
}

#[test]
fn end_of_data_and_close() -> Result<()> {
    let ctx = Context::new()?;
    let it = Dataset::range(&ctx, 0, 2, 1)?.iterate()?;
    assert_eq!(it.kind(), ObjectKind::Iterator);
    assert_eq!(it.names(), ["value"]);
    assert_eq!(value(&it.get_next()?.unwrap()[0]), 0);
    assert_eq!(value(&it.get_next()?.unwrap()[0]), 1);
    assert!(it.get_next()?.is_none());
    assert!(it.get_next()?.is_none()); // and again
    assert_eq!(it.position(), 2);
    assert!(it.dataset()?.describe()?.contains("range"));
    let it = Dataset::range(&ctx, 0, 10, 1)?.prefetch(2)?.iterate()?;
    it.get_next()?;
    it.close()?;
    it.close()?; // again: nothing
    assert_eq!(it.get_next().unwrap_err().code(), Code::FailedPrecondition);
    Ok(())
}

/// The pipeline of the save and restore tests: shuffle, parallel map, batch, repeat, prefetch.
fn pipeline(ctx: &Context) -> Result<Dataset> {
    Dataset::range(ctx, 0, 50, 1)?
        .shuffle(50, 3, true)?
        .map(
            "plus",
            |ctx, x| Ok(vec![ops::add(ctx, &x[0], &Tensor::scalar(ctx, 1000i64)?)?]),
            MapOptions::new().num_parallel_calls(4).output_names(&["v"]),
        )?
        .batch(3, false)?
        .repeat(Some(2))?
        .prefetch(2)
}

fn rest(it: &DatasetIterator) -> Vec<Vec<i64>> {
    it.map(|e| e.unwrap()["v"].to_vec::<i64>().unwrap()).collect()
}

#[test]
fn save_and_restore_into_a_fresh_iterator() -> Result<()> {
    let ctx = Context::new()?;
    let ds = pipeline(&ctx)?;
    for cut in [0, 1, 7, 17, 20, 33] {
        let it = ds.iterate()?;
        for _ in 0..cut {
            it.get_next()?.unwrap();
        }
        let state = it.save()?;
        assert!(!state.is_empty());
        let want = rest(&it);
        assert_eq!(want.len(), 34 - cut, "cut {cut}");
        let fresh = ds.iterate()?;
        fresh.restore(&state)?;
        assert_eq!(fresh.position(), cut as i64);
        assert_eq!(rest(&fresh), want, "cut {cut}");
    }
    // A state of another pipeline, and corrupt bytes.
    let state = ds.iterate()?.save()?;
    let other = Dataset::range(&ctx, 0, 5, 1)?.iterate()?;
    let err = other.restore(&state).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(ds.iterate()?.restore(&[1, 2, 3]).unwrap_err().code(), Code::DataLoss);
    Ok(())
}

#[test]
fn the_iterator_is_a_checkpoint_child() -> Result<()> {
    let ctx = Context::new()?;
    let ds = pipeline(&ctx)?;
    let path = temp("ckpt-iterator");
    let (want, saved) = {
        let it = ds.iterate()?;
        let v = Variable::new(&ctx, &Tensor::scalar(&ctx, 5.0f32)?)?;
        let ckpt = Checkpoint::new(&ctx, &[("data", &it), ("v", &v)])?;
        for _ in 0..11 {
            it.get_next()?.unwrap();
        }
        ckpt.write(&path)?;
        let root_child = DatasetIterator::try_from(ckpt.root().get("data")?)?;
        assert_eq!(root_child.position(), 11);
        (rest(&it), it.position())
    };
    assert_eq!(saved, 34);
    let it = ds.iterate()?;
    let v = Variable::new(&ctx, &Tensor::scalar(&ctx, 0.0f32)?)?;
    let ckpt = Checkpoint::new(&ctx, &[("data", &it), ("v", &v)])?;
    ckpt.restore(&path)?.assert_consumed()?;
    assert_eq!(it.position(), 11);
    assert_eq!(v.read()?.to_vec::<f32>()?, [5.0]);
    assert_eq!(rest(&it), want);
    let keys: Vec<String> = cairn::CheckpointReader::open(&path)?.entries().into_iter().map(|e| e.key).collect();
    assert!(keys.contains(&"data/.ATTRIBUTES/ITERATOR_STATE".to_string()), "{keys:?}");
    // Not an iterator.
    let err = DatasetIterator::try_from(Object::from(v)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    Ok(())
}

#[test]
fn datasets_and_iterators_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<Dataset>();
    both::<DatasetIterator>();
    both::<Element>();
}

/// Each closure is dropped once, when the last dataset using it goes (C's `release`), and at once
/// when building the dataset fails.
#[test]
fn closures_are_dropped_with_the_last_dataset() -> Result<()> {
    let ctx = Context::new()?;
    let token = Arc::new(());
    let held = Arc::clone(&token);
    let mapped = Dataset::range(&ctx, 0, 3, 1)?.map(
        "keep",
        move |_, x| {
            let _ = &held;
            Ok(x.to_vec())
        },
        MapOptions::new(),
    )?;
    assert_eq!(Arc::strong_count(&token), 2);
    let batched = mapped.batch(2, false)?;
    drop(mapped);
    assert_eq!(Arc::strong_count(&token), 2, "the batch still uses the map");
    let it = batched.iterate()?;
    drop(batched);
    assert_eq!(it.count(), 2);
    assert_eq!(Arc::strong_count(&token), 1);

    let held = Arc::clone(&token);
    let err = Dataset::range(&ctx, 0, 3, 1)?
        .map(
            "fails",
            move |_, _| {
                let _ = &held;
                Err(Error::new(Code::Cancelled, "traced and failed"))
            },
            MapOptions::new(),
        )
        .unwrap_err();
    assert_eq!(err.code(), Code::Cancelled);
    assert_eq!(Arc::strong_count(&token), 1);
    for generator_fails in [false, true] {
        let held = Arc::clone(&token);
        let spec = if generator_fails { vec![] } else { vec![ComponentSpec::new("i", DType::Int64, &[])] };
        let made = Dataset::from_generator(&ctx, &spec, move |_, _| {
            let _ = &held;
            Ok(None)
        });
        assert_eq!(made.is_err(), generator_fails);
        drop(made);
        assert_eq!(Arc::strong_count(&token), 1);
    }
    Ok(())
}
