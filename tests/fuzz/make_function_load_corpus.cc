// Writes the seed corpus of tests/fuzz/function_load_fuzzer.cc into the directory given:
//   bazel run //tests/fuzz:make_function_load_corpus -- "$PWD/tests/fuzz/corpus/function_load"
// Exported functions (cairn_function_export) of a few shapes: one trace, two traces, a -1
// signature, a captured variable and constant, ops with attributes. Each is written twice: as
// raw file bytes behind a 0 byte, and as the fuzzer's entry list (behind a 1 byte), read back
// with the checkpoint reader, so mutations also land behind the container's checksums.
#define CAIRN_EXPERIMENTAL 1
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/graph/export.h"

namespace {

void ok(cairn_status* st, const char* what) {
  if (!st) return;
  fprintf(stderr, "%s: %s\n", what, cairn_status_message(st));
  exit(1);
}

cairn_context* g_ctx;
cairn_object* g_var;

cairn_tensor* vec(std::vector<float> v, std::vector<int64_t> shape) {
  cairn_tensor* t = nullptr;
  ok(cairn_tensor_create(g_ctx, CAIRN_FLOAT32, shape.data(), shape.size(), v.data(), v.size() * 4, &t), "tensor");
  return t;
}

// x -> (x + 1) * x, and its negation: two outputs, an Add with a captured constant.
cairn_status* poly(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t n_out) {
  cairn_tensor* one = vec({1}, {});
  cairn_tensor* a = nullptr;
  cairn_tensor* ins[2] = {in[0], one};
  cairn_status* st = cairn_op_run(ctx, "AddV2", ins, 2, nullptr, 0, &a, 1);
  cairn_tensor_free(one);
  if (st) return st;
  cairn_tensor* ins2[2] = {a, in[0]};
  st = cairn_op_run(ctx, "Mul", ins2, 2, nullptr, 0, &out[0], 1);
  cairn_tensor_free(a);
  if (st || n_out < 2) return st;
  return cairn_op_run(ctx, "Neg", &out[0], 1, nullptr, 0, &out[1], 1);
}

// x @ w with a captured variable w[2,2], then Softmax.
cairn_status* dense(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_tensor* w = nullptr;
  cairn_status* st = cairn_variable_read(g_var, &w);
  if (st) return st;
  cairn_tensor* ins[2] = {in[0], w};
  cairn_attr ta = {"transpose_b", CAIRN_ATTR_BOOL, 1, 0, nullptr, 0, nullptr, CAIRN_INVALID_DTYPE, nullptr, 0};
  cairn_tensor* y = nullptr;
  st = cairn_op_run(ctx, "MatMul", ins, 2, &ta, 1, &y, 1);
  cairn_tensor_free(w);
  if (st) return st;
  st = cairn_op_run(ctx, "Softmax", &y, 1, nullptr, 0, &out[0], 1);
  cairn_tensor_free(y);
  return st;
}

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_seed(const std::string& dir, const std::string& name, const std::string& exported) {
  std::string raw = read_file(exported);
  std::ofstream(dir + "/raw_" + name, std::ios::binary) << std::string(1, '\0') << raw;
  // The entry list: every entry but the object graph, with the string or raw tensor bytes.
  cairn::ckpt::Reader r = cairn::ckpt::Reader::open(exported);
  std::string list(1, '\1');
  for (const auto& e : r.entries()) {
    if (e.key == cairn::ckpt::kObjectGraphKey) continue;
    std::string bytes;
    int kind = 0;
    if (e.dtype == cairn::DType::String) {
      bytes = r.load_string(e);
    } else {
      kind = static_cast<int>(e.dtype);
      // Raw payloads of small tensors (the writer stores them uncompressed by default).
      std::string all = read_file(exported);
      bytes = all.substr(e.offset, e.stored_size);
    }
    if (e.key.size() > 255 || e.shape.rank() > 8 || bytes.size() > 65535) continue;
    list += static_cast<char>(e.key.size());
    list += e.key;
    list += static_cast<char>(kind);
    list += static_cast<char>(kind ? e.shape.rank() : 0);
    for (int d = 0; kind && d < e.shape.rank(); ++d) list += static_cast<char>(e.shape[d] & 0xff);
    list += static_cast<char>(bytes.size() & 0xff);
    list += static_cast<char>(bytes.size() >> 8);
    list += bytes;
  }
  std::ofstream(dir + "/entries_" + name, std::ios::binary) << list;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_function_load_corpus DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::string tmp = dir + "/.tmp.cairnfn";
  ok(cairn_context_create(nullptr, &g_ctx), "context");
  cairn_tensor* w0 = vec({1, 2, 3, 4}, {2, 2});
  cairn_variable_options vo = CAIRN_VARIABLE_OPTIONS_INIT;
  vo.name = "w";
  ok(cairn_variable_create(g_ctx, w0, &vo, &g_var), "variable");
  cairn_tensor_free(w0);

  struct Case {
    const char* name;
    cairn_function_fn fn;
    size_t n_out;
    std::vector<std::vector<int64_t>> shapes;  // one call per shape
    bool any_batch;                             // input signature float32[-1, 2]
  } cases[] = {
      {"poly_one_trace", poly, 1, {{3}}, false},
      {"poly_two_traces", poly, 2, {{2}, {2, 2}}, false},
      {"dense_variable", dense, 1, {{1, 2}}, false},
      {"dense_any_batch", dense, 1, {{3, 2}}, true},
  };
  for (const Case& c : cases) {
    cairn_function_options fo = CAIRN_FUNCTION_OPTIONS_INIT;
    int64_t sig_shape[2] = {-1, 2};
    cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
    spec.dtype = CAIRN_FLOAT32;
    spec.shape = sig_shape;
    spec.rank = 2;
    if (c.any_batch) {
      fo.input_signature = &spec;
      fo.n_input_signature = 1;
    }
    cairn_function* f = nullptr;
    ok(cairn_function_create(g_ctx, c.name, c.fn, nullptr, &fo, &f), "function");
    for (const auto& shape : c.shapes) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      std::vector<float> v(n, 0.5f);
      cairn_tensor* x = vec(v, shape);
      cairn_tensor* outs[2] = {nullptr, nullptr};
      ok(cairn_function_call(f, &x, 1, outs, c.n_out), "call");
      for (cairn_tensor* o : outs) cairn_tensor_free(o);
      cairn_tensor_free(x);
    }
    ok(cairn_function_export(f, tmp.c_str()), "export");
    write_seed(dir, c.name, tmp);
    cairn_function_free(f);
  }
  remove(tmp.c_str());
  cairn_object_free(g_var);
  cairn_context_free(g_ctx);
  printf("wrote %zu seeds to %s\n", 2 * sizeof cases / sizeof cases[0], dir.c_str());
  return 0;
}
