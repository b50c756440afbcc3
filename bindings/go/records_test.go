package cairn_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cairn.dev/cairn"
)

// writeRecords writes records to path with options and checks Count and Close.
func writeRecords(t *testing.T, path string, records [][]byte, options ...cairn.RecordWriterOption) {
	t.Helper()
	w, err := cairn.OpenRecordWriter(path, options...)
	ok(t, err)
	for _, r := range records {
		ok(t, w.Write(r))
	}
	if w.Count() != int64(len(records)) {
		t.Errorf("Count() = %d, want %d", w.Count(), len(records))
	}
	ok(t, w.Close())
}

// readAll reads every record with Scan, failing the test on an error.
func readAll(t *testing.T, r *cairn.RecordReader) [][]byte {
	t.Helper()
	var got [][]byte
	for r.Scan() {
		got = append(got, r.Record())
	}
	ok(t, r.Err())
	return got
}

func someRecords(n int) [][]byte {
	records := make([][]byte, n)
	for i := range records {
		records[i] = bytes.Repeat([]byte{byte(i)}, i*7)
	}
	return records
}

func TestRecordsRoundTrip(t *testing.T) {
	records := someRecords(20)
	for _, c := range []cairn.Compression{cairn.CompressionNone, cairn.CompressionZlib, cairn.CompressionGzip} {
		t.Run(c.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "data.tfrecord")
			writeRecords(t, path, records, c, cairn.WithLevel(9))
			r := must(cairn.OpenRecordReader(path, c, cairn.WithBufferSize(64), cairn.WithReadAhead(false)))
			defer r.Close()
			if got := readAll(t, r); !slices.EqualFunc(got, records, bytes.Equal) {
				t.Errorf("read %d records, not the %d written", len(got), len(records))
			}
			if r.Partial() {
				t.Error("Partial() at a clean end")
			}
			if n := must(cairn.CountRecords(path, c)); n != 20 {
				t.Errorf("CountRecords = %d, want 20", n)
			}
		})
	}
	// Without compression the offset is the file offset: 16 bytes of framing per record.
	path := filepath.Join(t.TempDir(), "plain.tfrecord")
	writeRecords(t, path, records)
	r := must(cairn.OpenRecordReader(path))
	defer r.Close()
	var offsets []int64
	for r.Scan() {
		offsets = append(offsets, r.Offset())
	}
	if offsets[0] != 16 || offsets[2] != 16+23+30 {
		t.Errorf("offsets %v", offsets[:3])
	}
	ok(t, r.SeekOffset(offsets[1]))
	if rec, got, err := r.Next(); err != nil || !got || !bytes.Equal(rec, records[2]) {
		t.Errorf("after SeekOffset: %v %v %v", rec, got, err)
	}
	wantCode(t, r.SeekOffset(-1), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
}

func TestRecordsAppendIndexAndShards(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.tfrecord")
	records := someRecords(10)
	writeRecords(t, path, records[:6], cairn.WithIndex(true))
	if _, err := os.Stat(path + ".cairnidx"); err != nil {
		t.Fatalf("no index sidecar: %v", err)
	}
	_, err := cairn.OpenRecordWriter(path, cairn.WithIndex(true), cairn.WithAppend(true))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")

	// Appending drops the index: SeekRecord needs a new one.
	writeRecords(t, path, records[6:], cairn.WithAppend(true))
	r := must(cairn.OpenRecordReader(path))
	defer r.Close()
	wantCode(t, r.SeekRecord(3), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "")
	if n := must(cairn.BuildRecordIndex(path)); n != 10 {
		t.Fatalf("BuildRecordIndex = %d, want 10", n)
	}
	var all [][]byte
	for shard := int64(0); shard < 3; shard++ {
		begin, end := must2(cairn.ShardRange(10, 3, shard))
		ok(t, r.SeekRecord(begin))
		for i := begin; i < end; i++ {
			rec, got, err := r.Next()
			if err != nil || !got {
				t.Fatalf("shard %d record %d: %v %v", shard, i, got, err)
			}
			all = append(all, rec)
		}
	}
	if !slices.EqualFunc(all, records, bytes.Equal) {
		t.Errorf("the shards do not hold the records once each in order")
	}
	wantCode(t, r.SeekRecord(11), cairn.CodeOutOfRange, cairn.ErrOutOfRange, "")
	_, _, err = cairn.ShardRange(10, 3, 3)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}

// A record still being written is "not yet": Next reports none with Partial set, stays at its
// offset, and reads the record once the rest is there.
func TestRecordsPartialTailResumes(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.tfrecord")
	writeRecords(t, whole, [][]byte{[]byte("first"), []byte("second record")})
	data := must(os.ReadFile(whole))
	path := filepath.Join(dir, "growing.tfrecord")
	cut := 16 + 5 + 10 // the first record and 10 bytes of the second
	ok(t, os.WriteFile(path, data[:cut], 0o644))

	r := must(cairn.OpenRecordReader(path))
	defer r.Close()
	if rec, got, err := r.Next(); err != nil || !got || string(rec) != "first" {
		t.Fatalf("first record: %q %v %v", rec, got, err)
	}
	for i := 0; i < 2; i++ {
		if rec, got, err := r.Next(); err != nil || got || rec != nil || !r.Partial() || r.Offset() != 21 {
			t.Fatalf("at the cut: %q %v %v, Partial %v, Offset %d", rec, got, err, r.Partial(), r.Offset())
		}
	}
	f := must(os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0))
	must(f.Write(data[cut:]))
	ok(t, f.Close())
	if rec, got, err := r.Next(); err != nil || !got || string(rec) != "second record" {
		t.Fatalf("resumed: %q %v %v", rec, got, err)
	}
	if _, got, err := r.Next(); err != nil || got || r.Partial() {
		t.Errorf("at the end: %v %v, Partial %v", got, err, r.Partial())
	}
}

func TestRecordsErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data.tfrecord")
	writeRecords(t, path, [][]byte{[]byte("aaaa"), []byte("bbbb")})
	data := must(os.ReadFile(path))
	data[20+12+2] ^= 0xff // a byte of the second record's data
	ok(t, os.WriteFile(path, data, 0o644))

	r := must(cairn.OpenRecordReader(path))
	defer r.Close()
	got := [][]byte{}
	for r.Scan() {
		got = append(got, r.Record())
	}
	if len(got) != 1 {
		t.Errorf("%d records before the corrupt one, want 1", len(got))
	}
	wantCode(t, r.Err(), cairn.CodeDataLoss, cairn.ErrDataLoss, fmt.Sprintf("%s: corrupt record at offset 20", path))

	_, err := cairn.OpenRecordReader(filepath.Join(dir, "missing"))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing")
	_, err = cairn.OpenRecordWriter(filepath.Join(dir, "no", "such", "dir"))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "no/such/dir")
	_, err = cairn.OpenRecordWriter(filepath.Join(dir, "x"), cairn.CompressionZlib, cairn.WithLevel(11))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")

	// A closed writer and reader are the binding's errors; closing again is fine.
	w := must(cairn.OpenRecordWriter(filepath.Join(dir, "closed")))
	ok(t, w.Close())
	ok(t, w.Close())
	wantError(t, w.Write([]byte("x")), "FAILED_PRECONDITION: RecordWriter.Write: record writer is closed")
	wantError(t, w.Flush(), "FAILED_PRECONDITION: RecordWriter.Flush: record writer is closed")
	wantError(t, w.Sync(), "FAILED_PRECONDITION: RecordWriter.Sync: record writer is closed")
	r.Close()
	_, _, err = r.Next()
	wantError(t, err, "FAILED_PRECONDITION: RecordReader.Next: record reader is closed")
	var nilWriter *cairn.RecordWriter
	wantError(t, nilWriter.Write(nil), "INVALID_ARGUMENT: RecordWriter.Write: record writer is nil")
}

func TestRecordsFlushAndSyncShowRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.tfrecord")
	w := must(cairn.OpenRecordWriter(path, cairn.CompressionGzip))
	defer func() { ok(t, w.Close()) }()
	r := must(cairn.OpenRecordReader(path, cairn.CompressionGzip))
	defer r.Close()
	for i, sync := range []bool{false, true} {
		ok(t, w.Write([]byte{byte(i)}))
		if sync {
			ok(t, w.Sync())
		} else {
			ok(t, w.Flush())
		}
		if rec, got, err := r.Next(); err != nil || !got || !bytes.Equal(rec, []byte{byte(i)}) {
			t.Errorf("record %d after flush: %v %v %v", i, rec, got, err)
		}
	}
}

// All yields each record, then the error that ends the reading; a caller may stop it early.
func TestRecordsAllIterator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.tfrecord")
	records := someRecords(5)
	writeRecords(t, path, records)
	r := must(cairn.OpenRecordReader(path))
	defer r.Close()
	var got [][]byte
	r.All()(func(rec []byte, err error) bool {
		ok(t, err)
		got = append(got, rec)
		return len(got) < 2 // stop after two
	})
	r.All()(func(rec []byte, err error) bool { // resumes at the third
		ok(t, err)
		got = append(got, rec)
		return true
	})
	if !slices.EqualFunc(got, records, bytes.Equal) {
		t.Errorf("All gave %d records, not the %d written", len(got), len(records))
	}

	data := must(os.ReadFile(path))
	data[len(data)-1] ^= 1 // the last record's data checksum
	ok(t, os.WriteFile(path, data, 0o644))
	bad := must(cairn.OpenRecordReader(path))
	defer bad.Close()
	var errs []error
	n := 0
	bad.All()(func(rec []byte, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			n++
		}
		return true
	})
	if n != 4 || len(errs) != 1 {
		t.Fatalf("%d records and errors %v; want 4 and one error", n, errs)
	}
	wantCode(t, errs[0], cairn.CodeDataLoss, cairn.ErrDataLoss, path)
}
