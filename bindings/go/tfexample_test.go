package cairn_test

import (
	"bytes"
	"reflect"
	"testing"

	"cairn.dev/cairn"
)

func TestExampleBuildSerializeParse(t *testing.T) {
	ex := must(cairn.NewExample())
	defer ex.Close()
	ok(t, ex.SetInt64s("label", []int64{7}))
	ok(t, ex.SetFloats("pixels", []float32{0.5, 1}))
	ok(t, ex.SetBytes("name", [][]byte{[]byte("seven"), {}, {0, 1, 0}}))
	ok(t, ex.SetInt64s("empty", nil))
	wantCode(t, ex.AppendStepInt64s("steps", []int64{1}), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
	data := must(ex.Serialize())

	back := must(cairn.ParseExample(data))
	defer back.Close()
	if back.Kind() != cairn.ExampleKindExample {
		t.Errorf("Kind() = %v", back.Kind())
	}
	if keys := back.Keys(); !reflect.DeepEqual(keys, []string{"empty", "label", "name", "pixels"}) {
		t.Errorf("Keys() = %q", keys)
	}
	if f := must(back.Feature("label")); f.Kind != cairn.FeatureKindInt64 || !reflect.DeepEqual(f.Int64s, []int64{7}) {
		t.Errorf("label = %+v", f)
	}
	if f := must(back.Feature("pixels")); f.Kind != cairn.FeatureKindFloat || !reflect.DeepEqual(f.Floats, []float32{0.5, 1}) {
		t.Errorf("pixels = %+v", f)
	}
	if f := must(back.Feature("name")); f.Kind != cairn.FeatureKindBytes ||
		!reflect.DeepEqual(f.Bytes, [][]byte{[]byte("seven"), {}, {0, 1, 0}}) {
		t.Errorf("name = %+v", f)
	}
	if again := must(back.Serialize()); !bytes.Equal(again, data) {
		t.Error("serializing the parsed example gives other bytes")
	}
	_, err := back.Feature("missing")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing")
	_, err = cairn.ParseExample([]byte{0x0a, 0x7f})
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "")

	ex.Close()
	wantError(t, ex.SetInt64s("x", nil), "FAILED_PRECONDITION: Example.SetInt64s: example is closed")
	_, err = ex.Serialize()
	wantError(t, err, "FAILED_PRECONDITION: Example.Serialize: example is closed")
}

func TestSequenceExample(t *testing.T) {
	ex := must(cairn.NewSequenceExample())
	defer ex.Close()
	ok(t, ex.SetInt64s("length", []int64{2}))
	ok(t, ex.AppendStepInt64s("tokens", []int64{1, 2, 3}))
	ok(t, ex.AppendStepInt64s("tokens", []int64{4}))
	ok(t, ex.AppendStepFloats("scores", []float32{0.25}))
	ok(t, ex.AppendStepBytes("words", [][]byte{[]byte("hi")}))
	back := must(cairn.ParseSequenceExample(must(ex.Serialize())))
	defer back.Close()
	if back.Kind() != cairn.ExampleKindSequenceExample || !reflect.DeepEqual(back.Keys(), []string{"length"}) ||
		!reflect.DeepEqual(back.FeatureListKeys(), []string{"scores", "tokens", "words"}) {
		t.Errorf("kind %v, keys %q, lists %q", back.Kind(), back.Keys(), back.FeatureListKeys())
	}
	if n := must(back.Steps("tokens")); n != 2 {
		t.Errorf("Steps(tokens) = %d", n)
	}
	if f := must(back.Step("tokens", 1)); !reflect.DeepEqual(f.Int64s, []int64{4}) {
		t.Errorf("tokens step 1 = %+v", f)
	}
	if f := must(back.Step("words", 0)); !reflect.DeepEqual(f.Bytes, [][]byte{[]byte("hi")}) {
		t.Errorf("words step 0 = %+v", f)
	}
	_, err := back.Step("tokens", 2)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "")
	_, err = back.Steps("nope")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "nope")
}

func serializedExample(t *testing.T, set func(ex *cairn.Example)) []byte {
	t.Helper()
	ex := must(cairn.NewExample())
	defer ex.Close()
	set(ex)
	return must(ex.Serialize())
}

func TestParseExamples(t *testing.T) {
	ctx := newContext(t)
	records := [][]byte{
		serializedExample(t, func(ex *cairn.Example) {
			ok(t, ex.SetFloats("x", []float32{1, 2}))
			ok(t, ex.SetInt64s("ids", []int64{5, 6, 7}))
			ok(t, ex.SetBytes("raw", [][]byte{[]byte("ab")}))
		}),
		serializedExample(t, func(ex *cairn.Example) {
			ok(t, ex.SetInt64s("ids", []int64{8}))
			ok(t, ex.SetBytes("raw", [][]byte{[]byte("cd")}))
		}),
	}
	def := tensor(t, ctx, []int64{2}, []float32{-1, -1})
	specs := []cairn.FeatureSpec{
		{Key: "x", Shape: []int64{2}, Default: def},
		{Key: "ids", Kind: cairn.FeatureSpecKindVarLen, DType: cairn.Int64},
		{Key: "raw", DType: cairn.Uint8, Shape: []int64{2}},
	}
	out := must(cairn.ParseExamples(ctx, records, specs))
	defer func() {
		for _, ts := range out {
			closeNow(ts)
		}
	}()
	if len(out) != 3 || len(out[0]) != 1 || len(out[1]) != 2 || len(out[2]) != 1 {
		t.Fatalf("outputs per spec: %d specs", len(out))
	}
	wantTensor(t, out[0][0], []int64{2, 2}, []float32{1, 2, -1, -1})
	wantTensor(t, out[1][0], []int64{4}, []int64{5, 6, 7, 8})
	wantTensor(t, out[1][1], []int64{2}, []int64{3, 1})
	wantTensor(t, out[2][0], []int64{2, 2}, []uint8("abcd"))

	_, err := cairn.ParseExamples(ctx, records, []cairn.FeatureSpec{{Key: "x", Shape: []int64{2}}})
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "x")
	_, err = cairn.ParseExamples(ctx, [][]byte{{0x0a, 0x7f}}, specs)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "")
	def.Close()
	_, err = cairn.ParseExamples(ctx, records, specs)
	wantError(t, err, `FAILED_PRECONDITION: ParseExamples: default of spec "x" is closed`)
}

func TestParseSequenceExamples(t *testing.T) {
	ctx := newContext(t)
	var records [][]byte
	for _, steps := range [][][]float32{{{1, 2}, {3, 4}}, {{5, 6}}} {
		ex := must(cairn.NewSequenceExample())
		ok(t, ex.SetInt64s("id", []int64{int64(len(steps))}))
		for _, s := range steps {
			ok(t, ex.AppendStepFloats("xy", s))
			ok(t, ex.AppendStepInt64s("tok", []int64{int64(s[0])}))
		}
		records = append(records, must(ex.Serialize()))
		ex.Close()
	}
	specs := []cairn.FeatureSpec{
		{Key: "id", DType: cairn.Int64},
		{Key: "xy", Kind: cairn.FeatureSpecKindFixedLenSequence, Shape: []int64{2}},
		{Key: "tok", Kind: cairn.FeatureSpecKindVarLenSequence, DType: cairn.Int64},
	}
	out := must(cairn.ParseSequenceExamples(ctx, records, specs))
	defer func() {
		for _, ts := range out {
			closeNow(ts)
		}
	}()
	if len(out[0]) != 1 || len(out[1]) != 2 || len(out[2]) != 3 {
		t.Fatalf("outputs per spec: %d, %d, %d", len(out[0]), len(out[1]), len(out[2]))
	}
	wantTensor(t, out[0][0], []int64{2}, []int64{2, 1})
	wantTensor(t, out[1][0], []int64{2, 2, 2}, []float32{1, 2, 3, 4, 5, 6, 0, 0})
	wantTensor(t, out[1][1], []int64{2}, []int64{2, 1})
	wantTensor(t, out[2][0], []int64{3}, []int64{1, 3, 5})
	wantTensor(t, out[2][1], []int64{3}, []int64{1, 1, 1})
	wantTensor(t, out[2][2], []int64{2}, []int64{2, 1})
}

func wantTensor[E cairn.Element](t *testing.T, x *cairn.Tensor, shape []int64, values []E) {
	t.Helper()
	got := must(cairn.Read[E](x))
	if !reflect.DeepEqual(x.Shape(), shape) || !reflect.DeepEqual(got, values) {
		t.Errorf("got %v %v, want %v %v", x.Shape(), got, shape, values)
	}
}
