package cairn_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"cairn.dev/cairn"
)

// A model's weights saved as safetensors under PyTorch-style names, listed by the reader, and
// loaded by name into a second model of the same layers.
func ExampleObject_SaveWeights() {
	dir, err := os.MkdirTemp("", "cairn-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	newModel := func() *cairn.Sequential {
		dense, err := cairn.NewDense(ctx, 2)
		if err != nil {
			log.Fatal(err)
		}
		defer dense.Close()
		model, err := cairn.NewSequential(ctx, []*cairn.Layer{dense})
		if err != nil {
			log.Fatal(err)
		}
		x, _ := cairn.NewTensor(ctx, []int64{1, 3}, []float32{1, 2, 3})
		y, err := model.Call(x, false) // builds the layers: kernel [3, 2], bias [2]
		if err != nil {
			log.Fatal(err)
		}
		x.Close()
		y.Close()
		return model
	}

	model := newModel()
	defer model.Close()
	path := filepath.Join(dir, "model.safetensors")
	naming := []cairn.WeightsOption{cairn.WithPrefix("model."), cairn.WithSeparator(".")}
	err = model.SaveWeights(path, cairn.WeightsFormatSafetensors,
		append(naming, cairn.WithMetadata(map[string]string{"format": "pt"}))...)
	if err != nil {
		log.Fatal(err)
	}

	reader, err := cairn.OpenCheckpointReader(path) // also TensorFlow checkpoints and Cairn files
	if err != nil {
		log.Fatal(err)
	}
	defer reader.Close()
	fmt.Println(reader.Format(), "format:", reader.Metadata()["format"])
	for _, e := range reader.Entries() {
		fmt.Println(e.Key, e.TypeName, e.Shape)
	}

	other := newModel()
	defer other.Close()
	loaded, err := other.LoadWeights(path, naming...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("loaded", loaded)
	// Output:
	// SAFETENSORS format: pt
	// model.layer-0.bias F32 [2]
	// model.layer-0.kernel F32 [3 2]
	// loaded 2
}
