package cairn_test

// Weights in other formats: Object.SaveWeights / LoadWeights by name (safetensors, TensorFlow
// name-based bundles, Cairn files), Checkpoint.Export and Restore of TensorFlow checkpoints, the
// reader over the three formats, and the committed goldens written by real TensorFlow 2.21 /
// Keras 3.15 (tests/golden/tf_checkpoint) and by the safetensors package 0.8.0
// (tests/golden/safetensors).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

const goldens = "../../tests/golden/"

// mlp is a built Sequential(Dense(hidden, relu), Dense(out)) on `in` inputs; its kernels come
// from ctx's random stream, so two calls give different values.
func mlp(t *testing.T, ctx *cairn.Context, in, hidden, out int64) *cairn.Sequential {
	t.Helper()
	d1 := must(cairn.NewDense(ctx, hidden, cairn.WithActivation("relu")))
	d2 := must(cairn.NewDense(ctx, out))
	model := must(cairn.NewSequential(ctx, []*cairn.Layer{d1, d2}))
	d1.Close()
	d2.Close()
	t.Cleanup(model.Close)
	x := must(cairn.NewTensor(ctx, []int64{1, in}, make([]float32, in)))
	defer x.Close()
	must(model.Call(x, false)).Close()
	return model
}

// values reads every weight of model (kernel, bias, kernel, bias).
func values(t *testing.T, model *cairn.Sequential) [][]float32 {
	t.Helper()
	weights := must(model.Weights(false))
	defer closeNow(weights)
	out := make([][]float32, len(weights))
	for i, w := range weights {
		out[i] = must(cairn.ReadValue[float32](w))
	}
	return out
}

func keys(r *cairn.CheckpointReader) []string {
	var out []string
	for _, e := range r.Entries() {
		out = append(out, e.Key)
	}
	return out
}

var mlpNames = []string{"layer-0/bias", "layer-0/kernel", "layer-1/bias", "layer-1/kernel"}

// Each format round-trips a model's weights by name into a fresh model, under Cairn's names and
// under PyTorch-style ones.
func TestSaveAndLoadWeights(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(7))
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		format cairn.WeightsFormat
		file   string
		opts   []cairn.WeightsOption
		keys   []string
	}{
		{"safetensors", cairn.WeightsFormatSafetensors, "w.safetensors", nil, mlpNames},
		{"tf", cairn.WeightsFormatTf, "w-tf", nil, mlpNames},
		// A Cairn file always has an object graph entry; save_weights leaves it empty.
		{"cairn", cairn.WeightsFormatCairn, "w.cairn", nil, append([]string{"_CHECKPOINTABLE_OBJECT_GRAPH"}, mlpNames...)},
		{"safetensors torch names", cairn.WeightsFormatSafetensors, "torch.safetensors",
			[]cairn.WeightsOption{cairn.WithPrefix("model."), cairn.WithSeparator(".")},
			[]string{"model.layer-0.bias", "model.layer-0.kernel", "model.layer-1.bias", "model.layer-1.kernel"}},
		{"tf prefixed", cairn.WeightsFormatTf, "prefixed-tf",
			[]cairn.WeightsOption{cairn.WithPrefix("model."), cairn.WithSeparator(".")},
			[]string{"model.layer-0.bias", "model.layer-0.kernel", "model.layer-1.bias", "model.layer-1.kernel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			src := mlp(t, ctx, 5, 4, 3)
			ok(t, src.SaveWeights(path, tc.format, tc.opts...))

			r := must(cairn.OpenCheckpointReader(path))
			defer r.Close()
			if r.Format() != tc.format {
				t.Errorf("format %v, want %v", r.Format(), tc.format)
			}
			if got := keys(r); !slices.Equal(got, tc.keys) {
				t.Errorf("keys %v, want %v", got, tc.keys)
			}
			for _, e := range r.Entries()[len(tc.keys)-len(mlpNames):] {
				want := "float32"
				if tc.format == cairn.WeightsFormatSafetensors {
					want = "F32"
				}
				if e.DType != cairn.Float32 || e.TypeName != want {
					t.Errorf("%s: dtype %v, type name %q", e.Key, e.DType, e.TypeName)
				}
			}

			dst := mlp(t, ctx, 5, 4, 3)
			if reflect.DeepEqual(values(t, src), values(t, dst)) {
				t.Fatal("two fresh models have the same weights")
			}
			n, err := dst.LoadWeights(path, tc.opts...)
			ok(t, err)
			if n != 4 {
				t.Errorf("loaded %d variables, want 4", n)
			}
			if !reflect.DeepEqual(values(t, dst), values(t, src)) {
				t.Errorf("loaded %v, saved %v", values(t, dst), values(t, src))
			}
		})
	}
}

// Safetensors options: checksums (on by default), metadata, shards; a file from elsewhere loads.
func TestSafetensorsOptions(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(3))
	dir := t.TempDir()
	src := mlp(t, ctx, 6, 8, 2)

	summed := filepath.Join(dir, "summed.safetensors")
	// The binding writes metadata as JSON: quotes, HTML characters and non-ASCII come back as given.
	note := "a \"quoted\" <b> & é\n"
	ok(t, src.SaveWeights(summed, cairn.WeightsFormatSafetensors, cairn.WithMetadata(map[string]string{"format": "pt", "note": note})))
	r := must(cairn.OpenCheckpointReader(summed))
	meta := r.Metadata()
	if meta["format"] != "pt" || meta["note"] != note || len(meta) != 2+len(mlpNames) {
		t.Errorf("metadata %q", meta)
	}
	for _, name := range mlpNames {
		if !strings.HasPrefix(meta["cairn.checksum."+name], "xxh3:") {
			t.Errorf("no checksum of %s in %v", name, meta)
		}
		if checked, err := r.Verify(name); err != nil || !checked {
			t.Errorf("Verify(%s) = %v, %v", name, checked, err)
		}
	}
	_, err := r.Verify("nope")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "nope")
	r.Close()

	plain := filepath.Join(dir, "plain.safetensors")
	ok(t, src.SaveWeights(plain, cairn.WeightsFormatSafetensors, cairn.WithChecksums(false)))
	r = must(cairn.OpenCheckpointReader(plain))
	if meta := r.Metadata(); len(meta) != 0 {
		t.Errorf("metadata without checksums: %v", meta)
	}
	if checked, err := r.Verify("layer-0/kernel"); err != nil || checked {
		t.Errorf("Verify without a checksum = %v, %v", checked, err)
	}
	r.Close()

	// Shards of at most 64 bytes: the 6x8 kernel (192 bytes) gets one of its own.
	sharded := filepath.Join(dir, "sharded")
	ok(t, src.SaveWeights(sharded, cairn.WeightsFormatSafetensors, cairn.WithMaxShardBytes(64)))
	if _, err := os.Stat(filepath.Join(sharded, "model.safetensors.index.json")); err != nil {
		t.Fatal(err)
	}
	shards, _ := filepath.Glob(filepath.Join(sharded, "model-*-of-*.safetensors"))
	if len(shards) < 2 {
		t.Errorf("shards %v", shards)
	}
	for _, path := range []string{sharded, filepath.Join(sharded, "model.safetensors.index.json")} {
		r := must(cairn.OpenCheckpointReader(path))
		if got := keys(r); !slices.Equal(got, mlpNames) || r.Format() != cairn.WeightsFormatSafetensors {
			t.Errorf("%s: %v %v", path, r.Format(), got)
		}
		r.Close()
		dst := mlp(t, ctx, 6, 8, 2)
		if n, err := dst.LoadWeights(path); n != 4 || err != nil {
			t.Errorf("LoadWeights(%s) = %d, %v", path, n, err)
		}
		if !reflect.DeepEqual(values(t, dst), values(t, src)) {
			t.Errorf("%s: weights differ", path)
		}
	}
}

// A checkpoint of a model and its Adam optimizer, exported as a TensorFlow checkpoint, restores
// into fresh objects: weights, step counter and slots.
func TestExportTFAndRestore(t *testing.T) {
	dir := t.TempDir()
	x0, y0 := []float32{1, 2, -1, 0.5}, []float32{3, 5}
	build := func(ctx *cairn.Context) (*cairn.Sequential, *cairn.Optimizer, *cairn.Checkpoint, *cairn.Tensor, *cairn.Tensor) {
		model := mlp(t, ctx, 2, 3, 1)
		opt := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.01)))
		ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": model, "optimizer": opt}))
		closeAll(t, opt.Object)
		closeAll(t, ckpt)
		return model, opt, ckpt, tensor(t, ctx, []int64{2, 2}, x0), tensor(t, ctx, []int64{2, 1}, y0)
	}
	ctxA := newContext(t, cairn.WithSeed(1))
	modelA, optA, ckptA, x, y := build(ctxA)
	sgdStep(t, ctxA, modelA, optA, x, y)
	sgdStep(t, ctxA, modelA, optA, x, y)
	prefix := filepath.Join(dir, "tf", "ckpt-1")
	// Export, like Write, writes into an existing directory.
	err := ckptA.Export(prefix, cairn.WeightsFormatTf)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "tf/ckpt-1")
	ok(t, os.Mkdir(filepath.Join(dir, "tf"), 0o755))
	ok(t, ckptA.Export(prefix, cairn.WeightsFormatTf))
	for _, suffix := range []string{".index", ".data-00000-of-00001"} {
		if _, err := os.Stat(prefix + suffix); err != nil {
			t.Error(err)
		}
	}
	if n := must(ckptA.SaveCounter()); n != 0 {
		t.Errorf("Export changed save_counter to %d", n)
	}
	r := must(cairn.OpenCheckpointReader(prefix + ".index"))
	listed := keys(r)
	if r.Format() != cairn.WeightsFormatTf || !slices.Contains(listed, "_CHECKPOINTABLE_OBJECT_GRAPH") ||
		!slices.Contains(listed, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") {
		t.Errorf("%v: %v", r.Format(), listed)
	}
	r.Close()

	ctxB := newContext(t, cairn.WithSeed(2))
	modelB, optB, ckptB, xB, yB := build(ctxB)
	status := must(ckptB.Restore(prefix))
	defer status.Close()
	if n := must(optB.Iterations()); n != 2 {
		t.Errorf("restored iterations %d, want 2", n)
	}
	if !reflect.DeepEqual(values(t, modelB), values(t, modelA)) {
		t.Errorf("restored %v, exported %v", values(t, modelB), values(t, modelA))
	}
	// The slots come back when the next step creates them: both sides then agree.
	sgdStep(t, ctxA, modelA, optA, x, y)
	sgdStep(t, ctxB, modelB, optB, xB, yB)
	ok(t, status.AssertConsumed())
	va, vb := values(t, modelA), values(t, modelB)
	for i := range va {
		wantFloats(t, fmt.Sprint("weight ", i), vb[i], va[i]...)
	}

	// Without save_counter and with Cairn's edge names; a Cairn export is what Write writes.
	bare := filepath.Join(dir, "bare")
	ok(t, ckptA.Export(bare, cairn.WeightsFormatTf, cairn.WithSaveCounter(false), cairn.WithKerasNames(false)))
	r = must(cairn.OpenCheckpointReader(bare))
	listed = keys(r)
	r.Close()
	if slices.Contains(listed, "save_counter/.ATTRIBUTES/VARIABLE_VALUE") ||
		!slices.Contains(listed, "model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE") {
		t.Errorf("without save_counter, Cairn names: %v", listed)
	}
	var slots int
	for _, k := range listed {
		if strings.Contains(k, ".OPTIMIZER_SLOT") {
			slots++
		}
	}
	if slots != 8 { // m and v of two kernels and two biases
		t.Errorf("%d slot keys in %v", slots, listed)
	}
	asCairn := filepath.Join(dir, "ckpt.cairn")
	ok(t, ckptA.Export(asCairn, cairn.WeightsFormatCairn))
	r = must(cairn.OpenCheckpointReader(asCairn))
	if r.Format() != cairn.WeightsFormatCairn || !slices.Contains(keys(r), "model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE") {
		t.Errorf("Cairn export: %v %v", r.Format(), keys(r))
	}
	r.Close()
	err = ckptA.Export(filepath.Join(dir, "auto"), cairn.WeightsFormatAuto)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "AUTO is for reading")

	// A checkpoint's keys hold the model's weights under "model/": LoadWeights takes them by name.
	modelC := mlp(t, ctxB, 2, 3, 1)
	n, err := modelC.LoadWeights(asCairn, cairn.WithPrefix("model/"))
	ok(t, err)
	if n != 4 || !reflect.DeepEqual(values(t, modelC), values(t, modelA)) {
		t.Errorf("loaded %d by name from the checkpoint", n)
	}
}

// ---- Goldens ----

type tfGoldenEntry struct {
	Key        string   `json:"key"`
	DType      string   `json:"dtype"`
	Shape      []int64  `json:"shape"`
	SHA256     string   `json:"sha256"`
	RawB64     *string  `json:"raw_b64"`
	StringsB64 []string `json:"strings_b64"`
}

func tfGolden(t *testing.T, name string) []tfGoldenEntry {
	t.Helper()
	var doc struct {
		Checkpoints map[string]struct {
			Entries []tfGoldenEntry `json:"entries"`
		} `json:"checkpoints"`
	}
	ok(t, json.Unmarshal(must(os.ReadFile(goldens+"tf_checkpoint/expected.json")), &doc))
	entries := doc.Checkpoints[name].Entries
	if len(entries) == 0 {
		t.Fatalf("expected.json has no checkpoint %s", name)
	}
	return entries
}

// loadFloats loads key from the reader as float32 values.
func loadFloats(t *testing.T, ctx *cairn.Context, r *cairn.CheckpointReader, key string) []float32 {
	t.Helper()
	x := must(r.Load(ctx, key))
	defer x.Close()
	return readF32(t, x)
}

// The reader lists the TensorFlow golden with every dtype and string shape exactly as
// tf.train.load_checkpoint did, loads each value with the bytes TensorFlow wrote, and reads every
// element of the string tensors.
func TestTFGoldenReader(t *testing.T) {
	ctx := newContext(t)
	r := must(cairn.OpenCheckpointReader(goldens + "tf_checkpoint/dtypes_strings/ckpt"))
	defer r.Close()
	if r.Format() != cairn.WeightsFormatTf || len(r.Metadata()) != 0 {
		t.Errorf("format %v, metadata %v", r.Format(), r.Metadata())
	}
	want := tfGolden(t, "dtypes_strings")
	entries := r.Entries()
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(entries), len(want))
	}
	for i, w := range want {
		e := entries[i]
		if e.Key != w.Key || e.TypeName != w.DType || !slices.Equal(e.Shape, w.Shape) {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
			continue
		}
		checked, err := r.Verify(w.Key)
		if err != nil || !checked {
			t.Errorf("Verify(%s) = %v, %v", w.Key, checked, err)
		}
		switch {
		case w.DType == "string" && w.Key != "_CHECKPOINTABLE_OBJECT_GRAPH":
			if e.DType != cairn.String {
				t.Errorf("%s: dtype %v", w.Key, e.DType)
			}
			for j, b64 := range w.StringsB64 {
				got := must(r.LoadStringElement(w.Key, j))
				if want := must(base64.StdEncoding.DecodeString(b64)); string(got) != string(want) {
					t.Errorf("%s[%d] = %q, want %q", w.Key, j, got, want)
				}
			}
			_, err := r.LoadStringElement(w.Key, len(w.StringsB64))
			wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, w.Key)
		case w.DType == "uint16" || w.DType == "complex128": // no Cairn dtype
			if e.DType != cairn.InvalidDType {
				t.Errorf("%s: dtype %v", w.Key, e.DType)
			}
			_, err := r.Load(ctx, w.Key)
			wantCode(t, err, cairn.CodeUnimplemented, cairn.ErrUnimplemented, w.Key)
		case w.RawB64 != nil:
			if e.DType.String() != w.DType {
				t.Errorf("%s: dtype %v, want %s", w.Key, e.DType, w.DType)
			}
			x := must(r.Load(ctx, w.Key))
			raw := must(x.Bytes())
			x.Close()
			sum := sha256.Sum256(raw)
			if hex.EncodeToString(sum[:]) != w.SHA256 {
				t.Errorf("%s: loaded bytes %x differ from TensorFlow's", w.Key, raw)
			}
		}
	}
	_, err := r.LoadStringElement("m/i32/.ATTRIBUTES/VARIABLE_VALUE", 0)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "m/i32")
	_, err = r.LoadStringElement("m/s_vec/.ATTRIBUTES/VARIABLE_VALUE", -1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "negative")
	_, err = r.LoadStringElement("no/such/key", 0)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "no/such/key")
}

// The Keras 3 MLP with Adam (make_golden.py: Input 8 -> Dense 16 relu -> Dense 3, Adam lr 0.01,
// fitted 4 steps, written by tf.train.Checkpoint(model=m, optimizer=opt)) restores into Cairn's
// Sequential and Adam, as tests/runtime/tf_restore does in C++: weights, iterations, learning rate,
// and the slots m and v when the next step creates them.
func TestTFGoldenKeras3Restore(t *testing.T) {
	const vv = "/.ATTRIBUTES/VARIABLE_VALUE"
	prefix := goldens + "tf_checkpoint/keras3_mlp/ckpt"
	// Keras 3 reaches weight i through optimizer/_trainable_variables/i, and its m and v through
	// optimizer/_variables/2+2i and 3+2i (the golden's README).
	weightKeys, mKeys, vKeys := make([]string, 4), make([]string, 4), make([]string, 4)
	for i := range weightKeys {
		weightKeys[i] = fmt.Sprintf("optimizer/_trainable_variables/%d%s", i, vv)
		mKeys[i] = fmt.Sprintf("optimizer/_variables/%d%s", 2+2*i, vv)
		vKeys[i] = fmt.Sprintf("optimizer/_variables/%d%s", 3+2*i, vv)
	}

	for _, buildFirst := range []bool{true, false} {
		ctx := newContext(t)
		reader := must(cairn.OpenCheckpointReader(prefix))
		defer reader.Close()
		d1 := must(cairn.NewDense(ctx, 16, cairn.WithActivation("relu")))
		d2 := must(cairn.NewDense(ctx, 3))
		model := must(cairn.NewSequential(ctx, []*cairn.Layer{d1, d2}))
		d1.Close()
		d2.Close()
		defer model.Close()
		adam := must(cairn.NewOptimizer(ctx, cairn.OptimizerKindAdam, cairn.WithLearningRate(0.5)))
		defer adam.Close()
		ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": model, "optimizer": adam}))
		defer ckpt.Close()
		build := func() {
			x := must(cairn.NewTensor(ctx, []int64{1, 8}, make([]float32, 8)))
			must(model.Call(x, false)).Close()
			x.Close()
		}
		if buildFirst {
			build()
		}
		status := must(ckpt.Restore(prefix))
		defer status.Close()
		if n := must(adam.Iterations()); n != 4 {
			t.Errorf("iterations %d, want 4", n)
		}
		if lr := must(adam.LearningRate()); !near(lr, 0.01, 1e-7) {
			t.Errorf("learning rate %v, want 0.01", lr)
		}
		if !buildFirst {
			wantCode(t, status.AssertConsumed(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, weightKeys[0])
			build() // the restore waiting for the weights applies now
		}
		weights := must(model.Weights(true))
		defer closeNow(weights)
		if len(weights) != 4 {
			t.Fatalf("%d weights", len(weights))
		}
		for i, w := range weights {
			wantValue(t, w, loadFloats(t, ctx, reader, weightKeys[i])...)
		}
		wantCode(t, status.AssertConsumed(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, mKeys[0])

		// A zero-gradient step creates m and v, restored, then scaled by beta_1 and beta_2.
		grads := make([]*cairn.Tensor, len(weights))
		for i, w := range weights {
			shape := must(w.Shape())
			n := int64(1)
			for _, d := range shape {
				n *= d
			}
			grads[i] = must(cairn.NewTensor(ctx, shape, make([]float32, n)))
		}
		ok(t, adam.ApplyGradients(grads, weights))
		closeNow(grads)
		for i, w := range weights {
			for slot, keys := range map[string][]string{"m": mKeys, "v": vKeys} {
				decay := 0.9
				if slot == "v" {
					decay = 0.999
				}
				s := must(adam.Slot(w, slot))
				got := must(cairn.ReadValue[float32](s))
				s.Close()
				want := loadFloats(t, ctx, reader, keys[i])
				if len(got) != len(want) {
					t.Fatalf("slot %s of weight %d: %d values, want %d", slot, i, len(got), len(want))
				}
				for j := range want {
					if !near(float64(got[j]), decay*float64(want[j]), 1e-5*math.Max(1, math.Abs(float64(want[j])))) {
						t.Errorf("slot %s of weight %d [%d] = %v, want %v", slot, i, j, got[j], decay*float64(want[j]))
						break
					}
				}
			}
		}
		ok(t, status.AssertConsumed())
	}
}

// A TF1 name-based checkpoint (tf.compat.v1.train.Saver) has no object graph: Restore refuses it,
// LoadWeights takes its "dense/kernel" and "dense/bias" into a Dense layer by name, passing over
// the keys outside the prefix.
func TestTF1GoldenLoadsByName(t *testing.T) {
	ctx := newContext(t)
	path := goldens + "tf_checkpoint/tf1_saver/model.ckpt"
	dense := must(cairn.NewDense(ctx, 3))
	defer dense.Close()
	x := must(cairn.NewTensor(ctx, []int64{1, 4}, make([]float32, 4)))
	must(dense.Call(x, false)).Close()
	x.Close()

	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"dense": dense}))
	defer ckpt.Close()
	_, err := ckpt.Restore(path)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "name-based")

	n, err := dense.LoadWeights(path, cairn.WithPrefix("dense/"))
	ok(t, err)
	if n != 2 {
		t.Errorf("loaded %d, want 2", n)
	}
	want := map[string][]float32{}
	for _, e := range tfGolden(t, "tf1_saver") {
		if e.Key == "dense/kernel" || e.Key == "dense/bias" {
			raw := must(base64.StdEncoding.DecodeString(*e.RawB64))
			f := make([]float32, len(raw)/4)
			for i := range f {
				f[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			}
			want[e.Key] = f
		}
	}
	weights := must(dense.Weights(false))
	defer closeNow(weights)
	wantValue(t, weights[0], want["dense/kernel"]...)
	wantValue(t, weights[1], want["dense/bias"]...)
}

type stGoldenTensor struct {
	DType  string            `json:"dtype"`
	Shape  []int64           `json:"shape"`
	Values []json.RawMessage `json:"values"`
}

type stGoldenFile struct {
	Metadata map[string]string         `json:"metadata"`
	Tensors  map[string]stGoldenTensor `json:"tensors"`
}

func stGolden(t *testing.T) map[string]stGoldenFile {
	t.Helper()
	var doc struct {
		Files map[string]stGoldenFile `json:"files"`
	}
	ok(t, json.Unmarshal(must(os.ReadFile(goldens+"safetensors/expected.json")), &doc))
	return doc.Files
}

// goldenNumber is one value of expected.json as a float64 ("nan", "inf" and "-inf" are strings).
func goldenNumber(t *testing.T, raw json.RawMessage) float64 {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
		t.Fatalf("value %s", s)
	}
	var f float64
	ok(t, json.Unmarshal(raw, &f))
	return f
}

// sameFloat is equality that takes NaN as equal to NaN.
func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

var safetensorsDTypes = map[string]cairn.DType{
	"BOOL": cairn.Bool, "U8": cairn.Uint8, "I8": cairn.Int8, "I16": cairn.Int16, "F16": cairn.Float16,
	"BF16": cairn.BFloat16, "I32": cairn.Int32, "F32": cairn.Float32, "C64": cairn.Complex64,
	"F64": cairn.Float64, "I64": cairn.Int64, "F8_E4M3": cairn.Float32, "F8_E5M2": cairn.Float32,
}

// The reader lists the safetensors goldens as the package wrote them (names in byte order,
// dtypes, shapes, metadata) and loads their values: every dtype Cairn has, F8 as float32, the
// unsigned ones refused by name, and the sharded model through its directory.
func TestSafetensorsGoldenReader(t *testing.T) {
	ctx := newContext(t)
	files := stGolden(t)
	for _, name := range []string{"cairn_dtypes.safetensors", "numpy.safetensors", "f8.safetensors",
		"unsigned.safetensors", "empty.safetensors", "sharded"} {
		want, listed := files[name]
		if !listed {
			t.Fatalf("expected.json has no %s", name)
		}
		path := goldens + "safetensors/" + name
		r := must(cairn.OpenCheckpointReader(path))
		if r.Format() != cairn.WeightsFormatSafetensors {
			t.Errorf("%s: format %v", name, r.Format())
		}
		meta := r.Metadata()
		if len(meta) != len(want.Metadata) || (len(meta) > 0 && !reflect.DeepEqual(meta, want.Metadata)) {
			t.Errorf("%s: metadata %v, want %v", name, meta, want.Metadata)
		}
		wantKeys := slices.Sorted(maps.Keys(want.Tensors))
		if got := keys(r); !slices.Equal(got, wantKeys) {
			t.Errorf("%s: keys %q, want %q", name, got, wantKeys)
		}
		for _, e := range r.Entries() {
			w := want.Tensors[e.Key]
			if e.TypeName != w.DType || !slices.Equal(e.Shape, w.Shape) {
				t.Errorf("%s/%s: %s %v, want %s %v", name, e.Key, e.TypeName, e.Shape, w.DType, w.Shape)
			}
			if checked, err := r.Verify(e.Key); err != nil || checked {
				t.Errorf("%s/%s: Verify = %v, %v (the package stores no checksum)", name, e.Key, checked, err)
			}
			dtype, known := safetensorsDTypes[w.DType]
			if !known {
				if e.DType != cairn.InvalidDType {
					t.Errorf("%s/%s: dtype %v", name, e.Key, e.DType)
				}
				_, err := r.Load(ctx, e.Key)
				wantCode(t, err, cairn.CodeUnimplemented, cairn.ErrUnimplemented, e.Key)
				continue
			}
			if e.DType != dtype {
				t.Errorf("%s/%s: dtype %v, want %v", name, e.Key, e.DType, dtype)
			}
			checkGoldenValues(t, ctx, r, e, w)
		}
		r.Close()
	}
}

// checkGoldenValues loads e and compares it with the expected values: int64 and complex64 as
// they are, every other dtype cast to float64 (exact for each of them).
func checkGoldenValues(t *testing.T, ctx *cairn.Context, r *cairn.CheckpointReader, e cairn.CheckpointEntry, w stGoldenTensor) {
	t.Helper()
	x := must(r.Load(ctx, e.Key))
	defer x.Close()
	if n := x.NumElements(); n != int64(len(w.Values)) {
		t.Fatalf("%s: %d values, want %d", e.Key, n, len(w.Values))
	}
	switch e.DType {
	case cairn.Int64: // int64 extremes are not float64s
		for i, v := range must(cairn.Read[int64](x)) {
			var want int64
			ok(t, json.Unmarshal(w.Values[i], &want))
			if v != want {
				t.Errorf("%s[%d] = %d, want %d", e.Key, i, v, want)
			}
		}
	case cairn.Complex64:
		for i, v := range must(cairn.Read[complex64](x)) {
			var pair [2]float64
			ok(t, json.Unmarshal(w.Values[i], &pair))
			if real(v) != float32(pair[0]) || imag(v) != float32(pair[1]) {
				t.Errorf("%s[%d] = %v, want %v", e.Key, i, v, pair)
			}
		}
	default:
		f64 := must(ops.Cast(ctx, x, cairn.Float64))
		defer f64.Close()
		for i, v := range must(cairn.Read[float64](f64)) {
			want := goldenNumber(t, w.Values[i])
			if e.DType == cairn.Float32 && !math.IsInf(want, 0) && !math.IsNaN(want) {
				want = float64(float32(want)) // expected.json has the shortest float64 text
			}
			if !sameFloat(v, want) {
				t.Errorf("%s[%d] = %v, want %v", e.Key, i, v, want)
			}
		}
	}
}

// ---- Errors ----

// A missing file, a shape mismatch, a truncated file, a damaged value, names the load does not
// match: each is an error with its code, and a failed load leaves every variable as it was.
func TestWeightsErrors(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(11))
	dir := t.TempDir()
	src := mlp(t, ctx, 3, 4, 2)
	path := filepath.Join(dir, "w.safetensors")
	ok(t, src.SaveWeights(path, cairn.WeightsFormatSafetensors))

	missing := filepath.Join(dir, "missing.safetensors")
	_, err := src.LoadWeights(missing)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing.safetensors")
	_, err = cairn.OpenCheckpointReader(missing)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing.safetensors")

	// The second layer is wider: layer-1's kernel and bias do not fit, layer-0's do; nothing changes.
	wide := mlp(t, ctx, 3, 4, 5)
	before := values(t, wide)
	n, err := wide.LoadWeights(path)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "variable 'layer-1/kernel' has shape [4,5]")
	if n != 0 || !reflect.DeepEqual(values(t, wide), before) {
		t.Errorf("a failed load assigned %d variables: %v, was %v", n, values(t, wide), before)
	}

	// Truncated: the header promises more bytes than the file has.
	data := must(os.ReadFile(path))
	truncated := filepath.Join(dir, "truncated.safetensors")
	ok(t, os.WriteFile(truncated, data[:len(data)-7], 0o644))
	dst := mlp(t, ctx, 3, 4, 2)
	before = values(t, dst)
	_, err = dst.LoadWeights(truncated)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "truncated.safetensors")
	if !reflect.DeepEqual(values(t, dst), before) {
		t.Error("a failed load changed the variables")
	}
	_, err = cairn.OpenCheckpointReader(truncated)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "truncated.safetensors")

	// A flipped bit in the last tensor's bytes: its checksum names it, and nothing is assigned.
	damaged := filepath.Join(dir, "damaged.safetensors")
	data[len(data)-1] ^= 0x10
	ok(t, os.WriteFile(damaged, data, 0o644))
	_, err = dst.LoadWeights(damaged)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "tensor 'layer-1/kernel': checksum mismatch")
	if !reflect.DeepEqual(values(t, dst), before) {
		t.Error("a failed load changed the variables")
	}
	r := must(cairn.OpenCheckpointReader(damaged))
	var bad []string
	for _, e := range r.Entries() {
		if _, err := r.Verify(e.Key); err != nil {
			wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, e.Key)
			bad = append(bad, e.Key)
		}
	}
	r.Close()
	if len(bad) != 1 {
		t.Errorf("damaged tensors %v, want one", bad)
	}

	// Names: variables the file lacks, values nothing takes.
	one := filepath.Join(dir, "one-layer.safetensors")
	first := mlp(t, ctx, 3, 4, 2)
	layer := must(first.Object.Get("layer-0"))
	ok(t, layer.SaveWeights(one, cairn.WeightsFormatSafetensors, cairn.WithPrefix("layer-0/")))
	layer.Close()
	_, err = dst.LoadWeights(one)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "no value for 2 of the module's 4 variables: 'layer-1/kernel', 'layer-1/bias'")
	n, err = dst.LoadWeights(one, cairn.WithAllowMissing(true))
	ok(t, err)
	if got := values(t, dst); n != 2 || !reflect.DeepEqual(got[:2], values(t, first)[:2]) || !reflect.DeepEqual(got[2:], before[2:]) {
		t.Errorf("allow_missing loaded %d", n)
	}
	d := must(dst.Object.Get("layer-1"))
	_, err = d.LoadWeights(path, cairn.WithPrefix("layer-1/"))
	ok(t, err) // keys outside the prefix are passed over
	_, err = d.LoadWeights(path, cairn.WithPrefix("layer-"), cairn.WithAllowMissing(true))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "match no variable of the module")
	n, err = d.LoadWeights(path, cairn.WithPrefix("layer-"), cairn.WithAllowUnused(true), cairn.WithAllowMissing(true))
	ok(t, err)
	if n != 0 {
		t.Errorf("loaded %d under prefix layer-", n)
	}
	d.Close()

	// Bad arguments, and a restore of a file without an object graph.
	err = src.SaveWeights(filepath.Join(dir, "auto"), cairn.WeightsFormatAuto)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "AUTO is for reading")
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": src}))
	_, err = ckpt.Restore(path)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "no object graph")
	ckpt.Close()
	err = ckpt.Export(filepath.Join(dir, "closed"), cairn.WeightsFormatTf)
	wantError(t, err, "FAILED_PRECONDITION: Checkpoint.Export: checkpoint is closed")
	closed := mlp(t, ctx, 3, 4, 2)
	closed.Close()
	_, err = closed.LoadWeights(path)
	wantError(t, err, "FAILED_PRECONDITION: Object.LoadWeights: object is closed")
	err = closed.SaveWeights(path, cairn.WeightsFormatSafetensors)
	wantError(t, err, "FAILED_PRECONDITION: Object.SaveWeights: object is closed")
	var nilReader *cairn.CheckpointReader
	_, err = nilReader.Verify("k")
	wantError(t, err, "INVALID_ARGUMENT: CheckpointReader.Verify: reader is nil")
	if nilReader.Format() != cairn.WeightsFormatAuto || len(nilReader.Metadata()) != 0 {
		t.Error("a nil reader has a format or metadata")
	}
}

// One reader serves several goroutines at once (its reads are positional); run under -race by
// bindings/test_go.
func TestConcurrentWeightsReader(t *testing.T) {
	ctx := newContext(t, cairn.WithSeed(5))
	path := filepath.Join(t.TempDir(), "w.safetensors")
	src := mlp(t, ctx, 4, 6, 2)
	ok(t, src.SaveWeights(path, cairn.WeightsFormatSafetensors))
	r := must(cairn.OpenCheckpointReader(path))
	defer r.Close()
	want := map[string][]float32{}
	for _, name := range mlpNames {
		want[name] = loadFloats(t, ctx, r, name)
	}
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				name := mlpNames[(g+i)%len(mlpNames)]
				if checked, err := r.Verify(name); err != nil || !checked {
					errs <- fmt.Errorf("Verify(%s) = %v, %v", name, checked, err)
					return
				}
				x, err := r.Load(ctx, name)
				if err != nil {
					errs <- err
					return
				}
				got, err := cairn.Read[float32](x)
				x.Close()
				if err != nil || !slices.Equal(got, want[name]) {
					errs <- fmt.Errorf("%s: %v, %v", name, got, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
