#include "runtime/summary/event.h"

#include <pb_encode.h>

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/io/proto/event.pb.h"

namespace cairn::summary {

namespace {

// nanopb encode callbacks. Each runs twice per message (sizing, then writing) and must be pure.
bool encode_bytes(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  const auto* v = static_cast<const std::string_view*>(*arg);
  return pb_encode_tag_for_field(s, f) && pb_encode_string(s, reinterpret_cast<const pb_byte_t*>(v->data()), v->size());
}

bool encode_strings(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (const std::string& v : *static_cast<const std::vector<std::string>*>(*arg))
    if (!pb_encode_tag_for_field(s, f) ||
        !pb_encode_string(s, reinterpret_cast<const pb_byte_t*>(v.data()), v.size()))
      return false;
  return true;
}

bool encode_dims(pb_ostream_t* s, const pb_field_t* f, void* const* arg) {
  for (int64_t d : *static_cast<const std::vector<int64_t>*>(*arg)) {
    tfpb_TensorShapeProto_Dim dim = tfpb_TensorShapeProto_Dim_init_zero;
    dim.size = d;
    if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, tfpb_TensorShapeProto_Dim_fields, &dim))
      return false;
  }
  return true;
}

void set_bytes(pb_callback_t& cb, const std::string_view* v) {
  if (v->empty()) return;  // proto3: an empty string is the default, left out
  cb.funcs.encode = encode_bytes;
  cb.arg = const_cast<std::string_view*>(v);
}

// `message` serialized after `reserve` bytes left for a header the caller writes in front.
std::string encode_message(const pb_msgdesc_t* fields, const void* message, size_t reserve, const char* what) {
  size_t size = 0;
  if (!pb_get_encoded_size(&size, fields, message)) raise(Code::Internal, "summary: cannot size {}", what);
  std::string out(reserve + size, '\0');
  pb_ostream_t stream = pb_ostream_from_buffer(reinterpret_cast<pb_byte_t*>(out.data()) + reserve, size);
  if (!pb_encode(&stream, fields, message))
    raise(Code::Internal, "summary: cannot encode {}: {}", what, PB_GET_ERROR(&stream));
  return out;
}

std::string encode_event(const tfpb_Event& event) { return encode_message(tfpb_Event_fields, &event, 0, "an Event"); }

size_t put_varint(uint8_t* p, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<uint8_t>(v);
  return n;
}

tfpb_DataClass data_class(Plugin p) {
  switch (p) {
    case Plugin::Scalars: return tfpb_DataClass_DATA_CLASS_SCALAR;
    case Plugin::Histograms:
    case Plugin::Text: return tfpb_DataClass_DATA_CLASS_TENSOR;
    case Plugin::Images:
    case Plugin::Audio: return tfpb_DataClass_DATA_CLASS_BLOB_SEQUENCE;
  }
  return tfpb_DataClass_DATA_CLASS_UNKNOWN;
}

// The plugin's serialized PluginData message: version 0 is the default, so only audio's
// AudioPluginData{encoding = WAV (11)} has bytes.
std::string_view plugin_content(Plugin p) {
  static constexpr char kAudioWav[] = {0x10, 0x0b};
  return p == Plugin::Audio ? std::string_view(kAudioWav, sizeof kAudioWav) : std::string_view();
}

}  // namespace

const char* plugin_name(Plugin p) {
  switch (p) {
    case Plugin::Scalars: return "scalars";
    case Plugin::Histograms: return "histograms";
    case Plugin::Images: return "images";
    case Plugin::Text: return "text";
    case Plugin::Audio: return "audio";
  }
  return "?";
}

const char* summary_kind(Plugin p) {
  switch (p) {
    case Plugin::Scalars: return "scalar";
    case Plugin::Histograms: return "histogram";
    case Plugin::Images: return "image";
    case Plugin::Text: return "text";
    case Plugin::Audio: return "audio";
  }
  return "summary";
}

std::string encode_file_version_event(double wall_time) {
  static constexpr std::string_view kVersion = "brain.Event:2";
  tfpb_Event event = tfpb_Event_init_zero;
  event.wall_time = wall_time;
  event.which_what = tfpb_Event_file_version_tag;
  set_bytes(event.what.file_version, &kVersion);
  return encode_event(event);
}

std::string encode_graph_event(double wall_time, int64_t step, std::string_view graph_def) {
  tfpb_Event event = tfpb_Event_init_zero;
  event.wall_time = wall_time;
  event.step = step;
  event.which_what = tfpb_Event_graph_def_tag;
  // An empty graph still selects the oneof member.
  event.what.graph_def.funcs.encode = encode_bytes;
  event.what.graph_def.arg = &graph_def;
  return encode_event(event);
}

std::string encode_summary_event(double wall_time, int64_t step, const Value& value, bool with_metadata) {
  const std::string_view tag = value.tag, content = value.tensor.content, name = plugin_name(value.plugin),
                         plugin_data = plugin_content(value.plugin);
  tfpb_Summary_Value v = tfpb_Summary_Value_init_zero;
  set_bytes(v.tag, &tag);
  if (with_metadata) {
    v.has_metadata = true;
    v.metadata.has_plugin_data = true;
    set_bytes(v.metadata.plugin_data.plugin_name, &name);
    set_bytes(v.metadata.plugin_data.content, &plugin_data);
    v.metadata.data_class = data_class(value.plugin);
  }
  v.which_value = tfpb_Summary_Value_tensor_tag;
  tfpb_TensorProto& t = v.value.tensor;
  t.dtype = static_cast<tfpb_DataType>(value.tensor.dtype);
  t.has_tensor_shape = true;
  if (!value.tensor.shape.empty()) {
    t.tensor_shape.dim.funcs.encode = encode_dims;
    t.tensor_shape.dim.arg = const_cast<std::vector<int64_t>*>(&value.tensor.shape);
  }
  if (value.tensor.dtype == DType::String) {
    t.string_val.funcs.encode = encode_strings;
    t.string_val.arg = const_cast<std::vector<std::string>*>(&value.tensor.strings);
  } else {
    set_bytes(t.tensor_content, &content);
  }
  // Event{wall_time = 1, step = 2, summary = 5 {value = 1 {v}}}. nanopb sizes every submessage by
  // encoding it, so each level of nesting doubles the work below it: the Value is encoded once
  // here and the two outer levels are framed by hand (the bytes are those pb_encode would write).
  constexpr size_t kMaxHeader = 1 + 8 + 1 + 10 + 1 + 10 + 1 + 10;
  std::string out = encode_message(tfpb_Summary_Value_fields, &v, kMaxHeader, "a Summary.Value");
  const uint64_t value_size = out.size() - kMaxHeader;
  uint8_t header[kMaxHeader];
  size_t n = 0;
  header[n++] = 0x09;  // field 1, 64-bit
  std::memcpy(header + n, &wall_time, 8);  // little-endian hosts
  n += 8;
  if (step != 0) {  // proto3 leaves out zero
    header[n++] = 0x10;  // field 2, varint
    n += put_varint(header + n, static_cast<uint64_t>(step));
  }
  uint8_t value_key[11];
  size_t value_key_size = 1;
  value_key[0] = 0x0a;  // Summary field 1, length-delimited
  value_key_size += put_varint(value_key + 1, value_size);
  header[n++] = 0x2a;  // Event field 5, length-delimited
  n += put_varint(header + n, value_key_size + value_size);
  std::memcpy(header + n, value_key, value_key_size);
  n += value_key_size;
  out.replace(0, kMaxHeader, reinterpret_cast<const char*>(header), n);
  return out;
}

Value scalar_value(std::string tag, float value) {
  Value v;
  v.tag = std::move(tag);
  v.plugin = Plugin::Scalars;
  v.tensor.dtype = DType::Float32;
  v.tensor.content.assign(reinterpret_cast<const char*>(&value), sizeof value);
  return v;
}

}  // namespace cairn::summary
