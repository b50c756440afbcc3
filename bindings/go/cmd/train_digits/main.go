// Command train_digits is Cairn's training demo in Go: an MLP (64 -> 64 relu -> 10) learns the UCI
// 8x8 handwritten digits.
//
// The digits come through an input pipeline (CSV -> map -> shuffle -> batch -> repeat -> prefetch)
// whose iterator is checkpointed with the model, the optimizer and the metrics every 20 steps by a
// checkpoint manager (3 kept). Kill it at any point and run it again: it resumes from the latest
// checkpoint, mid-epoch too, and ends with the same weights, bit for bit, as a run never
// interrupted (the last line is their checksum). --kill-after N simulates the crash after step N.
// Each step runs a compiled function "train_step" (traced once per batch shape, then replayed)
// that trains with Adam under a gradient tape. With --logdir it writes TensorBoard summaries there:
// scalars epoch_loss and epoch_accuracy per epoch and the graph of train_step (see them with
// `tensorboard --logdir DIR`).
// It follows examples/TRAINING_DEMO.md and prints the same lines as examples/c/train_digits.c.
//
//	usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N] [--logdir DIR]
//	                    [--save-every N] [--kill-after N]
package main

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"time"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

const (
	features     = 64
	classes      = 10
	hidden       = 64
	batchSize    = 32
	learningRate = 0.005
	shuffleSeed  = 7
	contextSeed  = 1
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// crash ends the process at once with status 3 (--kill-after): nothing is closed or flushed. The
// tests replace it to stay alive.
var crash = func() { os.Exit(3) }

// must returns v or panics with err; run recovers it and reports what failed.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func check(err error) { must(0, err) }

type config struct {
	data, dir, logdir            string
	epochs, saveEvery, killAfter int64
}

// parseArgs reads --data, --dir, --epochs, --logdir, --save-every and --kill-after pairs, as the
// C demo does.
func parseArgs(args []string) (config, bool) {
	cfg := config{data: "examples/data/digits.csv", epochs: 20, saveEvery: 20}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return cfg, false
		}
		var number *int64
		switch args[i] {
		case "--data":
			cfg.data = args[i+1]
		case "--dir":
			cfg.dir = args[i+1]
		case "--logdir":
			cfg.logdir = args[i+1]
		case "--epochs":
			number = &cfg.epochs
		case "--save-every":
			number = &cfg.saveEvery
		case "--kill-after":
			number = &cfg.killAfter
		default:
			return cfg, false
		}
		if number != nil {
			n, err := strconv.ParseInt(args[i+1], 10, 64)
			if err != nil {
				return cfg, false
			}
			*number = n
		}
	}
	if cfg.dir == "" {
		cfg.dir = defaultDir()
	}
	return cfg, cfg.epochs >= 1 && cfg.saveEvery >= 1 && cfg.killAfter >= 0
}

func defaultDir() string {
	if cache := os.Getenv("XDG_CACHE_HOME"); cache != "" {
		return filepath.Join(cache, "cairn", "digits-go")
	}
	home := os.Getenv("HOME")
	if home == "" {
		home = "."
	}
	return filepath.Join(home, ".cache", "cairn", "digits-go")
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	cfg, ok := parseArgs(args)
	if !ok {
		fmt.Fprintln(stderr, "usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR] "+
			"[--save-every N>=1] [--kill-after N]")
		return 2
	}
	defer func() {
		if r := recover(); r != nil {
			if _, killed := r.(killed); killed {
				code = 3
				return
			}
			fmt.Fprintf(stderr, "train_digits: %v\n", r)
			code = 1
		}
	}()
	demo(cfg, stdout)
	return 0
}

// killed is what a test's crash panics with; run returns 3 for it.
type killed struct{}

// ---- The input pipeline (docs/data.md) ----

// data is the training pipeline (shuffled, batched, repeated) and the test set.
type data struct {
	train                        *cairn.Dataset
	nTrain, nTest, stepsPerEpoch int64
	xTest, yTest                 *cairn.Tensor
}

// prepare is the map "prepare": 64 float32 pixel components and an int32 label in, x = pixels / 16
// as a float32[64] vector and the label out. Compiled: traced once, replayed on the pipeline's threads.
func prepare(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
	packed, err := ops.Pack(ctx, in[:features], ops.PackAxis(0))
	if err != nil {
		return nil, err
	}
	defer packed.Close()
	scale, err := cairn.NewTensor(ctx, nil, []float32{0.0625})
	if err != nil {
		return nil, err
	}
	defer scale.Close()
	x, err := ops.Mul(ctx, packed, scale)
	return []*cairn.Tensor{x, in[features]}, err
}

// stage(prev)(next, err) is next, the stage built on prev, and closes prev.
func stage(prev *cairn.Dataset) func(*cairn.Dataset, error) *cairn.Dataset {
	return func(next *cairn.Dataset, err error) *cairn.Dataset {
		check(err)
		prev.Close()
		return next
	}
}

func buildPipelines(ctx *cairn.Context, path string) *data {
	dtypes := make([]cairn.DType, features+1)
	for k := range dtypes {
		dtypes[k] = cairn.Float32
	}
	dtypes[features] = cairn.Int32
	csv := must(cairn.NewDatasetCSV(ctx, []string{path}, dtypes))
	samples := stage(csv)(csv.Map("prepare", prepare, cairn.WithOutputNames("x", "label")))
	defer samples.Close()

	// Line i is a test sample when i % 5 == 4.
	test := must(samples.Shard(5, 4))
	train := must(samples.Shard(5, 0))
	for k := int64(1); k < 4; k++ {
		part := must(samples.Shard(5, k))
		train = stage(train)(train.Concatenate(part))
		part.Close()
	}
	d := &data{nTrain: train.Cardinality(), nTest: test.Cardinality()}
	if d.nTrain < 0 { // the CSV source could not read the file to count its records
		_, err := must(samples.Iterate()).Next()
		panic(fmt.Errorf("cannot read %s: %w", path, err))
	}
	train = stage(train)(train.Shuffle(d.nTrain, shuffleSeed, true))
	train = stage(train)(train.Batch(batchSize, false))
	d.stepsPerEpoch = train.Cardinality()
	train = stage(train)(train.Repeat(-1))
	d.train = stage(train)(train.Prefetch(2))

	test = stage(test)(test.Batch(d.nTest, false))
	defer test.Close()
	it := must(test.Iterate())
	defer it.Close()
	batch, err := it.Next()
	if err != nil {
		panic(fmt.Errorf("test set: %w", err))
	}
	d.xTest, d.yTest = batch.Tensors[0], batch.Tensors[1]
	return d
}

// ---- Training ----

// session holds the demo's objects, closed together.
type session struct {
	ctx              *cairn.Context
	data             *data
	model            *cairn.Sequential
	optimizer        *cairn.Optimizer
	lossMean, accMet *cairn.Metric
	iterator         *cairn.Iterator
	ckpt             *cairn.Checkpoint
	manager          *cairn.CheckpointManager
	step             *cairn.Function // train_step
}

func (s *session) Close() {
	if s.data != nil {
		closeAll([]*cairn.Tensor{s.data.xTest, s.data.yTest})
		s.data.train.Close()
	}
	// Those made, in reverse order of making (a panic may have stopped newSession early).
	for _, c := range []interface{ Close() }{s.step, s.manager, s.ckpt, s.iterator, s.accMet, s.lossMean,
		s.optimizer, s.model, s.ctx} {
		if !reflect.ValueOf(c).IsNil() {
			c.Close()
		}
	}
}

func buildModel(ctx *cairn.Context) *cairn.Sequential {
	h := must(cairn.NewDense(ctx, hidden, cairn.WithActivation("relu")))
	defer h.Close()
	out := must(cairn.NewDense(ctx, classes))
	defer out.Close()
	return must(cairn.NewSequential(ctx, []*cairn.Layer{h, out}, cairn.WithLayerName("mlp")))
}

// newSession builds the pipelines (printing their sizes), the model, optimizer, metrics and
// iterator, and the checkpoint that holds them.
func newSession(cfg config, stdout io.Writer) *session {
	s := &session{ctx: must(cairn.NewContext(cairn.WithSeed(contextSeed)))}
	s.data = buildPipelines(s.ctx, cfg.data)
	fmt.Fprintf(stdout, "digits: %d training and %d test samples of 8x8 pixels\n", s.data.nTrain, s.data.nTest)
	s.model = buildModel(s.ctx)
	s.optimizer = must(cairn.NewOptimizer(s.ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(learningRate)))
	s.lossMean = must(cairn.NewMetric(s.ctx, cairn.MetricKindMean, "loss"))
	s.accMet = must(cairn.NewMetric(s.ctx, cairn.MetricKindAccuracy, "accuracy"))
	s.iterator = must(s.data.train.Iterate())
	s.ckpt = must(cairn.NewCheckpoint(s.ctx, map[string]cairn.Tracked{
		"accuracy": s.accMet, "data": s.iterator, "loss": s.lossMean, "model": s.model, "optimizer": s.optimizer,
	}))
	s.manager = must(cairn.NewCheckpointManager(s.ckpt, cfg.dir, cairn.WithMaxToKeep(3)))
	return s
}

// resume restores the latest checkpoint, if any: the iterator's position is the steps trained.
func (s *session) resume(stdout io.Writer) {
	latest := s.manager.Latest()
	if latest == "" {
		return
	}
	status := must(s.ckpt.Restore(latest))
	// The optimizer's slots are restored when its next step creates them; with nothing left to
	// train they never are, which is expected here.
	status.ExpectPartial()
	status.Close()
	fmt.Fprintf(stdout, "resumed from %s after step %d\n", latest, s.iterator.Position())
}

// newTrainStep is the training step as a compiled function (tf.function) over (x, labels)
// returning (loss, logits): traced once per batch shape (full batches and the smaller last batch),
// then replayed. The tape pins the tracing goroutine's thread while it lives.
func (s *session) newTrainStep() *cairn.Function {
	body := func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		tape, err := cairn.NewGradientTape(ctx)
		if err != nil {
			return nil, err
		}
		defer tape.Close()
		logits, err := s.model.Call(in[0], true)
		if err != nil {
			return nil, err
		}
		loss, err := cairn.Loss(ctx, cairn.LossKindSparseCategoricalCrossentropy, in[1], logits, true)
		if err != nil {
			logits.Close()
			return nil, err
		}
		outputs := []*cairn.Tensor{loss, logits}
		weights, err := s.model.Weights(true)
		if err == nil {
			defer closeAll(weights)
			var grads []*cairn.Tensor
			if grads, err = tape.GradientVariables(loss, weights); err == nil {
				defer closeAll(grads)
				err = s.optimizer.ApplyGradients(grads, weights)
			}
		}
		if err != nil {
			closeAll(outputs)
			return nil, err
		}
		return outputs, nil
	}
	return must(cairn.NewFunction(s.ctx, "train_step", body, cairn.WithNumOutputs(2)))
}

// trainStep takes the next batch from the iterator, runs it through train_step and updates the
// metrics eagerly; it returns the batch's size.
func (s *session) trainStep() int64 {
	batch := must(s.iterator.Next()) // x, label
	defer batch.Close()
	x, y := batch.Tensors[0], batch.Tensors[1]
	outs := must(s.step.Call(x, y)) // loss, logits
	defer closeAll(outs)
	check(s.lossMean.Update(outs[0], nil))
	check(s.accMet.Update(y, outs[1]))
	return y.Shape()[0]
}

func closeAll[T interface{ Close() }](items []T) {
	for _, it := range items {
		it.Close()
	}
}

func (s *session) testAccuracy() float64 {
	acc := must(cairn.NewMetric(s.ctx, cairn.MetricKindAccuracy, "test_accuracy"))
	defer acc.Close()
	logits := must(s.model.Call(s.data.xTest, false))
	defer logits.Close()
	check(acc.Update(s.data.yTest, logits))
	return must(acc.Result())
}

// weightsChecksum is FNV-1a 64 over the bytes of the model's trainable weights: equal weights,
// equal checksum.
func (s *session) weightsChecksum() uint64 {
	h := fnv.New64a()
	weights := must(s.model.Weights(true))
	defer closeAll(weights)
	for _, w := range weights {
		t := must(w.Read())
		h.Write(must(t.Bytes()))
		t.Close()
	}
	return h.Sum64()
}

func demo(cfg config, stdout io.Writer) {
	s := newSession(cfg, stdout)
	defer s.Close()
	s.resume(stdout)
	// Build the model on one sample (a restore above is applied as its variables appear).
	first := must(ops.Slice(s.ctx, s.data.xTest, []int64{0, 0}, []int64{1, features}))
	out := must(s.model.Call(first, false))
	first.Close()
	out.Close()
	fmt.Fprint(stdout, must(s.model.Summary()))

	s.step = s.newTrainStep()
	var writer *cairn.SummaryWriter // TensorBoard output, with --logdir
	if cfg.logdir != "" {
		writer = must(cairn.NewSummaryWriter(cfg.logdir))
		defer writer.Close() // closed and checked below; this covers a panic
	}
	perEpoch := s.data.stepsPerEpoch
	step := s.iterator.Position()
	wroteGraph := false
	for epoch := step / perEpoch; epoch < cfg.epochs; epoch++ {
		start := time.Now()
		trained, end := int64(0), (epoch+1)*perEpoch
		if step%perEpoch == 0 {
			check(s.lossMean.Reset())
			check(s.accMet.Reset())
		}
		for ; step < end; step++ {
			trained += s.trainStep()
			if step+1 == end || (step+1)%cfg.saveEvery == 0 {
				must(s.manager.SaveNumber(step + 1))
			}
			if step+1 == cfg.killAfter {
				crash() // nothing is flushed or freed
			}
		}
		seconds := time.Since(start).Seconds()
		loss, acc := must(s.lossMean.Result()), must(s.accMet.Result())
		if writer != nil {
			// TensorBoard: the epoch's metrics, and once per run the graph of the traced step.
			check(writer.Scalar("epoch_loss", loss, epoch+1))
			check(writer.Scalar("epoch_accuracy", acc, epoch+1))
			if !wroteGraph {
				check(writer.Graph(s.step, 0, 0))
			}
			wroteGraph = true
		}
		fmt.Fprintf(stdout, "epoch %2d/%d  loss %.4f  accuracy %.4f  %.0f examples/s\n", epoch+1, cfg.epochs,
			loss, acc, float64(trained)/seconds)
	}
	check(writer.Close())
	fmt.Fprintf(stdout, "test accuracy: %.4f\n", s.testAccuracy())
	fmt.Fprintf(stdout, "weights: %016x\n", s.weightsChecksum())
}
