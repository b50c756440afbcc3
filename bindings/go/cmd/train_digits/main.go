// Command train_digits is Cairn's training demo in Go: an MLP (64 -> 64 relu -> 10) learns the UCI
// 8x8 handwritten digits.
//
// Each epoch shuffles the training set (a permutation drawn from the epoch number, so the data
// order is part of the checkpointed state), trains with Adam on mini-batches under a gradient
// tape, and saves model, optimizer and epoch with a checkpoint manager (3 kept). Run it again and
// it resumes from the latest checkpoint. It ends with the accuracy on the held-out test split.
// It follows examples/TRAINING_DEMO.md and prints the same lines as examples/c/train_digits.c.
//
//	usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N]
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
	data, dir string
	epochs    int64
}

// parseArgs reads --data, --dir and --epochs pairs, as the C demo does.
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
		fmt.Fprintln(stderr, "usage: train_digits [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1]")
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
}

func (s *session) Close() {
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

// trainStep runs one mini-batch under a tape; the tape pins this goroutine's thread while it lives.
func (s *session) trainStep(xb, yb *cairn.Tensor) {
	tape := must(cairn.NewGradientTape(s.ctx))
	defer tape.Close()
	logits := must(s.model.Call(xb, true))
	defer logits.Close()
	loss := must(cairn.Loss(s.ctx, cairn.LossKindSparseCategoricalCrossentropy, yb, logits, true))
	defer loss.Close()
	weights := must(s.model.Weights(true))
	defer closeAll(weights)
	grads := must(tape.GradientVariables(loss, weights))
	defer closeAll(grads)
	check(s.optimizer.ApplyGradients(grads, weights))
	check(s.lossMean.Update(loss, nil))
	check(s.accMet.Update(yb, logits))
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

	s.lossMean = must(cairn.NewMetric(s.ctx, cairn.MetricKindMean, "loss"))
	s.accMet = must(cairn.NewMetric(s.ctx, cairn.MetricKindAccuracy, "accuracy"))
	for ; epoch < cfg.epochs; epoch++ {
		start := time.Now()
		check(s.lossMean.Reset())
		check(s.accMet.Reset())
		s.trainEpoch(xTrain, yTrain, train.n(), epoch)
		seconds := time.Since(start).Seconds()
		next := must(cairn.NewTensor(s.ctx, nil, []int64{epoch + 1}))
		check(s.epoch.Assign(next))
		next.Close()
		must(s.manager.SaveNumber(epoch + 1))
		fmt.Fprintf(stdout, "epoch %2d/%d  loss %.4f  accuracy %.4f  %.0f examples/s\n", epoch+1, cfg.epochs,
			must(s.lossMean.Result()), must(s.accMet.Result()), float64(train.n())/seconds)
	}
	fmt.Fprintf(stdout, "test accuracy: %.4f\n", s.testAccuracy(xTest, yTest))
}
