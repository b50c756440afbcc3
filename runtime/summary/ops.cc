// Summary ops: tf.summary's write ops as registered, stateful ops with no outputs. Called eagerly
// they write at once; inside a traced function they become graph nodes that write on every replay
// (graph passes keep stateful ops, in trace order). Attributes: `writer` (a SummaryWriter id, 0 =
// the default writer when the op runs; with none set the op writes nothing, as tf.summary does),
// `tag`, and `step` (kDefaultStep = INT64_MIN: the default step when the op runs).
#include "runtime/ops/registry.h"
#include "runtime/summary/values.h"
#include "runtime/summary/writer.h"

namespace cairn::summary {

namespace {

constexpr DTypeSet kScalarTypes = dtypes::kReal | dtypes::kBool;
constexpr DTypeSet kImageTypes = dtypes::kFloat | dtype_bit(DType::UInt8);

OpBuilder summary_op(const char* name, const char* input, DTypeSet types, const char* summary) {
  OpBuilder b(name);
  b.summary(summary)
      .input(input, "T")
      .type_attr("T", types)
      .int_attr("writer", 0, 0)
      .string_attr_required("tag")
      .int_attr("step", kDefaultStep)
      .stateful();
  b.def.differentiable = false;
  return b;
}

// The op's writer: null (write nothing) when `writer` is 0 and no default writer is set.
std::shared_ptr<SummaryWriter> writer_of(const KernelContext& k, std::string_view tag) {
  const int64_t id = k.attrs.i("writer");
  std::shared_ptr<SummaryWriter> w = find_writer(id);
  if (!w && id != 0)
    raise(Code::FailedPrecondition, "{} '{}': summary writer {} no longer exists (it was freed)", k.op(), tag, id);
  return w;
}

// Runs a kernel body so that its errors name the op, as every op's status does: the value
// checks (runtime/summary/values.h) are shared with the C API's summary calls and name only the
// summary kind and tag ("scalar 'loss': expected a rank-0 tensor ...").
template <void (*Body)(KernelContext&)>
void naming_op(KernelContext& k) {
  try {
    Body(k);
  } catch (const Error& e) {
    if (e.message().rfind(k.def.name, 0) == 0) throw;
    throw Error(e.code(), fmt::format("{}: {}", k.op(), e.message()));
  }
}

void write_scalar(KernelContext& k) {
  const std::string_view tag = k.attrs.s("tag");
  Value v = scalar_tensor_value(std::string(tag), k.input(0));  // validates even without a writer
  if (auto w = writer_of(k, tag)) w->write(std::move(v), k.attrs.i("step"));
}

void write_histogram(KernelContext& k) {
  const std::string_view tag = k.attrs.s("tag");
  if (auto w = writer_of(k, tag)) w->write(histogram_value(std::string(tag), k.input(0), k.attrs.i("buckets")), k.attrs.i("step"));
}

void write_image(KernelContext& k) {
  const std::string_view tag = k.attrs.s("tag");
  if (auto w = writer_of(k, tag))
    w->write(image_value(std::string(tag), k.input(0), k.attrs.i("max_outputs")), k.attrs.i("step"));
}

void write_audio(KernelContext& k) {
  const std::string_view tag = k.attrs.s("tag");
  if (auto w = writer_of(k, tag))
    w->write(audio_value(std::string(tag), k.input(0), k.attrs.f("sample_rate"), k.attrs.i("max_outputs")),
             k.attrs.i("step"));
}

}  // namespace

CAIRN_REGISTER_OP(summary_op("WriteScalarSummary", "value", kScalarTypes,
                             "tf.summary.scalar: writes a rank-0 value as a float32 scalar summary"));
CAIRN_REGISTER_OP(summary_op("WriteHistogramSummary", "values", dtypes::kReal,
                             "tf.summary.histogram: TF2's [k, 3] buckets of the values")
                      .int_attr("buckets", kDefaultBuckets, 0));
CAIRN_REGISTER_OP(summary_op("WriteImageSummary", "images", kImageTypes,
                             "tf.summary.image: PNGs of the first max_outputs images of a [k, h, w, c] batch")
                      .int_attr("max_outputs", kDefaultMaxOutputs, 0));
CAIRN_REGISTER_OP(summary_op("WriteAudioSummary", "audio", dtypes::kFloat,
                             "tf.summary.audio: WAVs of the first max_outputs clips of a [k, t, c] batch in [-1, 1]")
                      .float_attr_required("sample_rate")
                      .int_attr("max_outputs", kDefaultMaxOutputs, 0));

CAIRN_REGISTER_KERNEL("WriteScalarSummary", DeviceKind::CPU, naming_op<write_scalar>);
CAIRN_REGISTER_KERNEL("WriteHistogramSummary", DeviceKind::CPU, naming_op<write_histogram>);
CAIRN_REGISTER_KERNEL("WriteImageSummary", DeviceKind::CPU, naming_op<write_image>);
CAIRN_REGISTER_KERNEL("WriteAudioSummary", DeviceKind::CPU, naming_op<write_audio>);

}  // namespace cairn::summary
