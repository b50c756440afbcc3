// Command train_digits is Cairn's training demo in Go: an MLP (64 -> 64 relu -> 10) learns the UCI
// 8x8 handwritten digits.
//
// Each epoch shuffles the training set (a permutation drawn from the epoch number, so the data
// order is part of the checkpointed state), trains with Adam on mini-batches under a gradient
// tape inside a compiled function "train_step" (traced once per batch shape, then replayed), and
// saves model, optimizer and epoch with a checkpoint manager (3 kept). Run it again and it resumes
// from the latest checkpoint. It ends with the accuracy on the held-out test split. With --logdir
// it writes TensorBoard summaries there: scalars epoch_loss and epoch_accuracy per epoch and the
// graph of train_step (see them with `tensorboard --logdir DIR`).
// It follows examples/TRAINING_DEMO.md and prints the same lines as examples/c/train_digits.c.
//
//	usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N] [--logdir DIR]
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// must returns v or panics with err; run recovers it and reports what failed.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func check(err error) { must(0, err) }

type config struct {
	data, dir, logdir string
	epochs            int64
}

// parseArgs reads --data, --dir, --epochs and --logdir pairs, as the C demo does.
func parseArgs(args []string) (config, bool) {
	cfg := config{data: "examples/data/digits.csv", epochs: 20}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return cfg, false
		}
		switch args[i] {
		case "--data":
			cfg.data = args[i+1]
		case "--dir":
			cfg.dir = args[i+1]
		case "--logdir":
			cfg.logdir = args[i+1]
		case "--epochs":
			n, err := strconv.ParseInt(args[i+1], 10, 64)
			if err != nil {
				return cfg, false
			}
			cfg.epochs = n
		default:
			return cfg, false
		}
	}
	if cfg.dir == "" {
		cfg.dir = defaultDir()
	}
	return cfg, cfg.epochs >= 1
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
		fmt.Fprintln(stderr, "usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR]")
		return 2
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "train_digits: %v\n", r)
			code = 1
		}
	}()
	train, test, err := loadDigits(cfg.data)
	if err != nil {
		fmt.Fprintf(stderr, "train_digits: %v\n", err)
		return 1
	}
	demo(cfg, train, test, stdout)
	return 0
}

// ---- Data: 64 pixels (0..16) and a label per line; sample i is a test sample when i % 5 == 4. ----

type split struct {
	x []float32 // n x 64, pixels / 16
	y []int32
}

func (s *split) n() int64 { return int64(len(s.y)) }

func loadDigits(path string) (train, test *split, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open %s: %w", path, err)
	}
	defer f.Close()
	train, test = &split{}, &split{}
	scanner := bufio.NewScanner(f)
	for i := 0; scanner.Scan(); i++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		s := train
		if i%5 == 4 {
			s = test
		}
		if err := s.add(line); err != nil {
			return nil, nil, fmt.Errorf("%s: line %d is not 64 pixels and a label", path, i+1)
		}
	}
	return train, test, scanner.Err()
}

func (s *split) add(line string) error {
	fields := strings.Split(line, ",")
	if len(fields) != features+1 {
		return fmt.Errorf("%d fields", len(fields))
	}
	values := make([]int, len(fields))
	for k, field := range fields {
		v, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			return err
		}
		values[k] = v
	}
	label := values[features]
	if label < 0 || label >= classes {
		return fmt.Errorf("label %d", label)
	}
	for _, v := range values[:features] {
		s.x = append(s.x, float32(v)/16)
	}
	s.y = append(s.y, int32(label))
	return nil
}

// ---- Training ----

// session holds the demo's objects, closed together.
type session struct {
	ctx              *cairn.Context
	model            *cairn.Sequential
	optimizer        *cairn.Optimizer
	epoch            *cairn.Variable
	ckpt             *cairn.Checkpoint
	manager          *cairn.CheckpointManager
	lossMean, accMet *cairn.Metric
	step             *cairn.Function // train_step
}

func (s *session) Close() {
	s.step.Close()
	s.manager.Close()
	s.ckpt.Close()
	s.lossMean.Close()
	s.accMet.Close()
	s.epoch.Close()
	s.optimizer.Close()
	s.model.Close()
	s.ctx.Close()
}

func buildModel(ctx *cairn.Context) *cairn.Sequential {
	h := must(cairn.NewDense(ctx, hidden, cairn.WithActivation("relu")))
	defer h.Close()
	out := must(cairn.NewDense(ctx, classes))
	defer out.Close()
	return must(cairn.NewSequential(ctx, []*cairn.Layer{h, out}, cairn.WithLayerName("mlp")))
}

func newSession(dir string) *session {
	s := &session{ctx: must(cairn.NewContext(cairn.WithSeed(contextSeed)))}
	s.model = buildModel(s.ctx)
	s.optimizer = must(cairn.NewOptimizer(s.ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(learningRate)))
	zero := must(cairn.NewTensor(s.ctx, nil, []int64{0}))
	defer zero.Close()
	s.epoch = must(cairn.NewVariable(s.ctx, zero, cairn.WithVariableName("epoch"), cairn.WithTrainable(false)))
	s.ckpt = must(cairn.NewCheckpoint(s.ctx, map[string]cairn.Tracked{
		"epoch": s.epoch, "model": s.model, "optimizer": s.optimizer,
	}))
	s.manager = must(cairn.NewCheckpointManager(s.ckpt, dir, cairn.WithMaxToKeep(3)))
	return s
}

// resume restores the latest checkpoint, if any, and returns the epochs already trained.
func (s *session) resume(stdout io.Writer) int64 {
	latest := s.manager.Latest()
	if latest == "" {
		return 0
	}
	status := must(s.ckpt.Restore(latest))
	// The optimizer's slots are restored when its next step creates them; with no epoch left to
	// train they never are, which is expected here.
	status.ExpectPartial()
	status.Close()
	epoch := must(cairn.ReadValue[int64](s.epoch))[0]
	fmt.Fprintf(stdout, "resumed from %s after epoch %d\n", latest, epoch)
	return epoch
}

// epochPermutation is the epoch's order of the training samples: the indices that sort uniform
// draws (seeded by the epoch) in descending order.
func epochPermutation(ctx *cairn.Context, n, epoch int64) *cairn.Tensor {
	draws := must(ops.RandomUniform(ctx, []int64{n}, ops.RandomUniformDType(cairn.Float32),
		ops.RandomUniformSeed(shuffleSeed), ops.RandomUniformSeed2(epoch+1)))
	defer draws.Close()
	values, indices, err := ops.TopKV2(ctx, draws, n)
	check(err)
	values.Close()
	return indices
}

// batchOf is the rows perm[begin : begin+size] of data.
func batchOf(ctx *cairn.Context, data, perm *cairn.Tensor, begin, size int64) *cairn.Tensor {
	idx := must(ops.Slice(ctx, perm, []int64{begin}, []int64{size}))
	defer idx.Close()
	return must(ops.GatherV2(ctx, data, idx))
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

// trainStep runs one mini-batch through train_step and updates the metrics eagerly.
func (s *session) trainStep(xb, yb *cairn.Tensor) {
	outs := must(s.step.Call(xb, yb)) // loss, logits
	defer closeAll(outs)
	check(s.lossMean.Update(outs[0], nil))
	check(s.accMet.Update(yb, outs[1]))
}

func closeAll[T interface{ Close() }](items []T) {
	for _, it := range items {
		it.Close()
	}
}

func (s *session) trainEpoch(x, y *cairn.Tensor, n, epoch int64) {
	perm := epochPermutation(s.ctx, n, epoch)
	defer perm.Close()
	for b := int64(0); b < n; b += batchSize {
		size := min(batchSize, n-b)
		xb := batchOf(s.ctx, x, perm, b, size)
		yb := batchOf(s.ctx, y, perm, b, size)
		s.trainStep(xb, yb)
		xb.Close()
		yb.Close()
	}
}

func (s *session) testAccuracy(x, y *cairn.Tensor) float64 {
	acc := must(cairn.NewMetric(s.ctx, cairn.MetricKindAccuracy, "test_accuracy"))
	defer acc.Close()
	logits := must(s.model.Call(x, false))
	defer logits.Close()
	check(acc.Update(y, logits))
	return must(acc.Result())
}

func demo(cfg config, train, test *split, stdout io.Writer) {
	s := newSession(cfg.dir)
	defer s.Close()
	xTrain := must(cairn.NewTensor(s.ctx, []int64{train.n(), features}, train.x))
	yTrain := must(cairn.NewTensor(s.ctx, []int64{train.n()}, train.y))
	xTest := must(cairn.NewTensor(s.ctx, []int64{test.n(), features}, test.x))
	yTest := must(cairn.NewTensor(s.ctx, []int64{test.n()}, test.y))
	defer closeAll([]*cairn.Tensor{xTrain, yTrain, xTest, yTest})
	fmt.Fprintf(stdout, "digits: %d training and %d test samples of 8x8 pixels\n", train.n(), test.n())

	epoch := s.resume(stdout)
	// Build the model on one sample (a restore above is applied as its variables appear).
	first := must(ops.Slice(s.ctx, xTest, []int64{0, 0}, []int64{1, features}))
	out := must(s.model.Call(first, false))
	first.Close()
	out.Close()
	fmt.Fprint(stdout, must(s.model.Summary()))

	s.step = s.newTrainStep()
	s.lossMean = must(cairn.NewMetric(s.ctx, cairn.MetricKindMean, "loss"))
	s.accMet = must(cairn.NewMetric(s.ctx, cairn.MetricKindAccuracy, "accuracy"))
	var writer *cairn.SummaryWriter // TensorBoard output, with --logdir
	if cfg.logdir != "" {
		writer = must(cairn.NewSummaryWriter(cfg.logdir))
		defer writer.Close() // closed and checked below; this covers a panic
	}
	for first := epoch; epoch < cfg.epochs; epoch++ {
		start := time.Now()
		check(s.lossMean.Reset())
		check(s.accMet.Reset())
		s.trainEpoch(xTrain, yTrain, train.n(), epoch)
		seconds := time.Since(start).Seconds()
		next := must(cairn.NewTensor(s.ctx, nil, []int64{epoch + 1}))
		check(s.epoch.Assign(next))
		next.Close()
		must(s.manager.SaveNumber(epoch + 1))
		loss, acc := must(s.lossMean.Result()), must(s.accMet.Result())
		fmt.Fprintf(stdout, "epoch %2d/%d  loss %.4f  accuracy %.4f  %.0f examples/s\n", epoch+1, cfg.epochs,
			loss, acc, float64(train.n())/seconds)
		if writer != nil {
			check(writer.Scalar("epoch_loss", loss, epoch+1))
			check(writer.Scalar("epoch_accuracy", acc, epoch+1))
			if epoch == first {
				check(writer.Graph(s.step, 0, 0))
			}
		}
	}
	check(writer.Close())
	fmt.Fprintf(stdout, "test accuracy: %.4f\n", s.testAccuracy(xTest, yTest))
}
