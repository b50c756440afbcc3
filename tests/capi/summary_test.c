/* Summaries through the C API: a writer and its file, host scalars and text with the default step
 * and writer, tensor summaries eagerly and inside a compiled function (one event per call), errors
 * naming the tag, options and NULL handling. Event files are checked by their TFRecord framing
 * here; tests/runtime/summary decodes the events. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

/* Records in a TFRecord file (u64 length | u32 crc | data | u32 crc); -1 when the framing is cut. */
static long count_records(const char *path) {
  FILE *f = fopen(path, "rb");
  long n = 0;
  unsigned char h[12];
  if (!f) return -1;
  while (fread(h, 1, 12, f) == 12) {
    uint64_t len = 0;
    int i;
    for (i = 7; i >= 0; --i) len = (len << 8) | h[i];
    if (fseek(f, (long)len + 4, SEEK_CUR) != 0) break;
    ++n;
  }
  fclose(f);
  return n;
}

static long records_of(cairn_summary_writer *w) {
  char *path = NULL;
  long n;
  CHECK_OK(cairn_summary_writer_flush(w));
  CHECK_OK(cairn_summary_writer_path(w, &path));
  n = path ? count_records(path) : -1;
  cairn_free(path);
  return n;
}

/* A training-step-like function: loss = mean((x - 1)^2), logged with the default step. */
static cairn_status *log_loss(void *user_data, cairn_context *ctx, cairn_tensor *const *inputs, size_t n_inputs,
                              cairn_tensor **outputs, size_t n_outputs) {
  cairn_summary_writer *w = (cairn_summary_writer *)user_data;
  cairn_tensor *sq = NULL, *loss = NULL;
  cairn_status *st;
  (void)n_inputs;
  (void)n_outputs;
  st = cairn_op_run(ctx, "Square", inputs, 1, NULL, 0, &sq, 1);
  if (st) return st;
  st = cairn_op_run(ctx, "Mean", &sq, 1, NULL, 0, &loss, 1);
  cairn_tensor_free(sq);
  if (st) return st;
  st = cairn_summary_scalar_tensor(ctx, w, "loss", loss, CAIRN_SUMMARY_DEFAULT_STEP);
  if (st) {
    cairn_tensor_free(loss);
    return st;
  }
  outputs[0] = loss;
  return NULL;
}

int main(void) {
  const char *tmp = getenv("TEST_TMPDIR");
  char dir[512];
  cairn_context *ctx = NULL;
  cairn_summary_writer *w = NULL, *w2 = NULL;
  cairn_summary_writer_options opts = CAIRN_SUMMARY_WRITER_OPTIONS_INIT;
  cairn_function *fn = NULL;
  cairn_tensor *x = NULL, *y = NULL, *pair = NULL, *img = NULL, *bad_img = NULL, *snd = NULL;
  const float xv[2] = {1, 3}, pixels[2 * 3 * 4] = {0}, samples[8] = {0, 0.5f, -0.5f, 1, 0, 0, 0, 0};
  const int64_t two = 2, img_shape[4] = {2, 3, 4, 1}, bad_shape[3] = {2, 3, 4}, snd_shape[3] = {2, 4, 1};
  char *path = NULL;
  int i;

  snprintf(dir, sizeof dir, "%s/capi_summary", tmp ? tmp : "/tmp");
  CHECK_OK(cairn_context_create(NULL, &ctx));

  /* Options: the init function matches the macro; a bad struct_size is refused. */
  {
    cairn_summary_writer_options o;
    CHECK_OK(cairn_summary_writer_options_init(&o, sizeof o));
    CHECK(o.max_queue == 10 && o.flush_millis == 1000 && o.filename_suffix == NULL);
    o.struct_size = 3;
    CHECK_ERR(cairn_summary_writer_create(dir, &o, &w), CAIRN_INVALID_ARGUMENT, "struct_size");
  }
  opts.filename_suffix = ".capi";
  CHECK_OK(cairn_summary_writer_create(dir, &opts, &w));
  CHECK_OK(cairn_summary_writer_path(w, &path));
  CHECK(path && strstr(path, "/events.out.tfevents.") && strstr(path, ".capi"));
  cairn_free(path);
  CHECK(records_of(w) == 1); /* file_version */

  /* Host scalars and text; the default step. */
  cairn_summary_set_step(CAIRN_SUMMARY_DEFAULT_STEP);
  CHECK(cairn_summary_step() == CAIRN_SUMMARY_DEFAULT_STEP);
  CHECK_ERR(cairn_summary_scalar(w, "loss", 1.0, CAIRN_SUMMARY_DEFAULT_STEP), CAIRN_INVALID_ARGUMENT,
            "scalar 'loss': no step given");
  CHECK_OK(cairn_summary_scalar(w, "loss", 1.0, 0));
  cairn_summary_set_step(5);
  CHECK(cairn_summary_step() == 5);
  CHECK_OK(cairn_summary_scalar(w, "loss", 0.5, CAIRN_SUMMARY_DEFAULT_STEP));
  CHECK_OK(cairn_summary_text(w, "notes", "hello", 1));
  CHECK(records_of(w) == 4);

  /* NULL writer: the default writer; none set writes nothing and succeeds. */
  cairn_summary_writer_set_default(NULL);
  CHECK_OK(cairn_summary_scalar(NULL, "loss", 2.0, 1));
  cairn_summary_writer_set_default(w);
  CHECK_OK(cairn_summary_scalar(NULL, "loss", 2.0, 1));
  cairn_summary_writer_set_default(NULL);
  CHECK(records_of(w) == 5);

  /* Tensor summaries, eagerly. */
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &two, 1, xv, sizeof xv, &pair));
  CHECK_OK(cairn_summary_histogram(ctx, w, "x", pair, 0, 2));
  CHECK_ERR(cairn_summary_scalar_tensor(ctx, w, "loss", pair, 2), CAIRN_INVALID_ARGUMENT, "scalar 'loss'");
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, img_shape, 4, pixels, sizeof pixels, &img));
  CHECK_OK(cairn_summary_image(ctx, w, "img", img, -1, 3));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, bad_shape, 3, pixels, sizeof pixels, &bad_img));
  CHECK_ERR(cairn_summary_image(ctx, w, "img", bad_img, 1, 3), CAIRN_INVALID_ARGUMENT, "image 'img'");
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, snd_shape, 3, samples, sizeof samples, &snd));
  CHECK_OK(cairn_summary_audio(ctx, w, "snd", snd, 16000, 1, 4));
  CHECK_ERR(cairn_summary_audio(ctx, w, "snd", snd, 0.5, 1, 4), CAIRN_INVALID_ARGUMENT, "audio 'snd'");
  CHECK(records_of(w) == 8);

  /* Inside a compiled function: one event per call, at the step set before it. */
  CHECK_OK(cairn_function_create(ctx, "log_loss", log_loss, w, NULL, &fn));
  CHECK_OK(cairn_tensor_create(ctx, CAIRN_FLOAT32, &two, 1, xv, sizeof xv, &x));
  for (i = 0; i < 4; ++i) {
    cairn_summary_set_step(10 + i);
    CHECK_OK(cairn_function_call(fn, &x, 1, &y, 1));
    cairn_tensor_free(y);
    y = NULL;
  }
  CHECK(cairn_function_num_traces(fn) == 1);
  CHECK(records_of(w) == 12);
  cairn_summary_set_step(CAIRN_SUMMARY_DEFAULT_STEP);
  CHECK_ERR(cairn_function_call(fn, &x, 1, &y, 1), CAIRN_INVALID_ARGUMENT, "scalar 'loss': no step given");

  /* NULL arguments and a closed writer. */
  CHECK_ERR(cairn_summary_scalar(w, NULL, 1, 1), CAIRN_INVALID_ARGUMENT, "tag is NULL");
  CHECK_ERR(cairn_summary_writer_create(NULL, NULL, &w2), CAIRN_INVALID_ARGUMENT, "logdir is NULL");
  CHECK_ERR(cairn_summary_writer_flush(NULL), CAIRN_INVALID_ARGUMENT, "w is NULL");
  CHECK_ERR(cairn_summary_histogram(NULL, w, "x", pair, 0, 1), CAIRN_INVALID_ARGUMENT, "ctx is NULL");
  CHECK_OK(cairn_summary_writer_close(w));
  CHECK_OK(cairn_summary_writer_close(w));
  CHECK_ERR(cairn_summary_scalar(w, "loss", 1, 1), CAIRN_FAILED_PRECONDITION, "closed");
  cairn_summary_writer_free(NULL);

  cairn_function_free(fn);
  cairn_summary_writer_free(w);
  cairn_tensor_free(x);
  cairn_tensor_free(pair);
  cairn_tensor_free(img);
  cairn_tensor_free(bad_img);
  cairn_tensor_free(snd);
  cairn_context_free(ctx);
  TEST_MAIN_END();
}
