// Fuzz target for loading exported compiled functions (cairn_function_load, issue 18): any bytes
// must load or give a status with a documented code (NOT_FOUND, DATA_LOSS, INVALID_ARGUMENT,
// RESOURCE_EXHAUSTED) whose message names the function or the file; never a crash, a hang, an
// INTERNAL status or a leak. A loaded function is then inspected trace by trace (outputs, dump,
// signature, GraphDef text) and called once with zeros of its first signature.
//
// The first byte picks the layout of the rest:
//  - even: the raw bytes of a file (the container parser, its checksums, the index);
//  - odd: a list of entries sealed into a valid container by the checkpoint writer, so that
//    mutations get past the checksums to the function graph (schemas/function.fbs) and the value
//    entries. Each entry: u8 key length, the key, u8 kind (0: string scalar; else a dtype), u8
//    rank, rank x u8 dims, u16 little-endian byte count, the bytes (a tensor entry whose count does
//    not match its shape is passed over). The metadata tag of an exported function is added.
// tests/fuzz/make_function_load_corpus.cc writes the seeds in both layouts.
#define CAIRN_EXPERIMENTAL 1
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "runtime/checkpoint/writer.h"
#include "runtime/core/error.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/graph/export.h"

namespace {

cairn_context* context() {
  static cairn_context* ctx = [] {
    cairn_context_options o = CAIRN_CONTEXT_OPTIONS_INIT;
    o.num_threads = 1;
    cairn_context* c = nullptr;
    cairn_status* st = cairn_context_create(&o, &c);
    if (st) abort();
    return c;
  }();
  return ctx;
}

const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = getenv("TEST_TMPDIR");
    if (!dir) dir = getenv("TMPDIR");
    if (!dir) dir = "/tmp";
    return std::string(dir) + "/cairn-function-load-fuzz-" + std::to_string(getpid()) + ".cairnfn";
  }();
  return path;
}

// A failure must be a documented code, and say what failed.
void check_status(cairn_status* st, const char* fn) {
  if (!st) return;
  cairn_code code = cairn_status_code(st);
  const char* msg = cairn_status_message(st);
  bool documented = code == CAIRN_NOT_FOUND || code == CAIRN_DATA_LOSS || code == CAIRN_INVALID_ARGUMENT ||
                    code == CAIRN_RESOURCE_EXHAUSTED || code == CAIRN_OUT_OF_RANGE || code == CAIRN_UNIMPLEMENTED ||
                    code == CAIRN_FAILED_PRECONDITION;
  if (!documented || msg[0] == 0) {
    fprintf(stderr, "%s: undocumented status %d: %s\n", fn, static_cast<int>(code), msg);
    abort();
  }
  cairn_status_free(st);
}

size_t dtype_size(int d) {
  switch (d) {
    case CAIRN_FLOAT32: case CAIRN_INT32: return 4;
    case CAIRN_FLOAT64: case CAIRN_INT64: case CAIRN_COMPLEX64: return 8;
    case CAIRN_UINT8: case CAIRN_INT8: case CAIRN_BOOL: return 1;
    case CAIRN_INT16: case CAIRN_BFLOAT16: case CAIRN_FLOAT16: return 2;
    default: return 0;
  }
}

// The odd layout: entries sealed by the writer. Returns false when nothing could be written.
bool write_sealed(const uint8_t* p, size_t n, const std::string& path) {
  using namespace cairn;
  std::vector<ckpt::SaveEntry> entries;
  static cairn::Device* cpu = new cairn::CpuDevice(cairn::default_allocator());
  size_t i = 0;
  while (i < n && entries.size() < 64) {
    size_t klen = p[i++];
    if (i + klen + 2 > n) break;
    std::string key(reinterpret_cast<const char*>(p + i), klen);
    i += klen;
    int kind = p[i++];
    size_t rank = p[i++] % 9;
    if (rank > 8) rank = 8;
    if (i + rank + 2 > n) break;
    int64_t dims[8];
    int64_t count = 1;
    for (size_t d = 0; d < rank; ++d) {
      dims[d] = p[i];
      count *= p[i++];
    }
    size_t len = p[i] | (size_t{p[i + 1]} << 8);
    i += 2;
    if (i + len > n) len = n - i;
    std::string bytes(reinterpret_cast<const char*>(p + i), len);
    i += len;
    if (kind == 0) {
      entries.push_back(ckpt::SaveEntry::string_scalar(key, bytes));
      continue;
    }
    size_t es = dtype_size(kind);
    if (es == 0 || static_cast<size_t>(count) * es != len) continue;
    Tensor t = Tensor::allocate(*cpu, static_cast<DType>(kind), Shape::from(dims, rank, "entry"));
    if (len) std::memcpy(t.raw_mutable_data(), bytes.data(), len);
    entries.emplace_back(key, std::move(t));
  }
  ckpt::Metadata meta;
  meta.user[graph::kFunctionFileTag] = graph::kFunctionFileKind;
  ckpt::WriteOptions wo;
  wo.fsync = false;
  try {
    ckpt::write_checkpoint(path, ckpt::ObjectGraph{}, entries, meta, wo);
  } catch (const Error&) {
    return false;  // duplicate or reserved keys: not an input of cairn_function_load
  }
  return true;
}

// A call's status (which may be the ops' own errors at replay) is fine unless it is INTERNAL.
// Returns its message and frees it.
std::string call_message(cairn_status* st) {
  std::string msg = cairn_status_message(st);
  if (cairn_status_code(st) == CAIRN_INTERNAL) {
    fprintf(stderr, "cairn_function_call: INTERNAL: %s\n", msg.c_str());
    abort();
  }
  cairn_status_free(st);
  return msg;
}

// Calls a loaded function once with zeros of its first stored signature, which the NOT_FOUND
// status of a call without inputs lists ("...; it has: (float32[2,3], int32[]); (...)").
void call_once(cairn_function* fn) {
  cairn_tensor* none[1] = {nullptr};
  cairn_status* st = cairn_function_call(fn, nullptr, 0, none, 1);
  if (!st) {
    cairn_tensor_free(none[0]);
    return;
  }
  std::string msg = call_message(st);
  size_t at = msg.find("it has: (");
  if (at == std::string::npos) return;
  std::string s = msg.substr(at + 9, msg.find(')', at) - at - 9);
  std::vector<cairn_tensor*> inputs;
  static const struct { const char* name; cairn_dtype dtype; } kNames[] = {
      {"float32", CAIRN_FLOAT32}, {"float64", CAIRN_FLOAT64}, {"int32", CAIRN_INT32}, {"int64", CAIRN_INT64},
      {"uint8", CAIRN_UINT8},     {"int16", CAIRN_INT16},     {"int8", CAIRN_INT8},   {"bool", CAIRN_BOOL},
      {"bfloat16", CAIRN_BFLOAT16}, {"float16", CAIRN_FLOAT16}, {"complex64", CAIRN_COMPLEX64}};
  size_t pos = 0;
  bool ok = true;
  while (ok && pos < s.size()) {
    size_t br = s.find('[', pos), end = s.find(']', pos);
    if (br == std::string::npos || end == std::string::npos || end < br) break;
    std::string name = s.substr(pos, br - pos);
    while (!name.empty() && (name[0] == ' ' || name[0] == ',')) name.erase(0, 1);
    cairn_dtype dt = CAIRN_INVALID_DTYPE;
    for (const auto& k : kNames)
      if (name == k.name) dt = k.dtype;
    std::vector<int64_t> dims;
    int64_t count = 1;
    std::string d = s.substr(br + 1, end - br - 1);
    for (size_t q = 0; q < d.size();) {
      size_t c = d.find(',', q);
      int64_t v = atoll(d.substr(q, c == std::string::npos ? std::string::npos : c - q).c_str());
      if (v < 0) v = 1;  // a -1 dim: any size
      if (v > 64) ok = false;
      dims.push_back(v);
      count *= v;
      if (count > 4096) ok = false;
      if (c == std::string::npos) break;
      q = c + 1;
    }
    if (dt == CAIRN_INVALID_DTYPE || dims.size() > 8) ok = false;
    if (!ok) break;
    std::vector<uint8_t> zeros(static_cast<size_t>(count) * cairn_dtype_size(dt));
    cairn_tensor* t = nullptr;
    st = cairn_tensor_create(context(), dt, dims.data(), dims.size(), zeros.data(), zeros.size(), &t);
    if (st) {
      cairn_status_free(st);
      ok = false;
      break;
    }
    inputs.push_back(t);
    pos = end + 1;
  }
  // The output count is not in the message: try 1 to 4 (a wrong count is INVALID_ARGUMENT).
  for (size_t n_out = 1; ok && n_out <= 4; ++n_out) {
    std::vector<cairn_tensor*> outs(n_out, nullptr);
    st = cairn_function_call(fn, inputs.data(), inputs.size(), outs.data(), n_out);
    static const bool verbose = getenv("FUNCTION_LOAD_FUZZ_VERBOSE") != nullptr;
    if (verbose) fprintf(stderr, "  call (%zu inputs, %zu outputs): %s\n", inputs.size(), n_out, st ? cairn_status_message(st) : "ok");
    if (!st) {
      for (cairn_tensor* t : outs) cairn_tensor_free(t);
      break;
    }
    std::string m = call_message(st);
    if (m.find("output(s), not") == std::string::npos) break;
  }
  for (cairn_tensor* t : inputs) cairn_tensor_free(t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string& path = scratch_path();
  if (data[0] & 1) {
    if (!write_sealed(data + 1, size - 1, path)) return 0;
  } else {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  cairn_function* fn = nullptr;
  cairn_status* st = cairn_function_load(context(), path.c_str(), &fn);
  static const bool verbose = getenv("FUNCTION_LOAD_FUZZ_VERBOSE") != nullptr;  // what each input reached
  if (verbose) fprintf(stderr, "load (%zu bytes, layout %d): %s\n", size, data[0] & 1, st ? cairn_status_message(st) : "loaded");
  if (st) {
    if (fn) {
      fprintf(stderr, "cairn_function_load failed but wrote its out-parameter\n");
      abort();
    }
    check_status(st, "cairn_function_load");
    unlink(path.c_str());
    return 0;
  }
  call_once(fn);
  size_t traces = cairn_function_num_traces(fn);
  for (size_t i = 0; i <= traces && i < 8; ++i) {  // one past the end: OUT_OF_RANGE
    size_t n = 0;
    check_status(cairn_function_num_outputs(fn, i, &n), "cairn_function_num_outputs");
    char* s = nullptr;
    st = cairn_function_dump(fn, i, &s);
    if (!st) cairn_free(s);
    check_status(st, "cairn_function_dump");
    s = nullptr;
    st = cairn_function_signature(fn, i, &s);
    if (!st) cairn_free(s);
    check_status(st, "cairn_function_signature");
    s = nullptr;
    st = cairn_function_graphdef(fn, i, &s);
    if (!st) cairn_free(s);
    check_status(st, "cairn_function_graphdef");
  }
  cairn_function_free(fn);
  unlink(path.c_str());
  return 0;
}
