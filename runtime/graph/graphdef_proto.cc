#include "runtime/graph/graphdef_proto.h"

#include <pb_encode.h>

#include <cstring>
#include <deque>
#include <memory>

#include "runtime/core/error.h"
#include "runtime/graph/graphdef_model.h"
#include "runtime/io/proto/graph.pb.h"

namespace cairn::graph {

namespace {

// Owns everything the nanopb structs point at until the GraphDef is encoded. The .proto files make
// every field a pointer (FT_POINTER), so a null pointer is an absent field and arrays point here.
class Arena {
 public:
  template <class T>
  T* one(T value = {}) {
    auto p = std::make_shared<T>(std::move(value));
    keep_.push_back(p);
    return p.get();
  }
  template <class T>
  T* array(size_t n) {
    if (n == 0) return nullptr;
    std::shared_ptr<T[]> p(new T[n]());
    keep_.push_back(p);
    return p.get();
  }
  char* str(const std::string& s) {
    char* p = array<char>(s.size() + 1);
    std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
  }
  pb_bytes_array_t* bytes(const std::string& s) {
    auto* p = reinterpret_cast<pb_bytes_array_t*>(array<uint8_t>(PB_BYTES_ARRAY_T_ALLOCSIZE(s.size())));
    p->size = static_cast<pb_size_t>(s.size());
    std::memcpy(p->bytes, s.data(), s.size());
    return p;
  }

 private:
  std::deque<std::shared_ptr<void>> keep_;
};

// TensorShapeProto.dim is a callback (tensor_shape.proto is shared and callback-typed): `arg`
// points at the dims.
bool encode_dims(pb_ostream_t* stream, const pb_field_t* field, void* const* arg) {
  for (int64_t size : *static_cast<const std::vector<int64_t>*>(*arg)) {
    tfpb_TensorShapeProto_Dim dim = tfpb_TensorShapeProto_Dim_init_zero;
    dim.size = size;
    if (!pb_encode_tag_for_field(stream, field) ||
        !pb_encode_submessage(stream, tfpb_TensorShapeProto_Dim_fields, &dim))
      return false;
  }
  return true;
}

void fill_shape(tfpb_TensorShapeProto& out, const std::vector<int64_t>& dims) {
  out = tfpb_TensorShapeProto_init_zero;
  out.dim.funcs.encode = encode_dims;
  out.dim.arg = const_cast<std::vector<int64_t>*>(&dims);
}

// A TensorProto with dtype (1) and tensor_shape (2) only: a graph shows constants, not their values.
std::string tensor_proto(DType dtype, const std::vector<int64_t>& dims) {
  tfpb_TensorShapeProto shape;
  fill_shape(shape, dims);
  size_t shape_size = 0;
  pb_get_encoded_size(&shape_size, tfpb_TensorShapeProto_fields, &shape);
  std::string out(shape_size + 24, '\0');
  pb_ostream_t s = pb_ostream_from_buffer(reinterpret_cast<pb_byte_t*>(out.data()), out.size());
  const bool ok = pb_encode_tag(&s, PB_WT_VARINT, 1) &&
                  pb_encode_varint(&s, static_cast<uint64_t>(gdef::tf_dtype_enum(dtype))) &&
                  pb_encode_tag(&s, PB_WT_STRING, 2) &&
                  pb_encode_submessage(&s, tfpb_TensorShapeProto_fields, &shape);
  if (!ok) raise(Code::Internal, "graphdef_proto: encoding a TensorProto: {}", PB_GET_ERROR(&s));
  out.resize(s.bytes_written);
  return out;
}

class Encoder {
 public:
  std::string run(const gdef::GraphDef& g) {
    tfpb_GraphDef out = tfpb_GraphDef_init_zero;
    out.node_count = nodes(g.nodes, &out.node);
    if (!g.library.empty()) {
      auto* lib = a_.one<tfpb_FunctionDefLibrary>();
      lib->function_count = static_cast<pb_size_t>(g.library.size());
      lib->function = a_.array<tfpb_FunctionDef>(g.library.size());
      for (size_t k = 0; k < g.library.size(); ++k) function(g.library[k], lib->function[k]);
      out.library = lib;
    }
    auto* versions = a_.one<tfpb_VersionDef>();
    versions->producer = a_.one<int32_t>(g.producer);
    out.versions = versions;

    size_t size = 0;
    if (!pb_get_encoded_size(&size, tfpb_GraphDef_fields, &out))
      raise(Code::Internal, "graphdef_proto: sizing the GraphDef failed");
    std::string bytes(size, '\0');
    pb_ostream_t s = pb_ostream_from_buffer(reinterpret_cast<pb_byte_t*>(bytes.data()), bytes.size());
    if (!pb_encode(&s, tfpb_GraphDef_fields, &out))
      raise(Code::Internal, "graphdef_proto: encoding the GraphDef: {}", PB_GET_ERROR(&s));
    bytes.resize(s.bytes_written);
    return bytes;
  }

 private:
  pb_size_t nodes(const std::vector<gdef::NodeDef>& in, tfpb_NodeDef** out) {
    *out = a_.array<tfpb_NodeDef>(in.size());
    for (size_t k = 0; k < in.size(); ++k) node(in[k], (*out)[k]);
    return static_cast<pb_size_t>(in.size());
  }

  void node(const gdef::NodeDef& in, tfpb_NodeDef& out) {
    out.name = a_.str(in.name);
    out.op = a_.str(in.op);
    out.input_count = static_cast<pb_size_t>(in.inputs.size());
    out.input = a_.array<char*>(in.inputs.size());
    for (size_t k = 0; k < in.inputs.size(); ++k) out.input[k] = a_.str(in.inputs[k]);
    out.attr_count = static_cast<pb_size_t>(in.attrs.size());
    out.attr = a_.array<tfpb_NodeDef_AttrEntry>(in.attrs.size());
    for (size_t k = 0; k < in.attrs.size(); ++k) {
      out.attr[k].key = a_.str(in.attrs[k].first);
      out.attr[k].value = value(in.attrs[k].second);
    }
  }

  tfpb_AttrValue* value(const gdef::Value& v) {
    using K = gdef::Value::Kind;
    auto* out = a_.one<tfpb_AttrValue>();
    auto set = [&](pb_size_t tag) { out->which_value = tag; };
    auto list = [&] {
      set(tfpb_AttrValue_list_tag);
      return out->value.list = a_.one<tfpb_AttrValue_ListValue>();
    };
    switch (v.kind) {
      case K::Int: set(tfpb_AttrValue_i_tag); out->value.i = a_.one<int64_t>(v.i); break;
      case K::Bool: set(tfpb_AttrValue_b_tag); out->value.b = a_.one<bool>(v.i != 0); break;
      case K::Float: set(tfpb_AttrValue_f_tag); out->value.f = a_.one<float>(static_cast<float>(v.f)); break;
      case K::String: set(tfpb_AttrValue_s_tag); out->value.s = a_.bytes(v.s); break;
      case K::Type:
        set(tfpb_AttrValue_type_tag);
        out->value.type = a_.one<int32_t>(gdef::tf_dtype_enum(v.type));
        break;
      case K::Shape:
        set(tfpb_AttrValue_shape_tag);
        fill_shape(*(out->value.shape = a_.one<tfpb_TensorShapeProto>()), v.dims);
        break;
      case K::Tensor:
        set(tfpb_AttrValue_tensor_tag);
        out->value.tensor = a_.bytes(tensor_proto(v.type, v.dims));
        break;
      case K::Func: {
        set(tfpb_AttrValue_func_tag);
        auto* f = out->value.func = a_.one<tfpb_NameAttrList>();
        f->name = a_.str(v.s);
        break;
      }
      case K::Ints: {
        auto* l = list();
        l->i_count = static_cast<pb_size_t>(v.ints.size());
        l->i = a_.array<int64_t>(v.ints.size());
        std::copy(v.ints.begin(), v.ints.end(), l->i);
        break;
      }
      case K::Floats: {
        auto* l = list();
        l->f_count = static_cast<pb_size_t>(v.floats.size());
        l->f = a_.array<float>(v.floats.size());
        for (size_t k = 0; k < v.floats.size(); ++k) l->f[k] = static_cast<float>(v.floats[k]);
        break;
      }
      case K::Types: {
        auto* l = list();
        l->type_count = static_cast<pb_size_t>(v.types.size());
        l->type = a_.array<int32_t>(v.types.size());
        for (size_t k = 0; k < v.types.size(); ++k) l->type[k] = gdef::tf_dtype_enum(v.types[k]);
        break;
      }
      case K::Shapes: {
        auto* l = list();
        l->shape_count = static_cast<pb_size_t>(v.shapes.size());
        l->shape = a_.array<tfpb_TensorShapeProto>(v.shapes.size());
        for (size_t k = 0; k < v.shapes.size(); ++k) fill_shape(l->shape[k], v.shapes[k]);
        break;
      }
    }
    return out;
  }

  pb_size_t args(const std::vector<gdef::Arg>& in, tfpb_OpDef_ArgDef** out) {
    *out = a_.array<tfpb_OpDef_ArgDef>(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      (*out)[k].name = a_.str(in[k].name);
      (*out)[k].type = a_.one<int32_t>(gdef::tf_dtype_enum(in[k].type));
    }
    return static_cast<pb_size_t>(in.size());
  }

  void function(const gdef::FunctionDef& in, tfpb_FunctionDef& out) {
    auto* sig = out.signature = a_.one<tfpb_OpDef>();
    sig->name = a_.str(in.name);
    sig->input_arg_count = args(in.inputs, &sig->input_arg);
    sig->output_arg_count = args(in.outputs, &sig->output_arg);
    out.node_def_count = nodes(in.nodes, &out.node_def);
    out.ret_count = static_cast<pb_size_t>(in.ret.size());
    out.ret = a_.array<tfpb_FunctionDef_RetEntry>(in.ret.size());
    for (size_t k = 0; k < in.ret.size(); ++k) {
      out.ret[k].key = a_.str(in.ret[k].first);
      out.ret[k].value = a_.str(in.ret[k].second);
    }
  }

  Arena a_;
};

}  // namespace

std::string graphdef_proto(const Graph& graph) { return Encoder().run(gdef::build_graphdef(graph)); }

}  // namespace cairn::graph
