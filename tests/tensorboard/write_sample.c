/* Writes the files tests/tensorboard/check_with_tensorboard.py reads with the real TensorBoard:
 * TFRecord files in the three compressions, an event log with every summary kind, a summary written
 * inside a compiled function on each replay, the graph of a function with a cond and a while loop,
 * and a profiler trace. Everything goes through the C API, as a binding would use it.
 *
 *   write_sample OUT_DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CAIRN_EXPERIMENTAL /* cond and while_loop, for a graph with control flow */
#include "cairn/cairn.h"

static void check(cairn_status *s, const char *what) {
  if (s == NULL) return;
  fprintf(stderr, "write_sample: %s: %s\n", what, cairn_status_message(s));
  exit(1);
}

static cairn_tensor *tensor(cairn_context *ctx, cairn_dtype dtype, const int64_t *shape, size_t rank, const void *data,
                            size_t nbytes) {
  cairn_tensor *t = NULL;
  check(cairn_tensor_create(ctx, dtype, shape, rank, data, nbytes, &t), "tensor");
  return t;
}

static cairn_tensor *scalar_f32(cairn_context *ctx, float v) { return tensor(ctx, CAIRN_FLOAT32, NULL, 0, &v, sizeof v); }

static cairn_status *binary(cairn_context *ctx, const char *op, cairn_tensor *a, cairn_tensor *b, cairn_tensor **out) {
  cairn_tensor *ins[2] = {a, b};
  return cairn_op_run(ctx, op, ins, 2, NULL, 0, out, 1);
}

/* ---- Records: the same records in each compression, and records.txt listing them. ---- */
static void write_records(const char *dir) {
  char path[4096];
  static const char *names[3] = {"plain", "zlib", "gzip"};
  static const cairn_compression kinds[3] = {CAIRN_COMPRESSION_NONE, CAIRN_COMPRESSION_ZLIB, CAIRN_COMPRESSION_GZIP};
  unsigned char buf[5000];
  snprintf(path, sizeof path, "%s/records.txt", dir);
  FILE *txt = fopen(path, "w");
  if (!txt) { perror(path); exit(1); }
  for (int c = 0; c < 3; ++c) {
    cairn_record_writer_options opts;
    cairn_record_writer *w = NULL;
    check(cairn_record_writer_options_init(&opts, sizeof opts), "record options");
    opts.compression = kinds[c];
    snprintf(path, sizeof path, "%s/%s.tfrecord", dir, names[c]);
    check(cairn_record_writer_open(path, &opts, &w), "record writer");
    for (int i = 0; i < 12; ++i) {
      size_t n = (size_t)(i * 397) % sizeof buf;
      for (size_t j = 0; j < n; ++j) buf[j] = (unsigned char)((i * 31 + j * 7) & 0xff);
      check(cairn_record_writer_write(w, buf, n), "record write");
      if (c == 0) {
        fprintf(txt, "%zu ", n);
        for (size_t j = 0; j < n; ++j) fprintf(txt, "%02x", buf[j]);
        fputc('\n', txt);
      }
    }
    check(cairn_record_writer_close(w), "record close");
    cairn_record_writer_free(w);
  }
  fclose(txt);
}

/* ---- A compiled function that logs a scalar on every replay: loss = x / 1000 at step x. ---- */
static cairn_status *traced_step(void *user_data, cairn_context *ctx, cairn_tensor *const *in, size_t n_in,
                                 cairn_tensor **out, size_t n_out) {
  (void)n_in;
  (void)n_out;
  cairn_summary_writer *w = (cairn_summary_writer *)user_data;
  cairn_tensor *k = scalar_f32(ctx, 1000.0f);
  cairn_status *s = binary(ctx, "RealDiv", in[0], k, &out[0]);
  cairn_tensor_free(k);
  if (s) return s;
  return cairn_summary_scalar_tensor(ctx, w, "traced/loss", out[0], CAIRN_SUMMARY_DEFAULT_STEP);
}

/* ---- The graph: y = cond(x > 0, x * 2, -x); then while i < 3: y = y + 1. ---- */
static cairn_status *double_it(void *u, cairn_context *ctx, cairn_tensor *const *in, size_t n_in, cairn_tensor **out,
                               size_t n_out) {
  (void)u, (void)n_in, (void)n_out;
  cairn_tensor *two = scalar_f32(ctx, 2.0f);
  cairn_status *s = binary(ctx, "Mul", in[0], two, &out[0]);
  cairn_tensor_free(two);
  return s;
}
static cairn_status *negate(void *u, cairn_context *ctx, cairn_tensor *const *in, size_t n_in, cairn_tensor **out,
                            size_t n_out) {
  (void)u, (void)n_in, (void)n_out;
  return cairn_op_run(ctx, "Neg", (cairn_tensor *const *)in, 1, NULL, 0, out, 1);
}
static cairn_status *below_three(void *u, cairn_context *ctx, cairn_tensor *const *v, size_t n_in, cairn_tensor **out,
                                 size_t n_out) {
  (void)u, (void)n_in, (void)n_out;
  cairn_tensor *three = scalar_f32(ctx, 3.0f);
  cairn_status *s = binary(ctx, "Less", v[0], three, &out[0]);
  cairn_tensor_free(three);
  return s;
}
static cairn_status *step_loop(void *u, cairn_context *ctx, cairn_tensor *const *v, size_t n_in, cairn_tensor **out,
                               size_t n_out) {
  (void)u, (void)n_in, (void)n_out;
  cairn_tensor *one = scalar_f32(ctx, 1.0f);
  cairn_status *s = binary(ctx, "Add", v[0], one, &out[0]);
  if (!s) s = binary(ctx, "Add", v[1], one, &out[1]);
  cairn_tensor_free(one);
  return s;
}
static cairn_status *graph_fn(void *u, cairn_context *ctx, cairn_tensor *const *in, size_t n_in, cairn_tensor **out,
                              size_t n_out) {
  (void)u, (void)n_in, (void)n_out;
  cairn_tensor *zero = scalar_f32(ctx, 0.0f), *pred = NULL, *y = NULL, *vars[2] = {NULL, NULL}, *res[2] = {NULL, NULL};
  cairn_status *s = binary(ctx, "Greater", in[0], zero, &pred);
  if (!s) s = cairn_cond(ctx, pred, in, 1, double_it, negate, NULL, &y, 1);
  if (!s) {
    vars[0] = zero;
    vars[1] = y;
    s = cairn_while_loop(ctx, below_three, step_loop, NULL, vars, 2, -1, res);
  }
  if (!s) s = cairn_op_run(ctx, "MatMul", (cairn_tensor *const[]){in[1], in[1]}, 2, NULL, 0, &out[0], 1);
  if (!s) {
    out[1] = res[1];
    res[1] = NULL;
  }
  cairn_tensor_free(zero);
  cairn_tensor_free(pred);
  cairn_tensor_free(y);
  cairn_tensor_free(res[0]);
  cairn_tensor_free(res[1]);
  return s;
}

static void write_events(cairn_context *ctx, const char *logdir) {
  char run[4096];
  snprintf(run, sizeof run, "%s/run1", logdir);
  cairn_summary_writer *w = NULL;
  check(cairn_summary_writer_create(run, NULL, &w), "summary writer");

  for (int step = 1; step <= 20; ++step) {
    check(cairn_summary_scalar(w, "loss", 1.0 / step, step), "scalar loss");
    check(cairn_summary_scalar(w, "accuracy", 0.05 * step, step), "scalar accuracy");
  }

  float values[1000];
  for (int i = 0; i < 1000; ++i) values[i] = (float)i;
  cairn_tensor *h = tensor(ctx, CAIRN_FLOAT32, (int64_t[]){1000}, 1, values, sizeof values);
  check(cairn_summary_histogram(ctx, w, "weights", h, 0, 1), "histogram");
  cairn_tensor_free(h);

  uint8_t digits[2 * 8 * 8];
  for (int i = 0; i < 2 * 64; ++i) digits[i] = (uint8_t)((i % 64) * 4);
  cairn_tensor *img = tensor(ctx, CAIRN_UINT8, (int64_t[]){2, 8, 8, 1}, 4, digits, sizeof digits);
  check(cairn_summary_image(ctx, w, "digits", img, 3, 1), "image digits");
  cairn_tensor_free(img);
  float rgb[16 * 24 * 3];
  for (int i = 0; i < 16 * 24 * 3; ++i) rgb[i] = (float)(i % 97) / 96.0f;
  img = tensor(ctx, CAIRN_FLOAT32, (int64_t[]){1, 16, 24, 3}, 4, rgb, sizeof rgb);
  check(cairn_summary_image(ctx, w, "rgb", img, 3, 1), "image rgb");
  cairn_tensor_free(img);

  check(cairn_summary_text(w, "notes", "hello **cairn**", 1), "text");

  static float tone[2000];
  for (int i = 0; i < 2000; ++i) tone[i] = 0.5f * sinf(2.0f * 3.14159265f * 440.0f * (float)i / 8000.0f);
  cairn_tensor *audio = tensor(ctx, CAIRN_FLOAT32, (int64_t[]){1, 2000, 1}, 3, tone, sizeof tone);
  check(cairn_summary_audio(ctx, w, "tone", audio, 8000, 3, 1), "audio");
  cairn_tensor_free(audio);

  /* A summary inside a compiled function: traced once, written on each of 5 calls. */
  cairn_function *fn = NULL;
  check(cairn_function_create(ctx, "traced_step", traced_step, w, NULL, &fn), "function");
  for (int64_t step = 100; step < 105; ++step) {
    cairn_summary_set_step(step);
    cairn_tensor *x = scalar_f32(ctx, (float)step), *y = NULL;
    check(cairn_function_call(fn, &x, 1, &y, 1), "traced call");
    cairn_tensor_free(x);
    cairn_tensor_free(y);
  }
  if (cairn_function_num_traces(fn) != 1) {
    fprintf(stderr, "write_sample: the function traced %zu times\n", cairn_function_num_traces(fn));
    exit(1);
  }
  cairn_function_free(fn);

  /* The graph of a function with a cond and a while loop. */
  cairn_function *g = NULL;
  check(cairn_function_create(ctx, "graph_fn", graph_fn, NULL, NULL, &g), "graph function");
  float m[4] = {1, 2, 3, 4};
  cairn_tensor *ins[2] = {scalar_f32(ctx, 2.0f), tensor(ctx, CAIRN_FLOAT32, (int64_t[]){2, 2}, 2, m, sizeof m)};
  cairn_tensor *outs[2] = {NULL, NULL};
  check(cairn_profiler_start(NULL), "profiler start");
  check(cairn_function_call(g, ins, 2, outs, 2), "graph call");
  cairn_profile *profile = NULL;
  check(cairn_profiler_stop(&profile), "profiler stop");
  check(cairn_summary_graph(w, g, 0, 0), "graph");
  char *trace_path = NULL;
  check(cairn_profile_export_to_logdir(profile, logdir, "sample", &trace_path), "profile export");
  cairn_free(trace_path);
  cairn_profile_free(profile);
  for (int i = 0; i < 2; ++i) {
    cairn_tensor_free(ins[i]);
    cairn_tensor_free(outs[i]);
  }
  cairn_function_free(g);

  check(cairn_summary_writer_close(w), "summary close");
  cairn_summary_writer_free(w);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/records", argv[1]);
  mkdir(argv[1], 0755);
  mkdir(dir, 0755);
  write_records(dir);
  cairn_context *ctx = NULL;
  check(cairn_context_create(NULL, &ctx), "context");
  snprintf(dir, sizeof dir, "%s/logs", argv[1]);
  write_events(ctx, dir);
  cairn_context_free(ctx);
  printf("wrote %s\n", argv[1]);
  return 0;
}
