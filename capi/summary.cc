// Summaries (tf.summary) in the C API: writers, the default writer and step, and the summary calls.
// The tensor forms run the registered summary ops through dispatch, so a trace records them. The
// graph of a compiled function is encoded by runtime/graph/graphdef_proto.
#include <memory>
#include <string>

#include "capi/internal/function_handle.h"
#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "runtime/eager/dispatch.h"
#include "runtime/graph/graphdef_proto.h"
#include "runtime/summary/values.h"
#include "runtime/summary/writer.h"

using namespace cairn;
using cairn::capi::read_options;
using cairn::capi::require;

struct cairn_summary_writer {
  std::shared_ptr<summary::SummaryWriter> w;
};

namespace {

// The writer a host-value call writes to: `w`, or the default writer (null when none is set).
std::shared_ptr<summary::SummaryWriter> writer_or_default(cairn_summary_writer* w) {
  return w ? w->w : summary::default_writer();
}

// Runs summary op `op` on `t` (eager: writes now; inside a trace: records the op).
void run_summary_op(cairn_context* ctx, cairn_summary_writer* w, const char* op, const char* tag,
                    const cairn_tensor* t, int64_t step, std::vector<NamedAttr> extra, const char* fn) {
  require(ctx, fn, "ctx");
  require(tag, fn, "tag");
  require(t, fn, "tensor");
  std::vector<NamedAttr> attrs = {attr_int("writer", w ? w->w->id() : 0), attr_string("tag", tag),
                                  attr_int("step", step)};
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  run_op(*ctx->ctx, op, {t->t}, attrs);
}

}  // namespace

extern "C" {

cairn_status* cairn_summary_writer_create(const char* logdir, const cairn_summary_writer_options* user_opts,
                                          cairn_summary_writer** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_summary_writer_create";
  require(logdir, fn, "logdir");
  require(out, fn, "out");
  const cairn_summary_writer_options opts = read_options(user_opts, fn);
  summary::WriterOptions o;
  o.max_queue = opts.max_queue;
  o.flush_millis = opts.flush_millis;
  if (opts.filename_suffix) o.filename_suffix = opts.filename_suffix;
  *out = new cairn_summary_writer{summary::SummaryWriter::create(logdir, o)};
  CAIRN_API_END
}

cairn_status* cairn_summary_writer_flush(cairn_summary_writer* w) {
  CAIRN_API_BEGIN
  require(w, "cairn_summary_writer_flush", "w")->w->flush();
  CAIRN_API_END
}

cairn_status* cairn_summary_writer_close(cairn_summary_writer* w) {
  CAIRN_API_BEGIN
  require(w, "cairn_summary_writer_close", "w")->w->close();
  CAIRN_API_END
}

void cairn_summary_writer_free(cairn_summary_writer* w) { delete w; }

cairn_status* cairn_summary_writer_path(const cairn_summary_writer* w, char** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_summary_writer_path";
  require(w, fn, "w");
  *require(out, fn, "out") = capi::malloc_string(w->w->path(), fn);
  CAIRN_API_END
}

void cairn_summary_writer_set_default(cairn_summary_writer* w) { summary::set_default_writer(w ? w->w : nullptr); }

void cairn_summary_set_step(int64_t step) { summary::set_default_step(step); }

int64_t cairn_summary_step(void) { return summary::default_step(); }

cairn_status* cairn_summary_scalar(cairn_summary_writer* w, const char* tag, double value, int64_t step) {
  CAIRN_API_BEGIN
  require(tag, "cairn_summary_scalar", "tag");
  if (auto writer = writer_or_default(w)) writer->scalar(tag, static_cast<float>(value), step);
  CAIRN_API_END
}

cairn_status* cairn_summary_text(cairn_summary_writer* w, const char* tag, const char* text, int64_t step) {
  CAIRN_API_BEGIN
  require(tag, "cairn_summary_text", "tag");
  require(text, "cairn_summary_text", "text");
  if (auto writer = writer_or_default(w)) writer->write(summary::text_value(tag, text), step);
  CAIRN_API_END
}

cairn_status* cairn_summary_scalar_tensor(cairn_context* ctx, cairn_summary_writer* w, const char* tag,
                                          const cairn_tensor* t, int64_t step) {
  CAIRN_API_BEGIN
  run_summary_op(ctx, w, "WriteScalarSummary", tag, t, step, {}, "cairn_summary_scalar_tensor");
  CAIRN_API_END
}

cairn_status* cairn_summary_histogram(cairn_context* ctx, cairn_summary_writer* w, const char* tag,
                                      const cairn_tensor* t, int64_t buckets, int64_t step) {
  CAIRN_API_BEGIN
  run_summary_op(ctx, w, "WriteHistogramSummary", tag, t, step,
                 {attr_int("buckets", buckets <= 0 ? summary::kDefaultBuckets : buckets)}, "cairn_summary_histogram");
  CAIRN_API_END
}

cairn_status* cairn_summary_image(cairn_context* ctx, cairn_summary_writer* w, const char* tag,
                                  const cairn_tensor* images, int64_t max_outputs, int64_t step) {
  CAIRN_API_BEGIN
  run_summary_op(ctx, w, "WriteImageSummary", tag, images, step,
                 {attr_int("max_outputs", max_outputs < 0 ? summary::kDefaultMaxOutputs : max_outputs)},
                 "cairn_summary_image");
  CAIRN_API_END
}

cairn_status* cairn_summary_audio(cairn_context* ctx, cairn_summary_writer* w, const char* tag,
                                  const cairn_tensor* audio, double sample_rate, int64_t max_outputs, int64_t step) {
  CAIRN_API_BEGIN
  run_summary_op(ctx, w, "WriteAudioSummary", tag, audio, step,
                 {attr_float("sample_rate", sample_rate),
                  attr_int("max_outputs", max_outputs < 0 ? summary::kDefaultMaxOutputs : max_outputs)},
                 "cairn_summary_audio");
  CAIRN_API_END
}

cairn_status* cairn_summary_graph(cairn_summary_writer* w, const cairn_function* fn, size_t index, int64_t step) {
  CAIRN_API_BEGIN
  const char* name = "cairn_summary_graph";
  require(fn, name, "fn");
  const graph::ConcreteFunction& concrete = capi::concrete_at(fn, index, name);
  if (auto writer = writer_or_default(w)) {
    writer->write_graph(summary::resolve_step(step, "graph", fn->fn->name()), graph::graphdef_proto(concrete.graph()));
  }
  CAIRN_API_END
}

}  // extern "C"
