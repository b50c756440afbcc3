package cairn_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"cairn.dev/cairn"
)

// Examples written to a gzipped record file, then read back and parsed in one batch.
func ExampleOpenRecordWriter() {
	dir, err := os.MkdirTemp("", "records")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "train.tfrecord.gz")

	w, err := cairn.OpenRecordWriter(path, cairn.CompressionGzip)
	if err != nil {
		log.Fatal(err)
	}
	for label := int64(0); label < 3; label++ {
		ex, err := cairn.NewExample()
		if err != nil {
			log.Fatal(err)
		}
		if err := ex.SetInt64s("label", []int64{label}); err != nil {
			log.Fatal(err)
		}
		record, err := ex.Serialize()
		ex.Close()
		if err != nil {
			log.Fatal(err)
		}
		if err := w.Write(record); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil { // the last chance to see a failed write
		log.Fatal(err)
	}

	r, err := cairn.OpenRecordReader(path, cairn.CompressionGzip)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var records [][]byte
	for r.Scan() {
		records = append(records, r.Record())
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}

	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	out, err := cairn.ParseExamples(ctx, records, []cairn.FeatureSpec{{Key: "label", DType: cairn.Int64}})
	if err != nil {
		log.Fatal(err)
	}
	labels := out[0][0]
	defer labels.Close()
	values, err := cairn.Read[int64](labels)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(records), "records; labels", values, "of shape", labels.Shape())
	// Output: 3 records; labels [0 1 2] of shape [3]
}

// Scalars for TensorBoard: open the log directory with `tensorboard --logdir DIR`.
func ExampleNewSummaryWriter() {
	logdir, err := os.MkdirTemp("", "logs")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(logdir)
	w, err := cairn.NewSummaryWriter(logdir)
	if err != nil {
		log.Fatal(err)
	}
	for step := int64(1); step <= 3; step++ {
		if err := w.Scalar("loss", 1/float64(step), step); err != nil {
			log.Fatal(err)
		}
	}
	path, err := w.Path()
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	n, err := cairn.CountRecords(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "records: the file version and 3 scalars")
	// Output: 4 records: the file version and 3 scalars
}
