//! Record files: writer and reader round trips in every compression, offsets and seeking, the
//! index sidecar, counts and shards, a file still being written ("not yet", then resumed), a
//! corrupt file's error and a writer used after close.

use std::path::{Path, PathBuf};

use cairn::{
    record_file_count, record_index_build, record_shard_range, Code, Compression, RecordReader, RecordReaderOptions,
    RecordWriter, RecordWriterOptions, Result,
};

fn temp(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn records(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("record {i}").repeat(i % 7).into_bytes()).collect()
}

fn write_all(path: &Path, options: RecordWriterOptions, records: &[Vec<u8>]) {
    let mut w = RecordWriter::create(path, options).unwrap();
    for r in records {
        w.write(r).unwrap();
    }
    assert_eq!(w.count(), records.len() as u64);
    assert_eq!(w.path(), path);
    w.close().unwrap();
}

#[test]
fn round_trip_in_every_compression() {
    let want = records(50);
    for c in Compression::ALL {
        let path = temp(&format!("round-trip-{c:?}.tfrecord"));
        write_all(&path, RecordWriterOptions::new().compression(c).level(9), &want);
        let opts = RecordReaderOptions::new().compression(c);
        let got: Vec<Vec<u8>> = RecordReader::open(&path, opts).unwrap().collect::<Result<_>>().unwrap();
        assert_eq!(got, want, "{c:?}");
        assert_eq!(record_file_count(&path, opts).unwrap(), 50, "{c:?}");
    }
}

#[test]
fn offsets_seek_and_the_index() {
    let want = records(20);
    let path = temp("index.tfrecord");
    write_all(&path, RecordWriterOptions::new().write_index(true), &want);
    assert!(Path::new(&format!("{}.cairnidx", path.display())).exists());

    let mut r = RecordReader::open(&path, Default::default()).unwrap();
    assert_eq!(r.offset(), 0);
    let mut offsets = Vec::new();
    loop {
        let at = r.offset();
        match r.read().unwrap() {
            Some(rec) => offsets.push((at, rec.to_vec())),
            None => break,
        }
    }
    assert!(!r.partial());
    assert_eq!(offsets.len(), 20);
    assert_eq!(r.offset(), std::fs::metadata(&path).unwrap().len());
    // Back to record 13 by offset, then by index.
    r.seek(offsets[13].0).unwrap();
    assert_eq!(r.read().unwrap().unwrap(), &want[13][..]);
    r.seek_record(5).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), want[5]);
    assert_eq!(r.offset(), offsets[6].0);
    assert_eq!(r.seek_record(21).unwrap_err().code(), Code::OutOfRange);

    // Shards cover every record once.
    let mut seen = Vec::new();
    for shard in 0..3 {
        let range = record_shard_range(20, 3, shard).unwrap();
        r.seek_record(range.start).unwrap();
        seen.extend(r.by_ref().take((range.end - range.start) as usize).map(|x| x.unwrap()));
    }
    assert_eq!(seen, want);
    assert_eq!(record_shard_range(20, 3, 3).unwrap_err().code(), Code::InvalidArgument);
}

#[test]
fn seek_record_needs_an_index_and_index_build_makes_one() {
    let path = temp("no-index.tfrecord");
    write_all(&path, RecordWriterOptions::new(), &records(8));
    let mut r = RecordReader::open(&path, Default::default()).unwrap();
    let err = r.seek_record(3).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert_eq!(record_index_build(&path, Default::default()).unwrap(), 8);
    let mut r = RecordReader::open(&path, Default::default()).unwrap();
    r.seek_record(3).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), records(8)[3]);
}

#[test]
fn append_adds_records() {
    let path = temp("append.tfrecord");
    write_all(&path, RecordWriterOptions::new(), &records(3));
    let mut w = RecordWriter::create(&path, RecordWriterOptions::new().append(true)).unwrap();
    w.write(b"appended").unwrap();
    w.sync().unwrap();
    drop(w); // closes
    let got: Vec<Vec<u8>> = RecordReader::open(&path, Default::default()).unwrap().collect::<Result<_>>().unwrap();
    assert_eq!(got.len(), 4);
    assert_eq!(got[3], b"appended");
    let err = RecordWriter::create(&path, RecordWriterOptions::new().append(true).write_index(true)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

/// A truncated last record is "not yet": the iteration ends with partial() set, and resumes once
/// the rest of the file is there.
#[test]
fn a_file_being_written_is_read_as_it_grows() {
    let full = temp("full.tfrecord");
    write_all(&full, RecordWriterOptions::new(), &[b"one".to_vec(), b"two, longer".to_vec()]);
    let bytes = std::fs::read(&full).unwrap();
    let growing = temp("growing.tfrecord");
    let cut = bytes.len() - 5;
    std::fs::write(&growing, &bytes[..cut]).unwrap();

    let mut r = RecordReader::open(&growing, Default::default()).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), b"one");
    let at = r.offset();
    assert!(r.next().is_none());
    assert!(r.partial());
    assert_eq!(r.offset(), at);

    use std::io::Write;
    std::fs::OpenOptions::new().append(true).open(&growing).unwrap().write_all(&bytes[cut..]).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), b"two, longer");
    assert!(r.next().is_none());
    assert!(!r.partial());

    // A flushed writer's records are seen while it is open.
    let live = temp("live.tfrecord");
    let mut w = RecordWriter::create(&live, RecordWriterOptions::new().compression(Compression::Gzip)).unwrap();
    let mut r = RecordReader::open(&live, RecordReaderOptions::new().compression(Compression::Gzip)).unwrap();
    w.write(b"first").unwrap();
    w.flush().unwrap();
    assert_eq!(r.next().unwrap().unwrap(), b"first");
    assert!(r.next().is_none());
    w.write(b"second").unwrap();
    w.flush().unwrap();
    assert_eq!(r.next().unwrap().unwrap(), b"second");
    w.close().unwrap();
}

#[test]
fn a_corrupt_record_names_the_path_and_offset() {
    let path = temp("corrupt.tfrecord");
    write_all(&path, RecordWriterOptions::new(), &[b"good".to_vec(), b"will be damaged".to_vec()]);
    let mut bytes = std::fs::read(&path).unwrap();
    let second = 8 + 4 + 4 + 4; // the first record: length, its CRC, 4 bytes, their CRC
    bytes[second + 12 + 3] ^= 0x20; // a byte of the second record's data
    std::fs::write(&path, &bytes).unwrap();

    let mut r = RecordReader::open(&path, Default::default()).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), b"good");
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(err.code(), Code::DataLoss, "{err}");
    assert!(err.message().contains(path.to_str().unwrap()), "{err}");
    assert!(err.message().contains(&format!("offset {second}")), "{err}");
    assert!(r.next().is_none(), "the iterator ends after an error");
    // Without checksums the damaged bytes come back.
    let opts = RecordReaderOptions::new().verify_checksums(false);
    assert_eq!(RecordReader::open(&path, opts).unwrap().count(), 2);
    assert_eq!(record_file_count(&path, Default::default()).unwrap_err().code(), Code::DataLoss);
}

#[test]
fn errors_of_open_and_of_a_closed_writer() {
    let missing = temp("no/such/dir/file.tfrecord");
    let err = RecordWriter::create(&missing, Default::default()).unwrap_err();
    assert!(err.message().contains("no/such/dir"), "{err}");
    let err = RecordReader::open(temp("absent.tfrecord"), Default::default()).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("absent.tfrecord"), "{err}");
    let err = RecordWriter::create(temp("bad-level.tfrecord"), RecordWriterOptions::new().level(42)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    let mut w = RecordWriter::create(temp("closed.tfrecord"), Default::default()).unwrap();
    w.write(b"x").unwrap();
    w.close().unwrap();
    w.close().unwrap(); // again: nothing
    let err = w.write(b"y").unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert_eq!(w.count(), 1);
}
