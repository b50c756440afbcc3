// The C API structured fuzzer (issue 18): every options struct and the constructors that take
// one, plus the checkpoint, reader and weights calls, with hostile struct_size values, hostile
// field values (negative, huge, NaN, out-of-range enums, NULL / empty / non-UTF-8 / format-string
// strings) and hostile paths and keys. See tests/fuzz/README.md ("C API fuzzer").
//
// Checks, for every call: no crash, sanitizer report, hang or leak; a failure is a status whose
// code is one the function documents (never INTERNAL, never a code outside the target's set),
// whose message names the C function, and which leaves the out-parameter NULL; a success gives a
// non-NULL handle, which is freed. cairn_X_init with a bad struct_size writes nothing.
//
// Each target runs in its own child process (--jobs at a time). The parent watches a shared
// progress counter: a crash is charged to the target and trial that caused it, a trial without
// progress for --trial-timeout seconds is a hang, and the target resumes at the next trial in a
// fresh child. Every trial is generated from (seed, target, trial) alone, so a problem prints a
// one-line repro: capi_fuzzer --seed=S --target=T --trial=K.
#define CAIRN_EXPERIMENTAL 1
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cairn/cairn.h"

// LeakSanitizer's recoverable check, present only in sanitizer builds.
extern "C" int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

namespace {

// ---- options ----

struct Options {
  uint64_t seed = 1;
  int trials = 200;
  std::string only;           // --target: one target or a glob
  int trial = -1;             // --trial: replay one trial in this process
  std::string known_path = "tests/fuzz/capi_fuzzer_known.txt";
  int jobs = 2;
  double trial_timeout = 10;
  double target_seconds = 30;
  bool list = false;
  bool self_test = false;
  bool show_known = false;
};
Options g_opt;

// ---- deterministic randomness: (seed, target, trial) -> stream ----

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed ? seed : 0x9e3779b97f4a7c15ull) {}
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  bool coin(int one_in = 2) { return below(one_in) == 0; }
  template <class T>
  T pick(std::initializer_list<T> xs) {
    return *(xs.begin() + below(xs.size()));
  }
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}
uint64_t hash_str(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// ---- the trial's description (for the repro line) and its checks ----

struct Trial {
  std::string target;
  int index = 0;
  std::string desc;      // what was passed
  std::vector<std::string> problems;
  void note(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!desc.empty()) desc += " ";
    desc += buf;
    if (echo) fprintf(stderr, "  trial: %s\n", buf);  // a replay shows each step before a crash
    if (live) snprintf(live, kLiveSize, "%s", desc.c_str());  // the parent's copy, for crashes and hangs
  }
  static bool echo;
  static constexpr size_t kLiveSize = 1024;
  static char* live;
};

bool Trial::echo = false;
char* Trial::live = nullptr;

std::string printable(const char* s) {
  if (!s) return "NULL";
  std::string out = "\"";
  size_t n = strlen(s);
  for (size_t i = 0; i < n && i < 24; ++i) {
    unsigned char c = s[i];
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char b[8];
      snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    }
  }
  if (n > 24) out += "...(" + std::to_string(n) + " bytes)";
  return out + "\"";
}

const char* code_name(cairn_code c) {
  static const char* names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                                "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                                "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"};
  return (c >= 0 && c <= 15) ? names[c] : "BAD_CODE";
}

// Code sets: the codes each function documents. RESOURCE_EXHAUSTED is allowed everywhere (the
// header: any function may return it when memory runs out).
enum : uint32_t {
  IA = 1u << CAIRN_INVALID_ARGUMENT,
  NF = 1u << CAIRN_NOT_FOUND,
  PD = 1u << CAIRN_PERMISSION_DENIED,
  RE = 1u << CAIRN_RESOURCE_EXHAUSTED,
  FP = 1u << CAIRN_FAILED_PRECONDITION,
  OR = 1u << CAIRN_OUT_OF_RANGE,
  UN = 1u << CAIRN_UNIMPLEMENTED,
  UA = 1u << CAIRN_UNAVAILABLE,
  DL = 1u << CAIRN_DATA_LOSS,
  AE = 1u << CAIRN_ALREADY_EXISTS,
  IO = NF | PD | RE | FP | AE | DL,  // the errors of reading or writing a file
};

std::string codes_text(uint32_t set) {
  std::string out;
  for (int c = 0; c <= 15; ++c)
    if (set & (1u << c)) out += std::string(out.empty() ? "" : "|") + code_name(static_cast<cairn_code>(c));
  return out;
}

// Checks one call's status: a documented code, and a message containing `named` (the C function,
// or what the header says such a call's messages name). `out_written_on_error`: whether the
// out-parameter was written on failure. Returns true on success.
bool check_named(Trial& t, const char* fn, const char* named, cairn_status* st, uint32_t allowed,
                 bool out_written_on_error = false) {
  if (!st) return true;
  cairn_code code = cairn_status_code(st);
  std::string msg = cairn_status_message(st);
  std::string outcome = std::string(fn) + " => " + code_name(code) + ": " + msg.substr(0, 300);
  allowed |= RE;
  if (code == CAIRN_OK || !(allowed & (1u << code)))
    t.problems.push_back("code: " + outcome + "   (documented: " + codes_text(allowed) + ")");
  else if (msg.find(named) == std::string::npos && !(code == CAIRN_RESOURCE_EXHAUSTED && msg == "out of memory"))
    t.problems.push_back("unnamed: " + outcome);
  if (out_written_on_error) t.problems.push_back("out: " + outcome + " but the out-parameter was written");
  cairn_status_free(st);
  return false;
}

bool check(Trial& t, const char* fn, cairn_status* st, uint32_t allowed, bool out_written_on_error = false) {
  return check_named(t, fn, fn, st, allowed, out_written_on_error);
}

// ---- hostile values ----

std::string g_long(5000, 'a');
const char* hostile_string(Rng& r) {
  static const char* xs[] = {
      nullptr, "", "x", "\xff\xfe\x80", "\xc3\x28", "%s%s%s%n", "{}", "{0}{1}{:>99999999}", "a/b", "a:b", "..",
      "/", "\n", " ", "name", "relu", "SAME", "VALID", "glorot_uniform", "zeros", "softmax", "ckpt", nullptr};
  uint64_t i = r.below(sizeof xs / sizeof xs[0] + 1);
  if (i == sizeof xs / sizeof xs[0]) return g_long.c_str();
  return xs[i];
}
int64_t hostile_i64(Rng& r) {
  return r.pick<int64_t>({0, 1, 2, 3, -1, -2, 7, 1000, INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN, (int64_t)1 << 40,
                          (int64_t)1 << 62, INT64_MAX, INT64_MIN, INT64_MIN + 1});
}
int32_t hostile_i32(Rng& r) { return r.pick<int32_t>({0, 1, 2, -1, -2, 7, 1000, 99, INT32_MAX, INT32_MIN, 65536}); }
uint64_t hostile_u64(Rng& r) {
  return r.pick<uint64_t>({0, 1, 2, 7, 4096, 1u << 20, (uint64_t)1 << 40, UINT64_MAX, UINT64_MAX / 2 + 1, 0x7fffffff});
}
double hostile_f64(Rng& r) {
  return r.pick<double>({0.0, -0.0, 1.0, -1.0, 0.5, 0.999999, 1e-300, 4.9e-324, 1e308, -1e308,
                         std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(), 2.0,
                         0.01, 1e-7, 0.9});
}
// Enum fields get values outside the enum but inside int32's non-negative half: the header's enums
// end with a 0x7fffffff sentinel, so a negative value is outside the C++ enum's range, and loading
// one is undefined behaviour (UBSan stops there) before the library could refuse it.
int32_t hostile_enum(Rng& r) { return r.pick<int32_t>({4, 5, 8, 11, 13, 20, 35, 99, 1000, 65536, INT32_MAX}); }
int32_t hostile_bool(Rng& r) { return r.pick<int32_t>({0, 1, 0, 1, 2, -1, INT32_MAX, INT32_MIN}); }

// A hostile struct_size for a struct of `size` bytes (the right one half of the time).
uint32_t hostile_size(Rng& r, uint32_t size) {
  if (r.coin()) return size;
  return r.pick<uint32_t>({0, 1, 3, 4, size - 1, size + 1, size + 8, size * 2, 0x80000000u, UINT32_MAX, 8, 16});
}


// ---- the world each child builds once: a context, scratch files ----

struct World {
  cairn_context* ctx = nullptr;
  std::string dir;                  // scratch directory
  std::vector<std::string> read_paths;
  std::string ckpt_path;            // a valid Cairn checkpoint of {"m": module with "v"}
  std::string weights_path;         // a safetensors file of the module's weights
  std::string tf_prefix;            // a TF bundle written by cairn_checkpoint_export
  std::string record_path;          // a TFRecord file
  std::string function_path;        // an exported function
};
World g_w;

void die(const char* what, cairn_status* st) {
  fprintf(stderr, "capi_fuzzer: setup: %s: %s\n", what, cairn_status_message(st));
  _exit(2);
}
#define SETUP(call)                \
  do {                             \
    cairn_status* st_ = (call);    \
    if (st_) die(#call, st_);      \
  } while (0)

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}
std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

cairn_object* make_module(cairn_context* ctx, const char* name) {
  cairn_object* m = nullptr;
  SETUP(cairn_module_create(ctx, name, &m));
  float v[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  cairn_tensor* t = nullptr;
  SETUP(cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &t));
  cairn_variable_options vo = CAIRN_VARIABLE_OPTIONS_INIT;
  vo.name = "v";
  vo.scope = m;
  cairn_object* var = nullptr;
  SETUP(cairn_variable_create(ctx, t, &vo, &var));
  SETUP(cairn_object_set(m, "v", var));
  cairn_object_free(var);
  cairn_tensor_free(t);
  return m;
}

cairn_status* identity_fn(void*, cairn_context*, cairn_tensor* const* inputs, size_t n_inputs, cairn_tensor** outputs,
                          size_t n_outputs) {
  for (size_t i = 0; i < n_outputs; ++i) {
    if (i >= n_inputs) return cairn_status_create(CAIRN_INVALID_ARGUMENT, "identity_fn: too few inputs");
    cairn_status* st = cairn_tensor_share(inputs[i], &outputs[i]);
    if (st) return st;
  }
  return nullptr;
}

void build_world() {
  char tmpl[] = "/tmp/cairn-capi-fuzz-XXXXXX";
  const char* base = getenv("CAPI_FUZZ_SCRATCH");
  std::string t = base ? std::string(base) + "/XXXXXX" : tmpl;
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back(0);
  if (!mkdtemp(buf.data())) {
    perror("mkdtemp");
    _exit(2);
  }
  g_w.dir = buf.data();
  cairn_context_options co = CAIRN_CONTEXT_OPTIONS_INIT;
  co.num_threads = 1;
  SETUP(cairn_context_create(&co, &g_w.ctx));
  cairn_object* m = make_module(g_w.ctx, "m");
  const char* names[1] = {"m"};
  cairn_checkpoint* ck = nullptr;
  SETUP(cairn_checkpoint_create(g_w.ctx, names, &m, 1, &ck));
  g_w.ckpt_path = g_w.dir + "/valid.ckpt";
  SETUP(cairn_checkpoint_write(ck, g_w.ckpt_path.c_str()));
  g_w.tf_prefix = g_w.dir + "/tf/ckpt-1";
  mkdir((g_w.dir + "/tf").c_str(), 0755);
  SETUP(cairn_checkpoint_export(ck, g_w.tf_prefix.c_str(), CAIRN_WEIGHTS_TF, nullptr));
  g_w.weights_path = g_w.dir + "/w.safetensors";
  SETUP(cairn_object_save_weights(m, g_w.weights_path.c_str(), CAIRN_WEIGHTS_SAFETENSORS, nullptr));
  cairn_checkpoint_free(ck);
  cairn_object_free(m);
  // A record file.
  g_w.record_path = g_w.dir + "/r.tfrecord";
  cairn_record_writer* w = nullptr;
  SETUP(cairn_record_writer_open(g_w.record_path.c_str(), nullptr, &w));
  SETUP(cairn_record_writer_write(w, "abc", 3));
  SETUP(cairn_record_writer_close(w));
  cairn_record_writer_free(w);
  // An exported function (identity over float32[2]).
  cairn_function* f = nullptr;
  SETUP(cairn_function_create(g_w.ctx, "ident", identity_fn, nullptr, nullptr, &f));
  float x[2] = {1, 2};
  int64_t shape[1] = {2};
  cairn_tensor* in = nullptr;
  SETUP(cairn_tensor_create(g_w.ctx, CAIRN_FLOAT32, shape, 1, x, sizeof x, &in));
  cairn_tensor* res = nullptr;
  SETUP(cairn_function_call(f, &in, 1, &res, 1));
  g_w.function_path = g_w.dir + "/f.cairnfn";
  SETUP(cairn_function_export(f, g_w.function_path.c_str()));
  cairn_tensor_free(res);
  cairn_tensor_free(in);
  cairn_function_free(f);
  // Damaged and odd files.
  std::string ckb = read_file(g_w.ckpt_path);
  write_file(g_w.dir + "/truncated.ckpt", ckb.substr(0, ckb.size() / 2));
  std::string flipped = ckb;
  if (flipped.size() > 40) flipped[flipped.size() / 3] ^= 0x55;
  write_file(g_w.dir + "/flipped.ckpt", flipped);
  write_file(g_w.dir + "/empty", "");
  write_file(g_w.dir + "/garbage", std::string("\x00\x01garbage\xff\xfe", 12) + std::string(300, 'z'));
  write_file(g_w.dir + "/bad.safetensors", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10));
  write_file(g_w.dir + "/huge_header.safetensors", std::string("\x10\0\0\0\0\0\0\0{\"a\":{\"dtype\":\"F32\"}}", 28));
  write_file(g_w.dir + "/bad.index", std::string(64, '\0'));
  std::string fn = read_file(g_w.function_path);
  write_file(g_w.dir + "/truncated.cairnfn", fn.substr(0, fn.size() * 2 / 3));
  mkdir((g_w.dir + "/subdir").c_str(), 0755);
  write_file(g_w.dir + "/subdir/checkpoint", "model_checkpoint_path: \"../../../../etc/passwd\"\n");
  mkdir((g_w.dir + "/statedir").c_str(), 0755);
  write_file(g_w.dir + "/statedir/checkpoint", "model_checkpoint_path: \"" + g_w.tf_prefix + "\"\n");
  g_w.read_paths = {g_w.ckpt_path,
                    g_w.tf_prefix,
                    g_w.tf_prefix + ".index",
                    g_w.dir + "/tf",
                    g_w.weights_path,
                    g_w.record_path,
                    g_w.function_path,
                    g_w.dir + "/truncated.ckpt",
                    g_w.dir + "/flipped.ckpt",
                    g_w.dir + "/empty",
                    g_w.dir + "/garbage",
                    g_w.dir + "/bad.safetensors",
                    g_w.dir + "/huge_header.safetensors",
                    g_w.dir + "/bad.index",
                    g_w.dir + "/truncated.cairnfn",
                    g_w.dir + "/subdir",
                    g_w.dir + "/statedir",
                    g_w.dir,
                    g_w.dir + "/nonexistent",
                    g_w.dir + "/garbage/below_a_file",
                    "/dev/null",
                    "/proc/self/status",
                    "",
                    "\xff\xfe",
                    g_w.dir + "/" + std::string(300, 'n')};
}

// A path for descriptions: the scratch directory shows as $SCRATCH, long names are shortened.
std::string scratch_relative(const std::string& p) {
  if (!g_w.dir.empty() && p.compare(0, g_w.dir.size(), g_w.dir) == 0) {
    std::string rest = p.substr(g_w.dir.size());
    return "$SCRATCH" + printable(rest.c_str());
  }
  return printable(p.c_str());
}

const char* read_path(Rng& r, Trial& t) {
  if (r.coin(12)) {
    t.note("path=NULL");
    return nullptr;
  }
  const std::string& p = g_w.read_paths[r.below(g_w.read_paths.size())];
  t.note("path=%s", scratch_relative(p).c_str());
  return p.c_str();
}

// A path to write to: always under the scratch directory (a write elsewhere could replace a real
// file), possibly hostile there.
std::string g_write_path;
const char* write_path(Rng& r, Trial& t) {
  if (r.coin(12)) {
    t.note("path=NULL");
    return nullptr;
  }
  static const char* tails[] = {"/out",         "/sub/dir/out", "/garbage/below_a_file", "/subdir", "/",
                                "/\xff\xfe",   "/out.",        "/.",                    "/..",     "/%s%n{}",
                                "/empty",      "/ out \n"};
  size_t i = r.below(sizeof tails / sizeof tails[0] + 2);
  if (i == sizeof tails / sizeof tails[0]) g_write_path = g_w.dir + "/" + std::string(300, 'w');
  else if (i == sizeof tails / sizeof tails[0] + 1) g_write_path = "";
  else g_write_path = g_w.dir + tails[i] + std::to_string(r.below(1000));
  if (i < sizeof tails / sizeof tails[0] && r.coin()) g_write_path = g_w.dir + tails[i];
  t.note("path=%s", scratch_relative(g_write_path).c_str());
  return g_write_path.c_str();
}

const char* note_str(Trial& t, const char* field, const char* v) {
  t.note("%s=%s", field, printable(v).c_str());
  return v;
}

// ---- targets ----

using TargetFn = void (*)(Rng&, Trial&);
struct Target {
  const char* name;
  TargetFn fn;
};

#define OPTS(T, INIT, var)                                \
  T var##_s = INIT;                                       \
  var##_s.struct_size = hostile_size(r, sizeof(T));       \
  t.note("struct_size=%u/%zu", var##_s.struct_size, sizeof(T)); \
  const T* var = r.coin(8) ? (t.note("opts=NULL"), nullptr) : &var##_s;

// cairn_X_init with hostile sizes: INVALID_ARGUMENT naming it and nothing written, or a fill.
template <class T>
void init_one(Rng& r, Trial& t, const char* fn, cairn_status* (*init)(T*, uint32_t)) {
  T s;
  memset(&s, 0xab, sizeof s);
  uint32_t size = hostile_size(r, sizeof(T));
  bool null = r.coin(10);
  t.note("%s(%s, %u)", fn, null ? "NULL" : "opts", size);
  cairn_status* st = init(null ? nullptr : &s, size);
  if (st) {
    bool untouched = true;
    for (size_t i = 0; i < sizeof s; ++i)
      if (reinterpret_cast<unsigned char*>(&s)[i] != 0xab) untouched = false;
    check(t, fn, st, IA, !untouched);
  } else if (null || s.struct_size != size) {
    t.problems.push_back(std::string("output: ") + fn + " succeeded but struct_size is " + std::to_string(s.struct_size));
  }
}

void t_inits(Rng& r, Trial& t) {
#define INIT_CASE(T)                                \
  case __COUNTER__ - base: init_one<T>(r, t, #T "_init", T##_init); return;
  constexpr int base = __COUNTER__ + 1;
  switch (r.below(24)) {
    INIT_CASE(cairn_context_options)
    INIT_CASE(cairn_variable_options)
    INIT_CASE(cairn_checkpoint_options)
    INIT_CASE(cairn_checkpoint_manager_options)
    INIT_CASE(cairn_tape_options)
    INIT_CASE(cairn_optimizer_options)
    INIT_CASE(cairn_exponential_decay_options)
    INIT_CASE(cairn_cosine_decay_options)
    INIT_CASE(cairn_dense_options)
    INIT_CASE(cairn_conv2d_options)
    INIT_CASE(cairn_pool2d_options)
    INIT_CASE(cairn_flatten_options)
    INIT_CASE(cairn_embedding_options)
    INIT_CASE(cairn_norm_options)
    INIT_CASE(cairn_dropout_options)
    INIT_CASE(cairn_activation_options)
    INIT_CASE(cairn_sequential_options)
    INIT_CASE(cairn_function_options)
    INIT_CASE(cairn_tensor_spec)
    INIT_CASE(cairn_vulkan_options)
    INIT_CASE(cairn_record_writer_options)
    INIT_CASE(cairn_record_reader_options)
    INIT_CASE(cairn_summary_writer_options)
    INIT_CASE(cairn_profiler_options)
  }
#undef INIT_CASE
}

void t_inits2(Rng& r, Trial& t) {
  switch (r.below(7)) {
    case 0: init_one<cairn_csv_options>(r, t, "cairn_csv_options_init", cairn_csv_options_init); return;
    case 1: init_one<cairn_tfrecord_options>(r, t, "cairn_tfrecord_options_init", cairn_tfrecord_options_init); return;
    case 2: init_one<cairn_map_options>(r, t, "cairn_map_options_init", cairn_map_options_init); return;
    case 3: init_one<cairn_filter_options>(r, t, "cairn_filter_options_init", cairn_filter_options_init); return;
    case 4: init_one<cairn_interleave_options>(r, t, "cairn_interleave_options_init", cairn_interleave_options_init); return;
    case 5: init_one<cairn_export_options>(r, t, "cairn_export_options_init", cairn_export_options_init); return;
    default: init_one<cairn_weights_options>(r, t, "cairn_weights_options_init", cairn_weights_options_init); return;
  }
}

void* test_allocate(void*, size_t size, size_t alignment) {
  if (size > (1u << 28)) return nullptr;
  void* p = nullptr;
  return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size ? size : 1) ? nullptr : p;
}
void test_deallocate(void*, void* p, size_t) { free(p); }

void t_context_create(Rng& r, Trial& t) {
  OPTS(cairn_context_options, CAIRN_CONTEXT_OPTIONS_INIT, o);
  // Vulkan device names are left out (opening lavapipe costs a second); unknown ones are in.
  const char* devs[] = {nullptr, "cpu", "", "cpu:0", "cpu:1", "vulkan:99", "vulkan:-1", "vulkan:x", "gpu",
                        "\xff\xfe", "cpu\n", "{}", "%n"};
  o_s.device = note_str(t, "device", devs[r.below(sizeof devs / sizeof devs[0])]);
  if (r.coin(3)) o_s.num_threads = r.pick<int32_t>({0, 1, 2, -1, -2, INT32_MIN, 100000, INT32_MAX});
  t.note("num_threads=%d", o_s.num_threads);
  if (r.coin(3)) o_s.seed = hostile_u64(r);
  if (r.coin(3)) o_s.log_level = static_cast<cairn_log_level>(hostile_enum(r));
  t.note("log_level=%d", (int)o_s.log_level);
  cairn_allocator alloc = {test_allocate, test_deallocate, nullptr, nullptr};
  switch (r.below(5)) {
    case 0: o_s.allocator = &alloc; t.note("allocator=full"); break;
    case 1: alloc.allocate = nullptr; o_s.allocator = &alloc; t.note("allocator=no-allocate"); break;
    case 2: alloc.deallocate = nullptr; o_s.allocator = &alloc; t.note("allocator=no-deallocate"); break;
    default: break;
  }
  cairn_context* c = nullptr;
  bool ok = check(t, "cairn_context_create", cairn_context_create(o, &c), IA | NF | UA, false);
  if (ok && !c) t.problems.push_back("output: cairn_context_create succeeded without a context");
  if (!ok && c) t.problems.push_back("out: cairn_context_create failed but wrote a context");
  cairn_context_free(c);
}

void t_context_vulkan(Rng& r, Trial& t) {
  // Only cases that must fail before a device opens: a bad struct_size, partial external handles,
  // or an unknown device index. (Full external handles would be the caller's pointers.)
  cairn_vulkan_options vk = CAIRN_VULKAN_OPTIONS_INIT;
  static int dummy[4];
  int which = static_cast<int>(r.below(4));
  vk.struct_size = which == 0 ? r.pick<uint32_t>({0, 1, sizeof vk - 1, sizeof vk + 1, UINT32_MAX}) : sizeof vk;
  if (which == 1) {
    unsigned mask = 1 + r.below(14);  // 1..14: never all four
    if (mask & 1) vk.instance = &dummy[0];
    if (mask & 2) vk.physical_device = &dummy[1];
    if (mask & 4) vk.device = &dummy[2];
    if (mask & 8) vk.queue = &dummy[3];
    t.note("external handles mask=%u", mask);
  }
  cairn_context_options co = CAIRN_CONTEXT_OPTIONS_INIT;
  co.device = which >= 2 ? r.pick<const char*>({"vulkan:99", "vulkan:-1", "cpu:3", "vulkan:18446744073709551617"})
                         : "vulkan:99";
  if (which == 3) vk.memory_limit = hostile_u64(r), vk.cpu_fallback = hostile_bool(r);
  t.note("struct_size=%u device=%s", vk.struct_size, co.device);
  cairn_context* c = nullptr;
  bool ok = check(t, "cairn_context_create_vulkan", cairn_context_create_vulkan(&co, &vk, &c), IA | NF | UA);
  if (ok) t.problems.push_back("output: cairn_context_create_vulkan succeeded on a device that cannot exist");
  cairn_context_free(c);
}

cairn_tensor* small_tensor(Rng& r, Trial& t) {
  float v[2] = {1, 2};
  int64_t shape[1] = {2};
  cairn_tensor* x = nullptr;
  bool scalar = r.coin(4);
  SETUP(cairn_tensor_create(g_w.ctx, CAIRN_FLOAT32, shape, scalar ? 0 : 1, v, scalar ? 4 : 8, &x));
  t.note("x=float32[%s]", scalar ? "" : "2");
  return x;
}

void t_variable_create(Rng& r, Trial& t) {
  OPTS(cairn_variable_options, CAIRN_VARIABLE_OPTIONS_INIT, o);
  o_s.name = note_str(t, "name", hostile_string(r));
  o_s.trainable = hostile_bool(r);
  t.note("trainable=%d", o_s.trainable);
  cairn_object* scope = nullptr;
  int sk = static_cast<int>(r.below(3));
  if (sk == 1) SETUP(cairn_module_create(g_w.ctx, "scope", &scope));
  if (sk == 2) SETUP(cairn_trackable_create(g_w.ctx, &scope));
  o_s.scope = scope;
  t.note("scope=%s", sk == 0 ? "NULL" : sk == 1 ? "module" : "trackable");
  cairn_tensor* x = r.coin(10) ? nullptr : small_tensor(r, t);
  cairn_object* v = nullptr;
  bool ok = check(t, "cairn_variable_create", cairn_variable_create(g_w.ctx, x, o, &v), IA);
  if (!ok && v) t.problems.push_back("out: cairn_variable_create failed but wrote a variable");
  cairn_object_free(v);
  cairn_object_free(scope);
  cairn_tensor_free(x);
}

cairn_checkpoint* make_checkpoint() {
  cairn_object* m = make_module(g_w.ctx, "m");
  const char* names[1] = {"m"};
  cairn_checkpoint* ck = nullptr;
  SETUP(cairn_checkpoint_create(g_w.ctx, names, &m, 1, &ck));
  cairn_object_free(m);
  return ck;
}

void t_checkpoint_options(Rng& r, Trial& t) {
  cairn_checkpoint* ck = make_checkpoint();
  OPTS(cairn_checkpoint_options, CAIRN_CHECKPOINT_OPTIONS_INIT, o);
  o_s.compress = hostile_bool(r);
  o_s.async = r.coin() ? 0 : hostile_bool(r);
  o_s.fsync = r.coin() ? 0 : hostile_bool(r);
  t.note("compress=%d async=%d fsync=%d", o_s.compress, o_s.async, o_s.fsync);
  if (check(t, "cairn_checkpoint_set_options", cairn_checkpoint_set_options(r.coin(16) ? nullptr : ck, o), IA) &&
      r.coin()) {
    const char* p = write_path(r, t);
    check(t, "cairn_checkpoint_write", cairn_checkpoint_write(ck, p), IA | IO);
    check(t, "cairn_checkpoint_sync", cairn_checkpoint_sync(ck), IA | IO);
  }
  cairn_checkpoint_free(ck);
}

void t_checkpoint_manager(Rng& r, Trial& t) {
  cairn_checkpoint* ck = make_checkpoint();
  OPTS(cairn_checkpoint_manager_options, CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT, o);
  o_s.checkpoint_name = note_str(t, "checkpoint_name", hostile_string(r));
  if (r.coin()) o_s.max_to_keep = hostile_i64(r);
  if (r.coin()) o_s.keep_checkpoint_every_n_hours = hostile_f64(r);
  t.note("max_to_keep=%" PRId64 " hours=%g", o_s.max_to_keep, o_s.keep_checkpoint_every_n_hours);
  const char* dir = write_path(r, t);
  cairn_checkpoint_manager* m = nullptr;
  bool ok = check(t, "cairn_checkpoint_manager_create", cairn_checkpoint_manager_create(ck, dir, o, &m), IA | IO);
  if (!ok && m) t.problems.push_back("out: cairn_checkpoint_manager_create failed but wrote a manager");
  if (ok && r.coin()) {
    char* path = nullptr;
    int64_t n = r.pick<int64_t>({-1, 0, 7, INT64_MAX, INT64_MIN});
    t.note("save(%" PRId64 ")", n);
    if (check(t, "cairn_checkpoint_manager_save", cairn_checkpoint_manager_save(m, n, &path), IA | IO)) cairn_free(path);
    (void)cairn_checkpoint_manager_path(m, SIZE_MAX);
  }
  cairn_checkpoint_manager_free(m);
  cairn_checkpoint_free(ck);
}

void t_tape(Rng& r, Trial& t) {
  OPTS(cairn_tape_options, CAIRN_TAPE_OPTIONS_INIT, o);
  o_s.persistent = hostile_bool(r);
  o_s.watch_accessed_variables = hostile_bool(r);
  t.note("persistent=%d watch=%d", o_s.persistent, o_s.watch_accessed_variables);
  cairn_tape* tape = nullptr;
  bool ok = check(t, "cairn_tape_create", cairn_tape_create(g_w.ctx, o, &tape), IA);
  if (!ok && tape) t.problems.push_back("out: cairn_tape_create failed but wrote a tape");
  cairn_tape_free(tape);
}

void t_optimizer(Rng& r, Trial& t) {
  OPTS(cairn_optimizer_options, CAIRN_OPTIMIZER_OPTIONS_INIT, o);
  o_s.kind = static_cast<cairn_optimizer_kind>(r.coin() ? (int32_t)r.below(4) : hostile_enum(r));
  double* fields[] = {&o_s.learning_rate, &o_s.momentum, &o_s.beta_1, &o_s.beta_2, &o_s.epsilon, &o_s.weight_decay,
                      &o_s.rho};
  for (double* f : fields)
    if (r.coin(3)) *f = hostile_f64(r);
  if (r.coin(3)) o_s.nesterov = hostile_bool(r);
  if (r.coin(3)) o_s.centered = hostile_bool(r);
  t.note("kind=%d lr=%g mom=%g b1=%g b2=%g eps=%g wd=%g rho=%g nesterov=%d centered=%d", (int)o_s.kind,
         o_s.learning_rate, o_s.momentum, o_s.beta_1, o_s.beta_2, o_s.epsilon, o_s.weight_decay, o_s.rho, o_s.nesterov,
         o_s.centered);
  cairn_object* sched = nullptr;
  int sk = static_cast<int>(r.below(4));
  if (sk == 1) {
    cairn_exponential_decay_options e = CAIRN_EXPONENTIAL_DECAY_OPTIONS_INIT;
    e.decay_steps = 10;
    e.decay_rate = 0.5;
    SETUP(cairn_schedule_exponential_decay(g_w.ctx, &e, &sched));
  } else if (sk == 2) {
    SETUP(cairn_trackable_create(g_w.ctx, &sched));
  }
  o_s.schedule = sched;
  t.note("schedule=%s", sk == 1 ? "exponential" : sk == 2 ? "trackable" : "NULL");
  cairn_object* opt = nullptr;
  bool ok = check(t, "cairn_optimizer_create", cairn_optimizer_create(g_w.ctx, o, &opt), IA);
  if (!ok && opt) t.problems.push_back("out: cairn_optimizer_create failed but wrote an optimizer");
  if (ok) {
    double lr = 0;
    check(t, "cairn_optimizer_learning_rate", cairn_optimizer_learning_rate(opt, &lr), IA);
  }
  cairn_object_free(opt);
  cairn_object_free(sched);
}

void t_schedules(Rng& r, Trial& t) {
  cairn_object* s = nullptr;
  bool ok;
  const char* fn;
  if (r.coin()) {
    OPTS(cairn_exponential_decay_options, CAIRN_EXPONENTIAL_DECAY_OPTIONS_INIT, o);
    o_s.initial_learning_rate = hostile_f64(r);
    o_s.decay_steps = hostile_i64(r);
    o_s.decay_rate = hostile_f64(r);
    o_s.staircase = hostile_bool(r);
    t.note("lr=%g steps=%" PRId64 " rate=%g staircase=%d", o_s.initial_learning_rate, o_s.decay_steps, o_s.decay_rate,
           o_s.staircase);
    fn = "cairn_schedule_exponential_decay";
    ok = check(t, fn, cairn_schedule_exponential_decay(g_w.ctx, o, &s), IA);
  } else {
    OPTS(cairn_cosine_decay_options, CAIRN_COSINE_DECAY_OPTIONS_INIT, o);
    o_s.initial_learning_rate = hostile_f64(r);
    o_s.decay_steps = hostile_i64(r);
    o_s.alpha = hostile_f64(r);
    t.note("lr=%g steps=%" PRId64 " alpha=%g", o_s.initial_learning_rate, o_s.decay_steps, o_s.alpha);
    fn = "cairn_schedule_cosine_decay";
    ok = check(t, fn, cairn_schedule_cosine_decay(g_w.ctx, o, &s), IA);
  }
  if (!ok && s) t.problems.push_back(std::string("out: ") + fn + " failed but wrote a schedule");
  if (ok) {
    // The schedule drives an optimizer: its learning rate must be a status or a number, never a crash.
    cairn_optimizer_options oo = CAIRN_OPTIMIZER_OPTIONS_INIT;
    oo.schedule = s;
    cairn_object* opt = nullptr;
    if (check(t, "cairn_optimizer_create", cairn_optimizer_create(g_w.ctx, &oo, &opt), IA)) {
      double lr = 0;
      check(t, "cairn_optimizer_learning_rate", cairn_optimizer_learning_rate(opt, &lr), IA);
    }
    cairn_object_free(opt);
  }
  cairn_object_free(s);
}

// Layers: a constructor, then (sometimes) one call on a small NHWC input.
void layer_done(Rng& r, Trial& t, const char* fn, cairn_status* st, cairn_object** out) {
  cairn_object* layer = *out;
  bool ok = check(t, fn, st, IA);
  if (!ok && layer) t.problems.push_back(std::string("out: ") + fn + " failed but wrote a layer");
  if (ok && r.coin(3)) {
    float v[2 * 3 * 3 * 2];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) v[i] = static_cast<float>(i % 5);
    int64_t shape[4] = {2, 3, 3, 2};
    size_t rank = r.pick<size_t>({2, 4});
    if (rank == 2) shape[0] = 6, shape[1] = 6;
    cairn_tensor* x = nullptr;
    SETUP(cairn_tensor_create(g_w.ctx, CAIRN_FLOAT32, shape, rank, v, sizeof v, &x));
    cairn_tensor* y = nullptr;
    t.note("call(float32 rank %zu)", rank);
    if (check(t, "cairn_layer_call", cairn_layer_call(layer, x, r.coin() ? 1 : 0, &y), IA | UN)) cairn_tensor_free(y);
    cairn_tensor_free(x);
  }
  cairn_object_free(layer);
}

void t_layers(Rng& r, Trial& t) {
  cairn_object* l = nullptr;
  switch (r.below(10)) {
    case 0: {
      OPTS(cairn_dense_options, CAIRN_DENSE_OPTIONS_INIT, o);
      o_s.units = r.coin() ? 3 : hostile_i64(r);
      o_s.activation = note_str(t, "activation", hostile_string(r));
      o_s.use_bias = hostile_bool(r);
      o_s.kernel_initializer = note_str(t, "kernel_initializer", hostile_string(r));
      o_s.bias_initializer = note_str(t, "bias_initializer", hostile_string(r));
      o_s.name = note_str(t, "name", hostile_string(r));
      t.note("units=%" PRId64 " use_bias=%d", o_s.units, o_s.use_bias);
      return layer_done(r, t, "cairn_dense_create", cairn_dense_create(g_w.ctx, o, &l), &l);
    }
    case 1: {
      OPTS(cairn_conv2d_options, CAIRN_CONV2D_OPTIONS_INIT, o);
      o_s.filters = r.coin() ? 2 : hostile_i64(r);
      int64_t* f[] = {&o_s.kernel_h, &o_s.kernel_w, &o_s.stride_h, &o_s.stride_w};
      for (int64_t* p : f)
        if (r.coin()) *p = hostile_i64(r);
      o_s.padding = note_str(t, "padding", hostile_string(r));
      o_s.activation = note_str(t, "activation", hostile_string(r));
      o_s.use_bias = hostile_bool(r);
      o_s.kernel_initializer = note_str(t, "kernel_initializer", hostile_string(r));
      o_s.name = note_str(t, "name", hostile_string(r));
      t.note("filters=%" PRId64 " k=%" PRId64 "x%" PRId64 " s=%" PRId64 "x%" PRId64, o_s.filters, o_s.kernel_h,
             o_s.kernel_w, o_s.stride_h, o_s.stride_w);
      return layer_done(r, t, "cairn_conv2d_create", cairn_conv2d_create(g_w.ctx, o, &l), &l);
    }
    case 2:
    case 3: {
      OPTS(cairn_pool2d_options, CAIRN_POOL2D_OPTIONS_INIT, o);
      int64_t* f[] = {&o_s.pool_h, &o_s.pool_w, &o_s.stride_h, &o_s.stride_w};
      for (int64_t* p : f)
        if (r.coin()) *p = hostile_i64(r);
      o_s.padding = note_str(t, "padding", hostile_string(r));
      o_s.name = note_str(t, "name", hostile_string(r));
      t.note("pool=%" PRId64 "x%" PRId64 " s=%" PRId64 "x%" PRId64, o_s.pool_h, o_s.pool_w, o_s.stride_h, o_s.stride_w);
      bool max = r.coin();
      return layer_done(r, t, max ? "cairn_max_pool2d_create" : "cairn_avg_pool2d_create",
                        max ? cairn_max_pool2d_create(g_w.ctx, o, &l) : cairn_avg_pool2d_create(g_w.ctx, o, &l), &l);
    }
    case 4: {
      OPTS(cairn_flatten_options, CAIRN_FLATTEN_OPTIONS_INIT, o);
      o_s.name = note_str(t, "name", hostile_string(r));
      return layer_done(r, t, "cairn_flatten_create", cairn_flatten_create(g_w.ctx, o, &l), &l);
    }
    case 5: {
      OPTS(cairn_embedding_options, CAIRN_EMBEDDING_OPTIONS_INIT, o);
      o_s.input_dim = r.coin() ? 4 : hostile_i64(r);
      o_s.output_dim = r.coin() ? 2 : hostile_i64(r);
      o_s.name = note_str(t, "name", hostile_string(r));
      t.note("input_dim=%" PRId64 " output_dim=%" PRId64, o_s.input_dim, o_s.output_dim);
      return layer_done(r, t, "cairn_embedding_create", cairn_embedding_create(g_w.ctx, o, &l), &l);
    }
    case 6: {
      OPTS(cairn_norm_options, CAIRN_NORM_OPTIONS_INIT, o);
      if (r.coin()) o_s.axis = hostile_i64(r);
      if (r.coin()) o_s.epsilon = hostile_f64(r);
      if (r.coin()) o_s.momentum = hostile_f64(r);
      o_s.center = hostile_bool(r);
      o_s.scale = hostile_bool(r);
      o_s.name = note_str(t, "name", hostile_string(r));
      t.note("axis=%" PRId64 " eps=%g momentum=%g center=%d scale=%d", o_s.axis, o_s.epsilon, o_s.momentum, o_s.center,
             o_s.scale);
      bool batch = r.coin();
      return layer_done(r, t, batch ? "cairn_batch_norm_create" : "cairn_layer_norm_create",
                        batch ? cairn_batch_norm_create(g_w.ctx, o, &l) : cairn_layer_norm_create(g_w.ctx, o, &l), &l);
    }
    case 7: {
      OPTS(cairn_dropout_options, CAIRN_DROPOUT_OPTIONS_INIT, o);
      o_s.rate = hostile_f64(r);
      o_s.seed = hostile_i64(r);
      o_s.name = note_str(t, "name", hostile_string(r));
      t.note("rate=%g seed=%" PRId64, o_s.rate, o_s.seed);
      return layer_done(r, t, "cairn_dropout_create", cairn_dropout_create(g_w.ctx, o, &l), &l);
    }
    case 8: {
      OPTS(cairn_activation_options, CAIRN_ACTIVATION_OPTIONS_INIT, o);
      o_s.activation = note_str(t, "activation", hostile_string(r));
      o_s.name = note_str(t, "name", hostile_string(r));
      return layer_done(r, t, "cairn_activation_create", cairn_activation_create(g_w.ctx, o, &l), &l);
    }
    default: {
      OPTS(cairn_sequential_options, CAIRN_SEQUENTIAL_OPTIONS_INIT, o);
      o_s.name = note_str(t, "name", hostile_string(r));
      return layer_done(r, t, "cairn_sequential_create", cairn_sequential_create(g_w.ctx, o, &l), &l);
    }
  }
}

// A hostile input signature (or spec array): bad strides, dtypes, ranks, dims.
struct Specs {
  std::vector<unsigned char> bytes;  // the array, with the chosen stride
  std::vector<int64_t> dims;
  size_t n = 0;
  const cairn_tensor_spec* ptr() const { return bytes.empty() ? nullptr : reinterpret_cast<const cairn_tensor_spec*>(bytes.data()); }
};
void hostile_specs(Rng& r, Trial& t, Specs& s) {
  s.n = r.pick<size_t>({0, 1, 1, 2, 3});
  uint32_t stride = r.coin(4) ? r.pick<uint32_t>({0, 4, sizeof(cairn_tensor_spec) - 1, sizeof(cairn_tensor_spec) + 8})
                              : sizeof(cairn_tensor_spec);
  int64_t dim_vals[] = {2, -1, 0, -2, INT64_MIN, INT64_MAX, (int64_t)1 << 62};
  s.dims.resize(16);
  for (auto& d : s.dims) d = r.coin() ? 2 : dim_vals[r.below(7)];
  size_t alloc_stride = stride < sizeof(cairn_tensor_spec) ? sizeof(cairn_tensor_spec) : stride;
  s.bytes.assign(alloc_stride * (s.n ? s.n : 1), 0);
  std::string d = "specs[";
  for (size_t i = 0; i < s.n; ++i) {
    cairn_tensor_spec sp = CAIRN_TENSOR_SPEC_INIT;
    sp.struct_size = (i > 0 && r.coin(8)) ? sizeof(cairn_tensor_spec) + 4 : stride;
    sp.dtype = static_cast<cairn_dtype>(r.coin() ? 1 : r.pick<int32_t>({0, 7, 11, 13, 35, 1000, 65536, INT32_MAX, 3, 9, 10}));
    sp.rank = r.pick<size_t>({0, 1, 2, 8, 9, 64, SIZE_MAX});
    sp.shape = (sp.rank > 16 || r.coin(8)) ? nullptr : s.dims.data();
    if (sp.rank > 16 && r.coin()) sp.shape = s.dims.data(), sp.rank = 17;  // never read past dims... rank 17 > 16 dims
    if (sp.rank == 17) sp.rank = 9;
    memcpy(s.bytes.data() + i * stride, &sp, sizeof sp < stride ? sizeof sp : stride);
    char b[96];
    snprintf(b, sizeof b, "%s{size=%u dtype=%d rank=%zu shape=%s}", i ? "," : "", sp.struct_size, (int)sp.dtype,
             sp.rank, sp.shape ? "dims" : "NULL");
    d += b;
  }
  if (s.n == 0 && r.coin()) s.bytes.clear();
  t.note("%s] stride=%u", d.c_str(), stride);
}

void t_function_create(Rng& r, Trial& t) {
  OPTS(cairn_function_options, CAIRN_FUNCTION_OPTIONS_INIT, o);
  Specs specs;
  if (r.coin()) {
    hostile_specs(r, t, specs);
    o_s.input_signature = specs.ptr();
    o_s.n_input_signature = r.coin(8) ? r.pick<size_t>({SIZE_MAX, 1000000}) : specs.n;
    if (!o_s.input_signature) o_s.n_input_signature = r.coin() ? 0 : 3;
    if (o_s.n_input_signature > specs.n && o_s.input_signature) o_s.n_input_signature = specs.n;  // no overread
    t.note("n_input_signature=%zu", o_s.n_input_signature);
  }
  o_s.retrace_warning = r.coin() ? 5 : hostile_i32(r);
  int64_t statics[3] = {hostile_i64(r), 0, 0};
  if (r.coin(3)) {
    o_s.static_inputs = r.coin(6) ? nullptr : statics;
    o_s.n_static_inputs = r.pick<size_t>({1, 2, 3, 0});
    t.note("static_inputs=%s[%" PRId64 ",0,0] n=%zu", o_s.static_inputs ? "" : "NULL", statics[0], o_s.n_static_inputs);
  }
  const char* name = note_str(t, "name", r.coin() ? "f" : hostile_string(r));
  cairn_function_fn fn = r.coin(10) ? nullptr : identity_fn;
  cairn_function* f = nullptr;
  bool ok = check(t, "cairn_function_create", cairn_function_create(g_w.ctx, name, fn, nullptr, o, &f), IA);
  if (!ok && f) t.problems.push_back("out: cairn_function_create failed but wrote a function");
  if (ok && r.coin()) {
    float v[2] = {1, 2};
    int64_t shape[1] = {2};
    cairn_tensor* x = nullptr;
    SETUP(cairn_tensor_create(g_w.ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &x));
    cairn_tensor* y[2] = {nullptr, nullptr};
    size_t n_in = r.pick<size_t>({1, 0, 2});
    cairn_tensor* ins[2] = {x, x};
    t.note("call(%zu inputs)", n_in);
    // cairn_function_call's messages name the function (cairn.h's conventions).
    if (check_named(t, "cairn_function_call", "function '", cairn_function_call(f, ins, n_in, y, 1), IA | NF | UN)) cairn_tensor_free(y[0]);
    cairn_tensor_free(x);
  }
  cairn_function_free(f);
}

void t_function_load(Rng& r, Trial& t) {
  const char* p = read_path(r, t);
  static std::string truncated;
  truncated = g_w.dir + "/truncated.cairnfn";
  if (r.coin(3)) {
    p = r.coin() ? g_w.function_path.c_str() : truncated.c_str();
    t.note("path=%s", p == truncated.c_str() ? "truncated.cairnfn" : "exported");
  }
  cairn_function* f = nullptr;
  bool ok = check(t, "cairn_function_load", cairn_function_load(r.coin(16) ? nullptr : g_w.ctx, p, &f), IA | NF | DL | PD);
  if (!ok && f) t.problems.push_back("out: cairn_function_load failed but wrote a function");
  if (ok) {
    size_t n = 0;
    size_t idx = r.pick<size_t>({0, 1, SIZE_MAX});
    t.note("index=%zu", idx);
    if (check(t, "cairn_function_num_outputs", cairn_function_num_outputs(f, idx, &n), IA | OR)) (void)n;
    char* s = nullptr;
    if (check(t, "cairn_function_graphdef", cairn_function_graphdef(f, idx, &s), IA | OR)) cairn_free(s);
    s = nullptr;
    if (check(t, "cairn_function_dump", cairn_function_dump(f, idx, &s), IA | OR)) cairn_free(s);
    s = nullptr;
    if (check(t, "cairn_function_signature", cairn_function_signature(f, idx, &s), IA | OR)) cairn_free(s);
  }
  cairn_function_free(f);
}

void t_function_export(Rng& r, Trial& t) {
  cairn_function* f = nullptr;
  SETUP(cairn_function_create(g_w.ctx, "f", identity_fn, nullptr, nullptr, &f));
  if (r.coin()) {
    cairn_tensor* x = small_tensor(r, t);
    cairn_tensor* y = nullptr;
    SETUP(cairn_function_call(f, &x, 1, &y, 1));
    cairn_tensor_free(x);
    cairn_tensor_free(y);
    t.note("traced");
  }
  const char* p = write_path(r, t);
  check(t, "cairn_function_export", cairn_function_export(f, p), IA | IO | UN);
  cairn_function_free(f);
}

void t_records(Rng& r, Trial& t) {
  if (r.coin()) {
    OPTS(cairn_record_writer_options, CAIRN_RECORD_WRITER_OPTIONS_INIT, o);
    o_s.compression = static_cast<cairn_compression>(r.coin() ? (int32_t)r.below(3) : hostile_enum(r));
    o_s.level = r.coin() ? -1 : hostile_i32(r);
    o_s.write_index = hostile_bool(r);
    o_s.append = r.coin() ? 0 : hostile_bool(r);
    t.note("compression=%d level=%d write_index=%d append=%d", (int)o_s.compression, o_s.level, o_s.write_index,
           o_s.append);
    const char* p = write_path(r, t);
    cairn_record_writer* w = nullptr;
    bool ok = check(t, "cairn_record_writer_open", cairn_record_writer_open(p, o, &w), IA | IO);
    if (!ok && w) t.problems.push_back("out: cairn_record_writer_open failed but wrote a writer");
    if (ok) {
      check(t, "cairn_record_writer_write", cairn_record_writer_write(w, "abc", r.coin() ? 3 : 0), IA | IO);
      check(t, "cairn_record_writer_close", cairn_record_writer_close(w), IA | IO);
    }
    cairn_record_writer_free(w);
    return;
  }
  OPTS(cairn_record_reader_options, CAIRN_RECORD_READER_OPTIONS_INIT, o);
  o_s.compression = static_cast<cairn_compression>(r.coin() ? (int32_t)r.below(3) : hostile_enum(r));
  o_s.verify_checksums = hostile_bool(r);
  o_s.read_ahead = hostile_bool(r);
  o_s.buffer_size = r.coin() ? 0 : hostile_u64(r);
  t.note("compression=%d verify=%d read_ahead=%d buffer_size=%" PRIu64, (int)o_s.compression, o_s.verify_checksums,
         o_s.read_ahead, o_s.buffer_size);
  const char* p = r.coin() ? g_w.record_path.c_str() : read_path(r, t);
  if (p == g_w.record_path.c_str()) t.note("path=record");
  switch (r.below(3)) {
    case 0: {
      cairn_record_reader* rd = nullptr;
      bool ok = check(t, "cairn_record_reader_open", cairn_record_reader_open(p, o, &rd), IA | IO);
      if (!ok && rd) t.problems.push_back("out: cairn_record_reader_open failed but wrote a reader");
      for (int i = 0; ok && i < 3; ++i) {
        const void* d = nullptr;
        size_t n = 0;
        cairn_bool got = 0;
        if (!check(t, "cairn_record_reader_next", cairn_record_reader_next(rd, &d, &n, &got), IA | DL | IO)) break;
        if (!got) break;
      }
      if (ok) {
        int64_t off = hostile_i64(r);
        t.note("seek(%" PRId64 ")", off);
        check(t, "cairn_record_reader_seek", cairn_record_reader_seek(rd, off), IA | OR | DL | IO);
        check(t, "cairn_record_reader_seek_record", cairn_record_reader_seek_record(rd, hostile_i64(r)),
              IA | OR | FP | DL | IO);
      }
      cairn_record_reader_free(rd);
      return;
    }
    case 1: {
      int64_t n = 0;
      check(t, "cairn_record_file_count", cairn_record_file_count(p, o, &n), IA | IO);
      return;
    }
    default: {
      // The index sidecar is written beside the file: only for files in the scratch directory.
      if (!p || strncmp(p, g_w.dir.c_str(), g_w.dir.size()) != 0) return;
      int64_t n = 0;
      check(t, "cairn_record_index_build", cairn_record_index_build(p, o, r.coin() ? &n : nullptr), IA | IO);
      return;
    }
  }
}

void t_summary_writer(Rng& r, Trial& t) {
  OPTS(cairn_summary_writer_options, CAIRN_SUMMARY_WRITER_OPTIONS_INIT, o);
  if (r.coin()) o_s.max_queue = hostile_i64(r);
  if (r.coin()) o_s.flush_millis = hostile_i64(r);
  o_s.filename_suffix = note_str(t, "filename_suffix", hostile_string(r));
  t.note("max_queue=%" PRId64 " flush_millis=%" PRId64, o_s.max_queue, o_s.flush_millis);
  const char* dir = write_path(r, t);
  cairn_summary_writer* w = nullptr;
  bool ok = check(t, "cairn_summary_writer_create", cairn_summary_writer_create(dir, o, &w), IA | IO);
  if (!ok && w) t.problems.push_back("out: cairn_summary_writer_create failed but wrote a writer");
  if (ok) check(t, "cairn_summary_writer_close", cairn_summary_writer_close(w), IA | IO);
  cairn_summary_writer_free(w);
}

void t_profiler(Rng& r, Trial& t) {
  OPTS(cairn_profiler_options, CAIRN_PROFILER_OPTIONS_INIT, o);
  o_s.max_events = r.coin() ? 100 : hostile_u64(r);
  o_s.vulkan_timestamps = hostile_bool(r);
  t.note("max_events=%" PRIu64 " vulkan_timestamps=%d", o_s.max_events, o_s.vulkan_timestamps);
  if (check(t, "cairn_profiler_start", cairn_profiler_start(o), IA | FP)) {
    cairn_profile* p = nullptr;
    if (check(t, "cairn_profiler_stop", cairn_profiler_stop(&p), IA | FP)) cairn_profile_free(p);
  }
}

cairn_dataset* range_ds() {
  cairn_dataset* ds = nullptr;
  SETUP(cairn_dataset_range(g_w.ctx, 0, 10, 1, &ds));
  return ds;
}

cairn_status* pred_fn(void*, cairn_context* ctx, cairn_tensor* const*, size_t, cairn_tensor** outputs, size_t n) {
  uint8_t b = 1;
  for (size_t i = 0; i < n; ++i) {
    cairn_status* st = cairn_tensor_create(ctx, CAIRN_BOOL, nullptr, 0, &b, 1, &outputs[i]);
    if (st) return st;
  }
  return nullptr;
}

cairn_status* gen_fn(void*, cairn_context* ctx, int64_t index, cairn_tensor** outputs, size_t n, cairn_bool* got) {
  *got = index < 2;
  if (!*got) return nullptr;
  float v[2] = {1, 2};
  int64_t shape[1] = {2};
  for (size_t i = 0; i < n; ++i) {
    cairn_status* st = cairn_tensor_create(ctx, CAIRN_FLOAT32, shape, 1, v, sizeof v, &outputs[i]);
    if (st) return st;
  }
  return nullptr;
}

cairn_status* inner_ds_fn(void*, cairn_context* ctx, cairn_tensor* const*, size_t, cairn_dataset** out) {
  return cairn_dataset_range(ctx, 0, 2, 1, out);
}

void dataset_done(Rng& r, Trial& t, const char* fn, cairn_status* st, cairn_dataset** out, uint32_t codes = IA) {
  cairn_dataset* ds = *out;
  bool ok = check(t, fn, st, codes);
  if (!ok && ds) t.problems.push_back(std::string("out: ") + fn + " failed but wrote a dataset");
  if (ok && r.coin(3)) {
    // One element: a status or an element (never a crash or a hang).
    cairn_object* it = nullptr;
    if (check(t, "cairn_dataset_iterate", cairn_dataset_iterate(ds, &it), IA)) {
      size_t n = cairn_dataset_num_components(ds);
      std::vector<cairn_tensor*> outs(n ? n : 1, nullptr);
      cairn_status* s = cairn_iterator_next(it, outs.data(), n);
      if (s) {
        cairn_code c = cairn_status_code(s);
        if (c == CAIRN_INTERNAL)
          t.problems.push_back(std::string("code: cairn_iterator_next after ") + fn + " => INTERNAL: " +
                               cairn_status_message(s));
        cairn_status_free(s);
      } else {
        for (cairn_tensor* x : outs) cairn_tensor_free(x);
      }
      cairn_status_free(cairn_iterator_close(it));
    }
    cairn_object_free(it);
  }
  cairn_dataset_free(ds);
}

void t_datasets(Rng& r, Trial& t) {
  cairn_dataset* out = nullptr;
  struct Input {  // freed however the case ends
    cairn_dataset* ds = range_ds();
    ~Input() { cairn_dataset_free(ds); }
  } input;
  cairn_dataset* in = input.ds;
  switch (r.below(9)) {
    case 0: {
      OPTS(cairn_csv_options, CAIRN_CSV_OPTIONS_INIT, o);
      cairn_dtype dts[3];
      for (auto& d : dts)
        d = static_cast<cairn_dtype>(r.coin() ? r.pick<int32_t>({1, 2, 3, 9, 7}) : hostile_enum(r));
      o_s.column_dtypes = r.coin(8) ? nullptr : dts;
      o_s.n_columns = r.pick<size_t>({0, 1, 2, 3});
      const char* defs[3] = {hostile_string(r), hostile_string(r), hostile_string(r)};
      if (r.coin()) o_s.column_defaults = defs;
      const char* names[3] = {hostile_string(r), hostile_string(r), hostile_string(r)};
      if (r.coin()) o_s.column_names = names;
      int64_t sel[3] = {r.coin() ? 0 : hostile_i64(r), r.coin() ? 1 : hostile_i64(r), r.coin() ? 2 : hostile_i64(r)};
      if (r.coin()) o_s.select_columns = sel;
      o_s.header = hostile_bool(r);
      o_s.delimiter = r.coin() ? ',' : r.pick<int32_t>({0, -1, '\n', '\r', '"', 128, 255, 256, INT32_MAX, INT32_MIN});
      o_s.na_value = hostile_string(r);
      t.note("dtypes=[%d,%d,%d]%s n=%zu defaults=%s names=%s select=%s[%" PRId64 ",%" PRId64 ",%" PRId64
             "] header=%d delim=%d",
             dts[0], dts[1], dts[2], o_s.column_dtypes ? "" : "(NULL)", o_s.n_columns,
             o_s.column_defaults ? "set" : "NULL", o_s.column_names ? "set" : "NULL",
             o_s.select_columns ? "" : "NULL", sel[0], sel[1], sel[2], o_s.header, o_s.delimiter);
      std::string csv = g_w.dir + "/data.csv";
      write_file(csv, "a,b,c\n1,2,3\n4,,6\n\"x\"\"y\",8,9\n");
      const char* paths[2] = {csv.c_str(), read_path(r, t)};
      size_t np = r.pick<size_t>({1, 2, 0});
      return dataset_done(r, t, "cairn_dataset_csv", cairn_dataset_csv(g_w.ctx, paths, np, o, &out), &out, IA | NF);
    }
    case 1: {
      OPTS(cairn_tfrecord_options, CAIRN_TFRECORD_OPTIONS_INIT, o);
      o_s.compression = static_cast<cairn_compression>(r.coin() ? (int32_t)r.below(3) : hostile_enum(r));
      o_s.num_parallel_reads = r.coin() ? 0 : hostile_i32(r);
      o_s.buffer_size = r.coin() ? 0 : hostile_u64(r);
      t.note("compression=%d parallel=%d buffer=%" PRIu64, (int)o_s.compression, o_s.num_parallel_reads,
             o_s.buffer_size);
      const char* paths[2] = {g_w.record_path.c_str(), read_path(r, t)};
      size_t np = r.pick<size_t>({1, 2, 0});
      return dataset_done(r, t, "cairn_dataset_tfrecord", cairn_dataset_tfrecord(g_w.ctx, paths, np, o, &out), &out,
                          IA | NF);
    }
    case 2: {
      OPTS(cairn_map_options, CAIRN_MAP_OPTIONS_INIT, o);
      o_s.num_parallel_calls = r.coin() ? 0 : hostile_i32(r);
      o_s.deterministic = hostile_bool(r);
      o_s.compile = hostile_bool(r);
      const char* names[2] = {hostile_string(r), hostile_string(r)};
      if (r.coin(3)) o_s.output_names = names;
      Specs specs;
      if (r.coin()) {
        hostile_specs(r, t, specs);
        o_s.output_specs = specs.ptr();
      }
      o_s.n_outputs = r.pick<size_t>({1, 1, 0, 2});
      if (o_s.output_specs && o_s.n_outputs > specs.n) o_s.n_outputs = specs.n;
      o_s.seed = hostile_i64(r);
      t.note("parallel=%d det=%d compile=%d names=%s n_outputs=%zu seed=%" PRId64, o_s.num_parallel_calls,
             o_s.deterministic, o_s.compile, o_s.output_names ? "set" : "NULL", o_s.n_outputs, o_s.seed);
      const char* name = note_str(t, "name", hostile_string(r));
      return dataset_done(r, t, "cairn_dataset_map",
                          cairn_dataset_map(in, name, r.coin(10) ? nullptr : identity_fn, nullptr, o, &out), &out);
    }
    case 3: {
      OPTS(cairn_filter_options, CAIRN_FILTER_OPTIONS_INIT, o);
      o_s.compile = hostile_bool(r);
      o_s.seed = hostile_i64(r);
      t.note("compile=%d seed=%" PRId64, o_s.compile, o_s.seed);
      const char* name = note_str(t, "name", hostile_string(r));
      cairn_function_fn fn = r.pick<cairn_function_fn>({pred_fn, identity_fn, nullptr});
      return dataset_done(r, t, "cairn_dataset_filter", cairn_dataset_filter(in, name, fn, nullptr, o, &out), &out);
    }
    case 4: {
      OPTS(cairn_interleave_options, CAIRN_INTERLEAVE_OPTIONS_INIT, o);
      o_s.cycle_length = r.coin() ? 2 : hostile_i32(r);
      o_s.block_length = r.coin() ? 1 : hostile_i32(r);
      o_s.num_parallel_calls = r.coin() ? 0 : hostile_i32(r);
      o_s.deterministic = hostile_bool(r);
      t.note("cycle=%d block=%d parallel=%d det=%d", o_s.cycle_length, o_s.block_length, o_s.num_parallel_calls,
             o_s.deterministic);
      Specs specs;
      hostile_specs(r, t, specs);
      const char* names[3] = {"value", hostile_string(r), hostile_string(r)};
      return dataset_done(r, t, "cairn_dataset_interleave",
                          cairn_dataset_interleave(in, r.coin(10) ? nullptr : inner_ds_fn, nullptr,
                                                   r.coin() ? names : nullptr, specs.ptr(), specs.n, o, &out),
                          &out);
    }
    case 5: {
      int64_t a = hostile_i64(r), b = hostile_i64(r), c = hostile_i64(r);
      t.note("range(%" PRId64 ", %" PRId64 ", %" PRId64 ")", a, b, c);
      dataset_done(r, t, "cairn_dataset_range", cairn_dataset_range(g_w.ctx, a, b, c, &out), &out);
      break;
    }
    case 6: {
      int64_t n = hostile_i64(r), m = hostile_i64(r);
      int which = static_cast<int>(r.below(7));
      static const char* fns[] = {"cairn_dataset_batch", "cairn_dataset_shuffle", "cairn_dataset_repeat",
                                  "cairn_dataset_take",  "cairn_dataset_skip",    "cairn_dataset_shard",
                                  "cairn_dataset_prefetch"};
      t.note("%s(%" PRId64 ", %" PRId64 ")", fns[which], n, m);
      cairn_status* st = nullptr;
      switch (which) {
        case 0: st = cairn_dataset_batch(in, n, hostile_bool(r), &out); break;
        case 1: st = cairn_dataset_shuffle(in, n, m, hostile_bool(r), &out); break;
        case 2: st = cairn_dataset_repeat(in, n, &out); break;
        case 3: st = cairn_dataset_take(in, n, &out); break;
        case 4: st = cairn_dataset_skip(in, n, &out); break;
        case 5: st = cairn_dataset_shard(in, n, m, &out); break;
        default: st = cairn_dataset_prefetch(in, n, &out); break;
      }
      dataset_done(r, t, fns[which], st, &out);
      break;
    }
    case 7: {
      Specs specs;
      hostile_specs(r, t, specs);
      const char* names[3] = {hostile_string(r), hostile_string(r), hostile_string(r)};
      cairn_status* st = cairn_dataset_from_generator(g_w.ctx, r.coin() ? names : nullptr, specs.ptr(), specs.n,
                                                      r.coin(10) ? nullptr : gen_fn, nullptr, nullptr, &out);
      // An iteration of a generator dataset runs pred_fn; fine.
      dataset_done(r, t, "cairn_dataset_from_generator", st, &out);
      break;
    }
    default: {
      const char* paths[2] = {read_path(r, t), read_path(r, t)};
      size_t np = r.pick<size_t>({1, 2, 0});
      dataset_done(r, t, "cairn_dataset_text_lines", cairn_dataset_text_lines(g_w.ctx, paths, np, &out), &out, IA | NF);
      break;
    }
  }
}

const char* hostile_key(Rng& r, Trial& t, const cairn_checkpoint_reader* rd) {
  static std::string k;
  size_t n = cairn_checkpoint_reader_count(rd);
  if (n && r.coin()) {
    const char* key = cairn_checkpoint_reader_key(rd, r.below(n));
    k = key ? key : "";
  } else {
    const char* s = hostile_string(r);
    if (!s) {
      t.note("key=NULL");
      return nullptr;
    }
    k = s;
  }
  t.note("key=%s", printable(k.c_str()).c_str());
  return k.c_str();
}

void t_checkpoint_reader(Rng& r, Trial& t) {
  const char* p = read_path(r, t);
  cairn_checkpoint_reader* rd = nullptr;
  bool ok = check(t, "cairn_checkpoint_reader_open", cairn_checkpoint_reader_open(p, &rd), IA | NF | DL | PD | UN);
  if (!ok && rd) t.problems.push_back("out: cairn_checkpoint_reader_open failed but wrote a reader");
  if (!ok) return;
  size_t n = cairn_checkpoint_reader_count(rd);
  size_t idx = r.pick<size_t>({0, 1, n, n ? n - 1 : 0, SIZE_MAX});
  (void)cairn_checkpoint_reader_key(rd, idx);
  (void)cairn_checkpoint_reader_dtype(rd, idx);
  size_t rank = cairn_checkpoint_reader_rank(rd, idx);
  (void)cairn_checkpoint_reader_dim(rd, idx, r.pick<size_t>({0, rank, SIZE_MAX}));
  (void)cairn_checkpoint_reader_type_name(rd, idx);
  (void)cairn_checkpoint_reader_metadata_key(rd, idx);
  (void)cairn_checkpoint_reader_metadata_value(rd, idx);
  (void)cairn_checkpoint_reader_format(rd);
  for (int i = 0; i < 3; ++i) {
    const char* key = hostile_key(r, t, rd);
    switch (r.below(4)) {
      case 0: {
        cairn_tensor* x = nullptr;
        if (check(t, "cairn_checkpoint_reader_load",
                  cairn_checkpoint_reader_load(rd, r.coin(16) ? nullptr : g_w.ctx, key, &x), IA | NF | DL | UN))
          cairn_tensor_free(x);
        break;
      }
      case 1: {
        char* s = nullptr;
        size_t size = 0;
        if (check(t, "cairn_checkpoint_reader_load_string", cairn_checkpoint_reader_load_string(rd, key, &s, &size),
                  IA | NF | DL | UN))
          cairn_free(s);
        break;
      }
      case 2: {
        char* s = nullptr;
        size_t size = 0;
        size_t el = r.pick<size_t>({0, 1, SIZE_MAX, (size_t)1 << 62});
        t.note("element=%zu", el);
        if (check(t, "cairn_checkpoint_reader_load_string_element",
                  cairn_checkpoint_reader_load_string_element(rd, key, el, &s, &size), IA | NF | DL | UN))
          cairn_free(s);
        break;
      }
      default: {
        cairn_bool checked = 0;
        check(t, "cairn_checkpoint_reader_verify", cairn_checkpoint_reader_verify(rd, key, r.coin() ? &checked : nullptr),
              IA | NF | DL | UN);
        break;
      }
    }
  }
  cairn_checkpoint_reader_free(rd);
}

void t_weights(Rng& r, Trial& t) {
  cairn_object* obj = nullptr;
  int ok_kind = static_cast<int>(r.below(4));
  if (ok_kind <= 1) obj = make_module(g_w.ctx, "m");
  else if (ok_kind == 2) SETUP(cairn_trackable_create(g_w.ctx, &obj));
  t.note("obj=%s", ok_kind <= 1 ? "module" : ok_kind == 2 ? "trackable" : "NULL");
  OPTS(cairn_weights_options, CAIRN_WEIGHTS_OPTIONS_INIT, o);
  o_s.prefix = note_str(t, "prefix", r.coin() ? nullptr : hostile_string(r));
  o_s.separator = note_str(t, "separator", r.coin() ? nullptr : hostile_string(r));
  o_s.allow_missing = hostile_bool(r);
  o_s.allow_unused = hostile_bool(r);
  o_s.checksums = hostile_bool(r);
  o_s.max_shard_bytes = r.coin() ? 0 : hostile_u64(r);
  static const char* jsons[] = {nullptr, "", "{}", "[]", "{\"format\":\"pt\"}", "{\"a\":1}", "{\"a\":", "null",
                                "{\"\xff\":\"x\"}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "{\"a\":\"b\",\"a\":\"c\"}"};
  o_s.metadata_json = jsons[r.below(sizeof jsons / sizeof jsons[0])];
  t.note("allow_missing=%d allow_unused=%d checksums=%d max_shard=%" PRIu64 " metadata_json=%s", o_s.allow_missing,
         o_s.allow_unused, o_s.checksums, o_s.max_shard_bytes, printable(o_s.metadata_json).c_str());
  if (r.coin()) {
    const char* p = read_path(r, t);
    size_t loaded = 0;
    check(t, "cairn_object_load_weights", cairn_object_load_weights(obj, p, o, r.coin() ? &loaded : nullptr),
          IA | NF | DL | PD | UN | FP);
  } else {
    auto fmt = static_cast<cairn_weights_format>(r.coin() ? (int32_t)r.below(4) : hostile_enum(r));
    t.note("format=%d", (int)fmt);
    const char* p = write_path(r, t);
    check(t, "cairn_object_save_weights", cairn_object_save_weights(obj, p, fmt, o), IA | IO | UN);
  }
  cairn_object_free(obj);
}

void t_checkpoint_restore_export(Rng& r, Trial& t) {
  cairn_checkpoint* ck = make_checkpoint();
  if (r.coin()) {
    const char* p = read_path(r, t);
    cairn_restore_status* rs = nullptr;
    bool ok = check(t, "cairn_checkpoint_restore", cairn_checkpoint_restore(r.coin(16) ? nullptr : ck, p, &rs),
                    IA | NF | DL | PD | UN | FP);
    if (!ok && rs) t.problems.push_back("out: cairn_checkpoint_restore failed but wrote a restore status");
    if (ok) {
      cairn_restore_status_expect_partial(rs);
      check(t, "cairn_restore_status_assert_consumed", cairn_restore_status_assert_consumed(rs), IA | FP);
    }
    cairn_restore_status_free(rs);
  } else {
    OPTS(cairn_export_options, CAIRN_EXPORT_OPTIONS_INIT, o);
    o_s.keras_names = hostile_bool(r);
    o_s.save_counter = hostile_bool(r);
    auto fmt = static_cast<cairn_weights_format>(r.coin() ? (int32_t)r.below(4) : hostile_enum(r));
    t.note("keras_names=%d save_counter=%d format=%d", o_s.keras_names, o_s.save_counter, (int)fmt);
    const char* p = write_path(r, t);
    check(t, "cairn_checkpoint_export", cairn_checkpoint_export(r.coin(16) ? nullptr : ck, p, fmt, o), IA | IO | UN);
  }
  cairn_checkpoint_free(ck);
}

// ---- self-test targets: planted bugs that the harness must report ----

void st_crash(Rng&, Trial& t) {
  t.note("planted crash");
  volatile int* p = nullptr;
  *p = 1;
}
void st_hang(Rng&, Trial& t) {
  t.note("planted hang");
  for (;;) pause();
}
void st_internal(Rng&, Trial& t) {
  t.note("planted INTERNAL");
  check(t, "cairn_selftest", cairn_status_create(CAIRN_INTERNAL, "cairn_selftest: broken"), IA);
}
void st_unnamed(Rng&, Trial& t) {
  t.note("planted message without the function");
  check(t, "cairn_selftest", cairn_status_create(CAIRN_INVALID_ARGUMENT, "something was wrong"), IA);
}
void st_leak(Rng&, Trial& t) {
  t.note("planted leak");
  void* volatile p = malloc(77);
  memset(p, 1, 77);
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"options_init", t_inits},
      {"options_init2", t_inits2},
      {"context_create", t_context_create},
      {"context_create_vulkan", t_context_vulkan},
      {"variable_create", t_variable_create},
      {"checkpoint_set_options", t_checkpoint_options},
      {"checkpoint_manager_create", t_checkpoint_manager},
      {"tape_create", t_tape},
      {"optimizer_create", t_optimizer},
      {"schedules", t_schedules},
      {"layers", t_layers},
      {"function_create", t_function_create},
      {"function_load", t_function_load},
      {"function_export", t_function_export},
      {"records", t_records},
      {"summary_writer_create", t_summary_writer},
      {"profiler_start", t_profiler},
      {"datasets", t_datasets},
      {"checkpoint_reader", t_checkpoint_reader},
      {"weights", t_weights},
      {"checkpoint_restore_export", t_checkpoint_restore_export},
  };
  return all;
}
const std::vector<Target>& self_test_targets() {
  static const std::vector<Target> all = {{"SelfTest_crash", st_crash},
                                          {"SelfTest_hang", st_hang},
                                          {"SelfTest_internal", st_internal},
                                          {"SelfTest_unnamed", st_unnamed},
                                          {"SelfTest_leak", st_leak}};
  return all;
}

// ---- the known-problem list ----

struct Known {
  std::string target_glob, klass, reason;
  std::regex re;
};
std::vector<Known> g_known;

void load_known(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    if (!path.empty()) fprintf(stderr, "capi_fuzzer: no known list at %s (none used)\n", path.c_str());
    return;
  }
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    char tg[256], kl[64], re[2048];
    int used = 0;
    if (sscanf(line.c_str(), "%255s %63s %2047s %n", tg, kl, re, &used) < 3) continue;
    g_known.push_back({tg, kl, line.substr(used), std::regex(re)});
  }
}

// Problem classes: crash, hang, leak, code, unnamed, out, output. A `skip` entry keeps matching
// trials from running (its regex is searched in the trial's description).
const Known* known_for(const std::string& target, const std::string& klass, const std::string& text) {
  for (const Known& k : g_known) {
    if (fnmatch(k.target_glob.c_str(), target.c_str(), 0) != 0) continue;
    if (k.klass != "any" && k.klass != klass) continue;
    if (std::regex_search(text, k.re)) return &k;
  }
  return nullptr;
}

// ---- running ----

struct Shared {  // one per target, in shared memory
  volatile int progress;     // the trial now running
  volatile int done;         // trials finished
  volatile int ok, failed, problems, known, skipped;
  volatile uint64_t beat;    // bumps at each trial start
  char desc[Trial::kLiveSize];  // the running trial's description so far
};

Shared* g_shared = nullptr;

void emit(const std::string& s) {
  std::string line = s + "\n";
  ssize_t unused = write(1, line.data(), line.size());
  (void)unused;
}

std::string repro(const std::string& target, int trial) {
  char b[256];
  snprintf(b, sizeof b, "capi_fuzzer --seed=%" PRIu64 " --target=%s --trial=%d", g_opt.seed, target.c_str(), trial);
  return b;
}

Trial make_trial(const Target& tg, int k, Rng& r) {
  Trial t;
  t.target = tg.name;
  t.index = k;
  r = Rng(mix(mix(g_opt.seed, hash_str(tg.name)), static_cast<uint64_t>(k)));
  return t;
}

// Runs trials [from, n) of one target in this process.
void run_trials(const Target& tg, int from, int n, Shared* sh) {
  for (int k = from; k < n; ++k) {
    sh->progress = k;
    sh->desc[0] = 0;
    Trial::live = sh->desc;
    sh->beat = sh->beat + 1;
    Rng r(0);
    Trial t = make_trial(tg, k, r);
    // A dry run of the description for skip entries would need the generator twice; skip entries
    // match the target and the trial index instead ("trial=K").
    if (const Known* k2 = known_for(tg.name, "skip", "trial=" + std::to_string(k))) {
      (void)k2;
      sh->skipped = sh->skipped + 1;
      sh->done = sh->done + 1;
      continue;
    }
    tg.fn(r, t);
    if (t.problems.empty()) sh->ok = sh->ok + 1;
    for (const std::string& p : t.problems) {
      std::string klass = p.substr(0, p.find(':'));
      std::string text = t.desc + " => " + p;
      if (const Known* kn = known_for(tg.name, klass, text)) {
        sh->known = sh->known + 1;
        if (g_opt.show_known) emit("KNOWN " + std::string(tg.name) + " " + p + "  [" + kn->reason + "]");
        continue;
      }
      sh->problems = sh->problems + 1;
      emit("FAIL " + std::string(tg.name) + " " + p + "\n  repro: " + repro(tg.name, k) + "   # " + t.desc);
    }
    sh->done = sh->done + 1;
  }
}

// LeakSanitizer over everything this child allocated and dropped (the world stays reachable).
void leak_check(const Target& tg, int from, int n, Shared* sh) {
  if (!__lsan_do_recoverable_leak_check) return;
  if (__lsan_do_recoverable_leak_check()) {
    std::string what = "leak: trials " + std::to_string(from) + ".." + std::to_string(n - 1) + " leaked (report above)";
    if (known_for(tg.name, "leak", what)) {
      sh->known = sh->known + 1;
      return;
    }
    sh->problems = sh->problems + 1;
    emit("FAIL " + std::string(tg.name) + " " + what + "\n  repro: capi_fuzzer --seed=" + std::to_string(g_opt.seed) +
         " --target=" + tg.name + " --trials=" + std::to_string(n) + " --jobs=1   # leaks are found per child");
  }
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Child {
  pid_t pid = -1;
  size_t target = 0;
  int from = 0;
  double last_change = 0;
  uint64_t last_beat = 0;
  double started = 0;
};

pid_t spawn(const Target& tg, int from, Shared* sh) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    build_world();
    run_trials(tg, from, g_opt.trials, sh);
    leak_check(tg, from, g_opt.trials, sh);
    std::string cmd = "rm -rf '" + g_w.dir + "'";
    if (system(cmd.c_str()) != 0) {
    }
    cairn_context_free(g_w.ctx);
    _exit(0);
  }
  return pid;
}

int run_all(const std::vector<Target>& tgs) {
  size_t n = tgs.size();
  g_shared = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared) * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  memset(g_shared, 0, sizeof(Shared) * n);
  std::vector<int> crashes(n, 0), hangs(n, 0);
  std::vector<double> started(n, 0), elapsed(n, 0);
  std::vector<bool> budget_hit(n, false);
  size_t next = 0;
  std::vector<Child> running;
  double t0 = now();
  auto start_target = [&](size_t i, int from) {
    Child c;
    c.target = i;
    c.from = from;
    c.pid = spawn(tgs[i], from, &g_shared[i]);
    c.started = c.last_change = now();
    c.last_beat = g_shared[i].beat;
    if (started[i] == 0) started[i] = c.started;
    running.push_back(c);
  };
  while (next < n || !running.empty()) {
    while (next < n && static_cast<int>(running.size()) < g_opt.jobs) start_target(next++, 0);
    usleep(5000);
    for (size_t ci = 0; ci < running.size();) {
      Child c = running[ci];
      Shared* sh = &g_shared[c.target];
      const Target& tg = tgs[c.target];
      int st = 0;
      pid_t w = waitpid(c.pid, &st, WNOHANG);
      double t = now();
      if (sh->beat != c.last_beat) running[ci].last_beat = c.last_beat = sh->beat, running[ci].last_change = c.last_change = t;
      bool over_budget = t - started[c.target] > g_opt.target_seconds;
      if (w == 0 && t - c.last_change > g_opt.trial_timeout) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &st, 0);
        int k = sh->progress;
        std::string what = "hang: no progress for " + std::to_string((int)g_opt.trial_timeout) + " s";
        std::string desc(sh->desc, strnlen(sh->desc, sizeof sh->desc));
        if (known_for(tg.name, "hang", desc + " => " + what)) sh->known = sh->known + 1;
        else {
          sh->problems = sh->problems + 1;
          emit("FAIL " + std::string(tg.name) + " " + what + "\n  repro: " + repro(tg.name, k) + "   # " + desc);
        }
        hangs[c.target]++;
        sh->done = sh->done + 1;
        int resume = k + 1;
        running.erase(running.begin() + ci);
        if (resume < g_opt.trials && !over_budget) start_target(c.target, resume);
        else elapsed[c.target] = now() - started[c.target], budget_hit[c.target] = over_budget;
        continue;
      }
      if (w == 0 && over_budget) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, &st, 0);
        budget_hit[c.target] = true;
        elapsed[c.target] = t - started[c.target];
        running.erase(running.begin() + ci);
        continue;
      }
      if (w == c.pid) {
        bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        int k = sh->progress;
        if (!clean) {
          std::string what = WIFSIGNALED(st) ? "crash: signal " + std::to_string(WTERMSIG(st))
                                             : "crash: exit status " + std::to_string(WEXITSTATUS(st));
          std::string desc(sh->desc, strnlen(sh->desc, sizeof sh->desc));
          if (known_for(tg.name, "crash", desc + " => " + what)) sh->known = sh->known + 1;
          else {
            sh->problems = sh->problems + 1;
            emit("FAIL " + std::string(tg.name) + " " + what + " (sanitizer report above)\n  repro: " + repro(tg.name, k) +
                 "   # " + desc);
          }
          crashes[c.target]++;
          sh->done = sh->done + 1;
        }
        running.erase(running.begin() + ci);
        if (!clean && k + 1 < g_opt.trials && !over_budget) start_target(c.target, k + 1);
        else elapsed[c.target] = t - started[c.target];
        continue;
      }
      ++ci;
    }
  }
  int total_trials = 0, total_problems = 0, total_known = 0, total_ok = 0, total_failed_calls = 0, total_skipped = 0;
  printf("%-28s %7s %6s %8s %6s %6s %6s %7s\n", "target", "trials", "clean", "problems", "known", "crash", "hang",
         "seconds");
  for (size_t i = 0; i < n; ++i) {
    Shared& s = g_shared[i];
    printf("%-28s %7d %6d %8d %6d %6d %6d %7.1f%s\n", tgs[i].name, s.done, s.ok, s.problems, s.known, crashes[i],
           hangs[i], elapsed[i], budget_hit[i] ? "  stopped: target time budget" : "");
    total_trials += s.done;
    total_problems += s.problems;
    total_known += s.known;
    total_ok += s.ok;
    total_skipped += s.skipped;
  }
  (void)total_failed_calls;
  printf("capi_fuzzer seed %" PRIu64 ": %zu targets, %d trials (%d clean, %d skipped), %d known, %d new problems, %.1f s\n",
         g_opt.seed, n, total_trials, total_ok, total_skipped, total_known, total_problems, now() - t0);
  fflush(stdout);
  return total_problems ? 1 : 0;
}

int self_test() {
  // Each planted bug must be reported as its class; nothing is known here.
  g_known.clear();
  int saved_trials = g_opt.trials;
  double saved_timeout = g_opt.trial_timeout;
  g_opt.trials = 2;
  g_opt.trial_timeout = 2;
  const auto& tgs = self_test_targets();
  int failures = 0;
  for (const Target& tg : tgs) {
    if (std::string(tg.name) == "SelfTest_leak" && !__lsan_do_recoverable_leak_check) {
      printf("self-test %s: skipped (no LeakSanitizer in this build)\n", tg.name);
      continue;
    }
    std::vector<Target> one = {tg};
    int pipefd[2];
    if (pipe(pipefd) != 0) return 2;
    fflush(stdout);
    int saved = dup(1);
    dup2(pipefd[1], 1);
    close(pipefd[1]);
    int rc = run_all(one);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    std::string out;
    char buf[4096];
    ssize_t got;
    while ((got = read(pipefd[0], buf, sizeof buf)) > 0) out.append(buf, got);
    close(pipefd[0]);
    std::string klass = std::string(tg.name).substr(9);
    if (klass == "internal") klass = "code";
    bool found = rc == 1 && out.find("FAIL " + std::string(tg.name) + " " + klass + ":") != std::string::npos &&
                 out.find("repro: capi_fuzzer") != std::string::npos;
    printf("self-test %s: %s\n", tg.name, found ? "reported" : "NOT REPORTED");
    if (!found) {
      printf("%s\n", out.c_str());
      ++failures;
    }
  }
  g_opt.trials = saved_trials;
  g_opt.trial_timeout = saved_timeout;
  return failures ? 1 : 0;
}

bool parse_flag(const char* arg, const char* name, std::string* value) {
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (parse_flag(argv[i], "--seed", &v)) g_opt.seed = strtoull(v.c_str(), nullptr, 10);
    else if (parse_flag(argv[i], "--trials", &v)) g_opt.trials = atoi(v.c_str());
    else if (parse_flag(argv[i], "--target", &v)) g_opt.only = v;
    else if (parse_flag(argv[i], "--trial", &v)) g_opt.trial = atoi(v.c_str());
    else if (parse_flag(argv[i], "--known", &v)) g_opt.known_path = v;
    else if (parse_flag(argv[i], "--jobs", &v)) g_opt.jobs = atoi(v.c_str()) > 0 ? atoi(v.c_str()) : 1;
    else if (parse_flag(argv[i], "--trial-timeout", &v)) g_opt.trial_timeout = atof(v.c_str());
    else if (parse_flag(argv[i], "--target-seconds", &v)) g_opt.target_seconds = atof(v.c_str());
    else if (!strcmp(argv[i], "--list")) g_opt.list = true;
    else if (!strcmp(argv[i], "--self-test")) g_opt.self_test = true;
    else if (!strcmp(argv[i], "--show-known")) g_opt.show_known = true;
    else {
      fprintf(stderr,
              "usage: capi_fuzzer [--seed=N] [--trials=N] [--target=GLOB] [--trial=K] [--known=FILE] [--jobs=N]\n"
              "                   [--trial-timeout=S] [--target-seconds=S] [--list] [--self-test] [--show-known]\n");
      return 2;
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (g_opt.self_test) return self_test();
  load_known(g_opt.known_path);
  std::vector<Target> chosen;
  for (const Target& tg : targets())
    if (g_opt.only.empty() || fnmatch(g_opt.only.c_str(), tg.name, 0) == 0) chosen.push_back(tg);
  for (const Target& tg : self_test_targets())
    if (!g_opt.only.empty() && fnmatch(g_opt.only.c_str(), tg.name, 0) == 0) chosen.push_back(tg);
  if (g_opt.list) {
    for (const Target& tg : chosen) printf("%s\n", tg.name);
    return 0;
  }
  if (chosen.empty()) {
    fprintf(stderr, "capi_fuzzer: no target matches '%s'\n", g_opt.only.c_str());
    return 2;
  }
  if (g_opt.trial >= 0) {
    // Replay one trial in this process (no fork: runs under gdb too); skip entries do not apply.
    build_world();
    Trial::echo = true;
    int problems = 0;
    for (const Target& tg : chosen) {
      Rng r(0);
      Trial t = make_trial(tg, g_opt.trial, r);
      tg.fn(r, t);
      printf("%s trial %d: %s\n", tg.name, g_opt.trial, t.desc.c_str());
      for (const std::string& p : t.problems) printf("  problem: %s\n", p.c_str()), ++problems;
      if (t.problems.empty()) printf("  no problem\n");
    }
    std::string cmd = "rm -rf '" + g_w.dir + "'";
    if (system(cmd.c_str()) != 0) {
    }
    return problems ? 1 : 0;
  }
  return run_all(chosen);
}
