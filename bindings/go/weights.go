package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"unsafe"
)

// Weights in other formats: Keras' save_weights / load_weights by name, over the three formats
// a CheckpointReader reads (Cairn checkpoint files, TensorFlow checkpoints, safetensors).
//
// A variable's name is its path from the object the call is made on (Walk's path: edge names
// joined by '/', "layer-0/kernel"), with every '/' replaced by the separator and the prefix put in
// front. On load a Cairn or TensorFlow key's "/.ATTRIBUTES/VARIABLE_VALUE" is dropped first, so
// the keys of a checkpoint of {"model": module} match with WithPrefix("model/"). Keys outside the
// prefix, optimizer slots (".OPTIMIZER_SLOT") and the object graph are not weights of the module
// and are passed over.

// WeightsOption sets a field of cairn_weights_options; unset fields keep their defaults.
type WeightsOption func(*weightsConfig)

type weightsConfig struct {
	prefix, separator         *string
	allowMissing, allowUnused *bool
	checksums                 *bool
	maxShardBytes             *uint64
	metadata                  map[string]string
}

// WithPrefix sets what names start with before the variable's path: "model/" for the keys of a
// checkpoint of {"model": module}, "encoder." for PyTorch-style names (default "").
func WithPrefix(prefix string) WeightsOption {
	return func(c *weightsConfig) { c.prefix = &prefix }
}

// WithSeparator sets what joins the parts of a variable's path in names (default "/"; "." for
// PyTorch-style names, "layer-0.kernel").
func WithSeparator(separator string) WeightsOption {
	return func(c *weightsConfig) { c.separator = &separator }
}

// WithAllowMissing lets LoadWeights leave the variables the file lacks as they are (default false:
// NOT_FOUND naming them).
func WithAllowMissing(on bool) WeightsOption {
	return func(c *weightsConfig) { c.allowMissing = &on }
}

// WithAllowUnused lets LoadWeights pass over values under the prefix that match no variable
// (default false: INVALID_ARGUMENT naming them).
func WithAllowUnused(on bool) WeightsOption {
	return func(c *weightsConfig) { c.allowUnused = &on }
}

// WithChecksums makes SaveWeights in safetensors store each tensor's XXH3 in "__metadata__"
// ("cairn.checksum.<name>"), which every Cairn load checks (default true). Other readers ignore it.
func WithChecksums(on bool) WeightsOption {
	return func(c *weightsConfig) { c.checksums = &on }
}

// WithMaxShardBytes makes SaveWeights in safetensors write shards of at most n bytes (one bigger
// tensor gets a shard of its own) and model.safetensors.index.json into the directory path, as
// Hugging Face's tools write them (default 0: one file at path).
func WithMaxShardBytes(n uint64) WeightsOption {
	return func(c *weightsConfig) { c.maxShardBytes = &n }
}

// WithMetadata adds strings to a safetensors file's "__metadata__" on SaveWeights, e.g.
// {"format": "pt"} (default none). The map is copied.
func WithMetadata(metadata map[string]string) WeightsOption {
	copied := make(map[string]string, len(metadata))
	for k, v := range metadata {
		copied[k] = v
	}
	return func(c *weightsConfig) { c.metadata = copied }
}

// weightsOptions is the options struct in C memory, filled by cairn_weights_options_init and
// then options; free releases it with its strings, error or not.
func weightsOptions(options []WeightsOption) (opts *C.cairn_weights_options, free func(), err error) {
	var cfg weightsConfig
	for _, set := range options {
		set(&cfg)
	}
	opts = cAlloc[C.cairn_weights_options]()
	owned := []unsafe.Pointer{unsafe.Pointer(opts)}
	free = func() {
		for _, p := range owned {
			C.free(p)
		}
	}
	if err := cWeightsOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return nil, free, err
	}
	str := func(dst **C.char, v *string) {
		if v != nil {
			*dst = C.CString(*v)
			owned = append(owned, unsafe.Pointer(*dst))
		}
	}
	str(&opts.prefix, cfg.prefix)
	str(&opts.separator, cfg.separator)
	setBool(&opts.allow_missing, cfg.allowMissing)
	setBool(&opts.allow_unused, cfg.allowUnused)
	setBool(&opts.checksums, cfg.checksums)
	if cfg.maxShardBytes != nil {
		opts.max_shard_bytes = C.uint64_t(*cfg.maxShardBytes)
	}
	if len(cfg.metadata) > 0 {
		raw, err := json.Marshal(cfg.metadata) // an object of strings: cannot fail
		if err != nil {
			return nil, free, newError(CodeInvalidArgument, "WithMetadata: "+err.Error())
		}
		js := string(raw)
		str(&opts.metadata_json, &js)
	}
	return opts, free, nil
}

// LoadWeights loads the variables under o (a module, layer, Sequential or any object) by name from
// path, in any of the three formats (Keras' load_weights by name), and returns how many it
// assigned. path is what OpenCheckpointReader takes. Every value is read and checked (dtype,
// shape, checksum) before any variable changes, so a failed load leaves every variable as it was.
// Values are copied to each variable's device. Takes WithPrefix, WithSeparator,
// WithAllowMissing and WithAllowUnused.
//
// Errors: NOT_FOUND for a missing file or (without WithAllowMissing) the variables the file lacks,
// INVALID_ARGUMENT naming the variable and key for a dtype or shape mismatch and (without
// WithAllowUnused) the values no variable took, DATA_LOSS for a damaged file.
func (o *Object) LoadWeights(path string, options ...WeightsOption) (int, error) {
	if err := checkOpen("Object.LoadWeights", "object", o); err != nil {
		return 0, err
	}
	opts, free, err := weightsOptions(options)
	defer free()
	if err != nil {
		return 0, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var loaded C.size_t
	err = cObjectLoadWeights(o.handle(), cpath, opts, &loaded)
	runtime.KeepAlive(o)
	if err != nil {
		return 0, err
	}
	return int(loaded), nil
}

// SaveWeights saves the variables under o by name to path in format (Keras' save_weights),
// atomically: a failed save leaves an earlier file at path as it was.
//   - WeightsFormatSafetensors: a file the safetensors package reads, or shards
//     (WithMaxShardBytes); WithChecksums and WithMetadata apply;
//   - WeightsFormatTf: a name-based bundle "<path>.index" + "<path>.data-00000-of-00001"
//     (tf.train.load_checkpoint and TF1's Saver read it);
//   - WeightsFormatCairn: a Cairn file of the names, without an object graph.
//
// LoadWeights reads each back. For a checkpoint TensorFlow restores by object graph, use
// Checkpoint.Export. Errors: INVALID_ARGUMENT for WeightsFormatAuto, an object without
// variables, or two variables whose names collide; the errors of writing.
func (o *Object) SaveWeights(path string, format WeightsFormat, options ...WeightsOption) error {
	if err := checkOpen("Object.SaveWeights", "object", o); err != nil {
		return err
	}
	opts, free, err := weightsOptions(options)
	defer free()
	if err != nil {
		return err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err = cObjectSaveWeights(o.handle(), cpath, C.cairn_weights_format(format), opts)
	runtime.KeepAlive(o)
	return err
}
