// Package cbench holds the C-level side of the binding's benchmarks, so that "over C" is measured
// in the same process and run as the binding's own figure (cgo is not allowed in _test.go files).
// It uses the C API directly and nothing of package cairn.
package cbench

/*
#cgo pkg-config: cairn
#include <stdint.h>
#include "cairn/cairn.h"

typedef struct cbench_add16 {
  cairn_context *ctx;
  cairn_tensor *x, *y;
} cbench_add16;

static int cbench_add16_setup(cbench_add16 *b) {
  float data[16] = {0};
  int64_t shape[1] = {16};
  cairn_status *s = cairn_context_create(NULL, &b->ctx);
  if (s) { cairn_status_free(s); return 0; }
  s = cairn_tensor_create(b->ctx, CAIRN_FLOAT32, shape, 1, data, sizeof data, &b->x);
  if (s) { cairn_status_free(s); return 0; }
  s = cairn_tensor_create(b->ctx, CAIRN_FLOAT32, shape, 1, data, sizeof data, &b->y);
  if (s) { cairn_status_free(s); return 0; }
  return 1;
}

static void cbench_add16_teardown(cbench_add16 *b) {
  cairn_tensor_free(b->x);
  cairn_tensor_free(b->y);
  cairn_context_free(b->ctx);
}

// One Add and one free, as a C program would write them.
static int cbench_add16_once(cbench_add16 *b) {
  cairn_tensor *in[2] = {b->x, b->y}, *out = NULL;
  cairn_status *s = cairn_op_run(b->ctx, "Add", in, 2, NULL, 0, &out, 1);
  if (s) { cairn_status_free(s); return 0; }
  cairn_tensor_free(out);
  return 1;
}

static int cbench_add16_loop(cbench_add16 *b, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (!cbench_add16_once(b)) return 0;
  return 1;
}
*/
import "C"

import "errors"

// Add16 is a 16-element float32 Add set up through the C API: a context and two inputs.
type Add16 struct{ b C.cbench_add16 }

// NewAdd16 creates the context and inputs; Close frees them.
func NewAdd16() (*Add16, error) {
	a := &Add16{}
	if C.cbench_add16_setup(&a.b) == 0 {
		C.cbench_add16_teardown(&a.b)
		return nil, errors.New("cbench: Add16 setup failed")
	}
	return a, nil
}

// Close frees the context and inputs.
func (a *Add16) Close() { C.cbench_add16_teardown(&a.b) }

// LoopInC runs n Adds (each result freed) in one C loop: the C API's own per-op figure.
func (a *Add16) LoopInC(n int) error {
	if C.cbench_add16_loop(&a.b, C.int64_t(n)) == 0 {
		return errors.New("cbench: Add failed")
	}
	return nil
}

// Once runs one Add and frees the result in one cgo call: the C figure plus one crossing.
func (a *Add16) Once() error {
	if C.cbench_add16_once(&a.b) == 0 {
		return errors.New("cbench: Add failed")
	}
	return nil
}
