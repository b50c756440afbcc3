// Command multiworker trains the digits MLP on several processes under mpirun with a multi-worker
// strategy and Model.Fit, then saves a sharded checkpoint: the Go version of
// tests/mpi/multi_worker_digits.c (the same data pipeline, model and global batch of 32). Each
// rank starts from its own random init (seed 1 + rank): the broadcast from rank 0 before the first
// step makes the weights equal. Only rank 0 prints progress. Every rank prints
// "rank R of N: accuracy A weights C"; rank 0 then prints "weights identical on N ranks" when the
// all-gathered checksums agree (else the program fails), and "saved PATH" for the checkpoint.
// With --restore, one process without MPI restores the newest checkpoint of DIR into a fresh model
// and prints "restored: accuracy A".
//
//	usage: mpirun -np 2 multiworker --data digits.csv --epochs N --dir DIR
//	       multiworker --data digits.csv --restore DIR
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
	"time"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

const (
	batchSize    = 32
	shuffleSeed  = 7
	learningRate = 0.003 // as examples/c/fit_digits.c
)

func main() {
	csv := flag.String("data", "examples/data/digits.csv", "the digits CSV")
	epochs := flag.Int64("epochs", 5, "epochs of training")
	dir := flag.String("dir", "", "the checkpoint directory, which every rank must see")
	restore := flag.String("restore", "", "restore the newest checkpoint of this directory in one process")
	flag.Parse()
	if *restore != "" {
		restoreOne(*csv, *restore)
		return
	}
	if *dir == "" {
		log.Fatal("multiworker: --dir is required")
	}
	train(*csv, *epochs, *dir)
}

// train runs on every rank: fit with the multi-worker strategy, the weights compared across the
// ranks, and a sharded save.
func train(csv string, epochs int64, dir string) {
	rank, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK")) // before MPI starts: the seed
	ctx := must(cairn.NewContext(cairn.WithSeed(uint64(1 + rank))))
	defer ctx.Close()
	mpi := must(cairn.NewMpi(ctx, time.Minute))
	defer mpi.Close()
	strategy := must(cairn.NewMultiWorkerStrategy(ctx, mpi, cairn.WithReplicaCheck(true)))
	defer strategy.Close()
	trainData, testData := loadDigits(ctx, csv)
	var model *cairn.Model
	check(strategy.Scope(func() (err error) { model, err = newModel(ctx); return err }))
	defer model.Close() // it keeps the strategy, and so MPI, alive: closed before mpi
	must(model.Fit(trainData, cairn.WithEpochs(epochs), cairn.WithVerbose(cairn.VerboseEpochLines)))
	accuracy := must(must(model.Evaluate(testData)).Get("accuracy"))

	mine := weightsChecksum(model)
	all := must(mpi.AllGather(must(cairn.NewTensor(ctx, nil, []int64{int64(mine)}))))
	fmt.Printf("rank %d of %d: accuracy %.4f weights %016x\n", mpi.Rank(), mpi.Size(), accuracy, mine)
	for r, sum := range must(cairn.Read[int64](all)) {
		if uint64(sum) != mine {
			log.Fatalf("multiworker: rank %d: weights differ: rank %d has %016x, this rank %016x", mpi.Rank(), r, uint64(sum), mine)
		}
	}
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": model}))
	defer ckpt.Close()
	manager := must(cairn.NewCheckpointManager(ckpt, dir))
	defer manager.Close()
	check(manager.Shard(mpi))
	path := must(manager.Save())
	if mpi.Rank() == 0 {
		fmt.Printf("weights identical on %d ranks: %016x\n", mpi.Size(), mine)
		fmt.Println("saved", path)
	}
}

// restoreOne restores the newest checkpoint of dir into a fresh model in this one process (no
// MPI) and evaluates it.
func restoreOne(csv, dir string) {
	ctx := must(cairn.NewContext(cairn.WithSeed(1)))
	defer ctx.Close()
	_, testData := loadDigits(ctx, csv)
	model := must(newModel(ctx)) // restored before it is built: the values wait on it
	check(cairn.RestoreModel(ctx, model, must(cairn.LatestCheckpoint(ctx, dir))))
	fmt.Printf("restored: accuracy %.4f\n", must(must(model.Evaluate(testData)).Get("accuracy")))
}

// loadDigits is examples/c/digits_data.c's pipelines: line i of the CSV is a test sample when
// i % 5 == 4; the training part shuffled each pass and batched (global batches), the test part
// one batch.
func loadDigits(ctx *cairn.Context, csv string) (train, test *cairn.Dataset) {
	columns := append(slices.Repeat([]cairn.DType{cairn.Float32}, 64), cairn.Int32) // 64 pixels, a label
	samples := must(must(cairn.NewDatasetCSV(ctx, []string{csv}, columns)).Map("prepare", prepare,
		cairn.WithOutputNames("x", "label")))
	train = must(samples.Shard(5, 0))
	for k := int64(1); k < 4; k++ {
		train = must(train.Concatenate(must(samples.Shard(5, k))))
	}
	train = must(must(train.Shuffle(train.Cardinality(), shuffleSeed, true)).Batch(batchSize, false))
	test = must(samples.Shard(5, 4))
	return train, must(test.Batch(test.Cardinality(), false))
}

// prepare makes a CSV record's 64 pixel columns one float32[64] vector x scaled to [0, 1], beside
// the label.
func prepare(ctx *cairn.Context, columns []*cairn.Tensor) ([]*cairn.Tensor, error) {
	x, err := ops.Pack(ctx, columns[:64], ops.PackAxis(0))
	if err != nil {
		return nil, err
	}
	sixteenth, err := cairn.NewTensor(ctx, nil, []float32{0.0625})
	if err != nil {
		return nil, err
	}
	scaled, err := ops.Mul(ctx, x, sixteenth)
	return []*cairn.Tensor{scaled, columns[64]}, err
}

// newModel is Dense(64, relu) -> Dense(10) logits, compiled with Adam and sparse crossentropy.
func newModel(ctx *cairn.Context) (*cairn.Model, error) {
	hidden := must(cairn.NewDense(ctx, 64, cairn.WithActivation("relu")))
	model := must(cairn.NewModel(ctx, []*cairn.Layer{hidden, must(cairn.NewDense(ctx, 10))}, cairn.WithLayerName("mlp")))
	adam := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(learningRate)))
	return model, model.Compile(adam, "sparse_categorical_crossentropy", cairn.WithMetrics("accuracy"))
}

// weightsChecksum is FNV-1a 64 over the bytes of the model's trainable weights (as
// digits_weights_checksum in examples/c/digits_data.c): equal weights, equal checksum.
func weightsChecksum(model *cairn.Model) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, v := range must(model.Weights(true)) {
		for _, b := range must(must(v.Read()).Bytes()) {
			h = (h ^ uint64(b)) * 0x100000001b3
		}
	}
	return h
}

// must is v, or it ends the program with err (every error is checked).
func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal("multiworker: ", err)
	}
	return v
}

func check(err error) { must(0, err) }
