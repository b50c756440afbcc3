// The op fuzzer: every op of the registry, called through the C API (cairn_op_run) with hostile
// inputs and attributes, each op in its own child process. See tests/fuzz/README.md ("Op fuzzer").
//
// The schemas come from the registry alone (OpRegistry::list(), the same data as
// cairn_op_registry_json), so an op is fuzzed the day it is registered. Each trial is generated
// from (seed, op, trial index) only, so `--op=X --trial=K` replays one trial in this process.
//
// Checks: no crash, sanitizer report or hang; a failure is a status with one of the codes
// cairn_op_run documents (INVALID_ARGUMENT, UNIMPLEMENTED, RESOURCE_EXHAUSTED) whose message names the
// op, and leaves `outputs` untouched; a success fills every output with a well-formed tensor
// (valid dtype, the dtype the schema implies, dims >= 0, element count and byte size matching the
// shape, readable, bools 0 or 1).
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cairn/cairn.h"
#include "runtime/ops/registry.h"

namespace {

using cairn::AttrDef;
using cairn::AttrKind;
using cairn::DType;
using cairn::OpDef;

// ---- options ----

struct Options {
  std::string device = "cpu";
  uint64_t seed = 1;
  int trials = 300;
  std::string only_op;        // --op: one op (or a comma-separated list)
  int trial = -1;             // --trial: replay one trial in this process
  std::string known_path = "tests/fuzz/op_fuzzer_known.txt";
  int jobs = 2;
  double trial_timeout = 10;  // seconds without progress: a hang
  double op_seconds = 60;     // wall budget of one op (all its trials)
  bool verbose = false;
  bool list = false;
  bool show_known = false;
  bool parity = true;  // off a CPU: compare each trial with the CPU (--no-parity turns it off)
  size_t alloc_cap = size_t{128} << 20;  // host allocations above this fail (RESOURCE_EXHAUSTED)
};
Options opt;

// ---- deterministic randomness (no std distributions: their output differs between libraries) ----

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

struct Rng {
  uint64_t state;
  explicit Rng(uint64_t s) : state(s) {}
  uint64_t next() { return splitmix(state); }
  int64_t below(int64_t n) { return n <= 0 ? 0 : static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  int64_t range(int64_t lo, int64_t hi) { return lo + below(hi - lo + 1); }  // inclusive
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(below(static_cast<int64_t>(v.size())))]; }
};

uint64_t hash_str(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// ---- a trial: plain data, generated without a context ----

const std::vector<int> kDtypes = {1, 2, 3, 4, 5, 6, 8, 9, 10, 14, 19};  // every creatable dtype
const int64_t kMaxElements = int64_t{1} << 18;                       // per generated tensor

enum class Fill { Zeros, Small, Normal, Extreme, Mixed };
const char* fill_name(Fill f) {
  switch (f) {
    case Fill::Zeros: return "zeros";
    case Fill::Small: return "small";
    case Fill::Normal: return "normal";
    case Fill::Extreme: return "extreme";
    case Fill::Mixed: return "mixed";
  }
  return "?";
}

struct InputSpec {
  int dtype = 1;
  std::vector<int64_t> shape;
  Fill fill = Fill::Normal;
  bool on_cpu = false;  // on a Vulkan context: copied to the CPU (inputs on different devices)
  std::vector<unsigned char> data;
  int64_t elements() const {
    for (int64_t d : shape)
      if (d == 0) return 0;
    int64_t n = 1;
    for (int64_t d : shape) n = n > INT64_MAX / d ? INT64_MAX : n * d;  // saturates: such shapes are refused
    return n;
  }
};

struct AttrSpec {
  std::string name;
  int kind = 1;  // cairn_attr_kind, possibly invalid
  int64_t i = 0;
  double f = 0;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::string s;
  int dtype = 0;
};

struct Trial {
  const OpDef* def = nullptr;
  int index = 0;
  std::vector<InputSpec> inputs;
  std::vector<AttrSpec> attrs;
  int wrong_outputs = 0;  // added to the output count the registry reports
  std::string describe() const;
};

// ---- value generation ----

uint16_t f32_to_f16_bits(float f) {
  // Through the library-independent route: IEEE conversion by hand is long; use _Float16 when the
  // compiler has it, else truncate through bfloat16-like rounding (only the bit patterns matter).
#if defined(__FLT16_MAX__)
  _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u;
  int exp = static_cast<int>((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffffu;
  if (((u >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (exp <= 0) return static_cast<uint16_t>(sign);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13));
#endif
}
uint16_t f32_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

double extreme_float(Rng& r) {
  static const std::vector<double> v = {NAN, -NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e38, -1e38, 3.4e38, 1e308,
                                        -1e308, 1e-45, 1e-310, 5e-324, 65504, 65520, -65504, 1, -1, 2147483648.0,
                                        9.3e18, -9.3e18};
  return r.pick(v);
}
int64_t extreme_int(Rng& r) {
  static const std::vector<int64_t> v = {0, 1, -1, INT8_MIN, INT8_MAX, 255, INT16_MIN, INT16_MAX, INT32_MIN, INT32_MAX,
                                         int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 62, INT64_MIN, INT64_MAX};
  return r.pick(v);
}

void put_element(std::vector<unsigned char>& out, int dtype, double fv, int64_t iv, bool use_int) {
  auto push = [&](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + n);
  };
  double x = use_int ? static_cast<double>(iv) : fv;
  int64_t k = use_int ? iv : (std::isfinite(fv) && std::fabs(fv) < 9e18 ? static_cast<int64_t>(fv) : 0);
  switch (dtype) {
    case 1: { float f = static_cast<float>(x); push(&f, 4); break; }
    case 2: { push(&x, 8); break; }
    case 3: { int32_t v = static_cast<int32_t>(static_cast<uint32_t>(k)); push(&v, 4); break; }
    case 4: { uint8_t v = static_cast<uint8_t>(k); push(&v, 1); break; }
    case 5: { int16_t v = static_cast<int16_t>(static_cast<uint16_t>(k)); push(&v, 2); break; }
    case 6: { int8_t v = static_cast<int8_t>(static_cast<uint8_t>(k)); push(&v, 1); break; }
    case 8: { float c[2] = {static_cast<float>(x), static_cast<float>(use_int ? 0.0 : -x)}; push(c, 8); break; }
    case 9: { push(&k, 8); break; }
    case 10: { uint8_t v = static_cast<uint8_t>(k & 0xff); push(&v, 1); break; }  // any byte: stored as 0/1
    case 14: { uint16_t v = f32_to_bf16_bits(static_cast<float>(x)); push(&v, 2); break; }
    case 19: { uint16_t v = f32_to_f16_bits(static_cast<float>(x)); push(&v, 2); break; }
    default: break;
  }
}

void fill_data(InputSpec& in, Rng& r) {
  int64_t n = in.elements();
  in.data.clear();
  in.data.reserve(static_cast<size_t>(n) * 8);
  for (int64_t e = 0; e < n; ++e) {
    Fill f = in.fill == Fill::Mixed ? static_cast<Fill>(r.below(4)) : in.fill;
    switch (f) {
      case Fill::Zeros: put_element(in.data, in.dtype, 0, 0, true); break;
      case Fill::Small: put_element(in.data, in.dtype, 0, r.range(-3, 5), true); break;
      case Fill::Normal: {
        double u = r.unit() * 4 - 2;
        put_element(in.data, in.dtype, u, 0, false);
        break;
      }
      default:
        if (r.chance(0.5)) put_element(in.data, in.dtype, extreme_float(r), 0, false);
        else put_element(in.data, in.dtype, 0, extreme_int(r), true);
        break;
    }
  }
}

bool is_int_dtype(int d) { return d == 3 || d == 4 || d == 5 || d == 6 || d == 9; }

// Inputs whose names say they hold indices, axes or shapes get short integer tensors of small values.
bool index_like(const std::string& name) {
  static const char* words[] = {"axis", "dim", "perm", "shape", "multiples", "paddings", "size", "begin", "end",
                                "strides", "indices", "segment", "fft_length", "num", "k", "depth", "range",
                                "start", "limit", "delta", "seed", "ids", "split", "count"};
  for (const char* w : words)
    if (name.find(w) != std::string::npos) return true;
  return false;
}

std::vector<int64_t> random_shape(Rng& r, int rank) {
  std::vector<int64_t> s(static_cast<size_t>(rank));
  for (auto& d : s) d = r.chance(0.08) ? 0 : r.range(1, 5);
  return s;
}

// A base shape for the trial: ranks 0-5, dims small, sometimes zero, sometimes large.
std::vector<int64_t> base_shape(Rng& r) {
  static const std::vector<int> ranks = {0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5};
  int rank = r.pick(ranks);
  std::vector<int64_t> s = random_shape(r, rank);
  if (rank > 0 && r.chance(0.12)) {
    // A large dimension: allocatable (the others become 1) or huge beside a zero.
    static const std::vector<int64_t> big = {1000, 4096, 65536, int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62,
                                             INT64_MAX};
    int64_t b = r.pick(big);
    size_t at = static_cast<size_t>(r.below(rank));
    if (b <= 65536) {
      for (auto& d : s) d = d == 0 ? 0 : 1;
      s[at] = b;
    } else if (rank >= 2) {
      s[at] = b;
      s[(at + 1) % s.size()] = 0;
    }
  }
  return s;
}

std::vector<int64_t> variant_shape(Rng& r, const std::vector<int64_t>& base) {
  switch (r.below(10)) {
    case 0: return {};  // scalar
    case 1: {           // broadcast-compatible: some dims 1, maybe fewer leading dims
      std::vector<int64_t> s = base;
      for (auto& d : s)
        if (r.chance(0.4)) d = 1;
      if (!s.empty() && r.chance(0.3)) s.erase(s.begin());
      return s;
    }
    case 2: return random_shape(r, static_cast<int>(r.range(0, 5)));
    case 3: {  // one more or one less dim
      std::vector<int64_t> s = base;
      if (!s.empty() && r.chance(0.5)) s.pop_back();
      else s.push_back(r.range(1, 4));
      return s;
    }
    default: return base;
  }
}

void clamp_elements(std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d == 0) return;
    if (n > kMaxElements / d) n = kMaxElements + 1;
    else n *= d;
  }
  if (n > kMaxElements)
    for (auto& d : s) d = std::min<int64_t>(d, 4);
}

// ---- attributes ----

const std::vector<int64_t> kHostileInts = {-1, -2, INT32_MIN, int64_t{1} << 31, INT32_MAX, int64_t{1} << 32,
                                           int64_t{1} << 40, int64_t{1} << 62, INT64_MAX, INT64_MIN, 0};
const std::vector<double> kHostileFloats = {NAN, INFINITY, -INFINITY, 1e308, -1e308, 5e-324, -0.0, -1, 0, 1e-30};
const std::vector<int> kHostileDtypes = {0, 7, 11, 13, 35, 63, 1000, 0x7fffffff};

void valid_value(Rng& r, const AttrDef& a, AttrSpec& v, int rank) {
  switch (a.kind) {
    case AttrKind::Int: {
      int64_t lo = a.min_int > -2 ? a.min_int : -2;
      if (lo > INT64_MAX - 6) lo = INT64_MAX - 6;
      v.i = r.range(lo, lo + 6);
      break;
    }
    case AttrKind::Float: v.f = r.pick(std::vector<double>{0, 0.5, 1, 2, -1, 1e-3, 0.9}); break;
    case AttrKind::Bool: v.i = r.below(2); break;
    case AttrKind::Ints: {
      int64_t n = r.chance(0.5) ? rank : r.range(0, 5);
      if (r.chance(0.2)) n = 4;
      for (int64_t k = 0; k < n; ++k) v.ints.push_back(r.chance(0.5) ? r.range(1, 3) : r.range(-rank, rank + 1));
      break;
    }
    case AttrKind::String:
      if (!a.allowed_strings.empty()) v.s = r.pick(a.allowed_strings);
      else v.s = r.pick(std::vector<std::string>{"", "SAME", "VALID", "NHWC", "x", "abc:0"});
      break;
    case AttrKind::DType: {
      std::vector<int> ok;
      for (int d : kDtypes)
        if (a.allowed_dtypes == 0 || cairn::dtype_in(a.allowed_dtypes, static_cast<DType>(d))) ok.push_back(d);
      v.dtype = ok.empty() ? 1 : r.pick(ok);
      break;
    }
    case AttrKind::Floats: {
      int64_t n = r.range(0, 5);
      for (int64_t k = 0; k < n; ++k) v.floats.push_back(r.pick(std::vector<double>{0, 0.5, 1, 2, -1, 3}));
      break;
    }
  }
}

void hostile_value(Rng& r, AttrSpec& v) {
  switch (v.kind) {
    case 1: v.i = r.pick(kHostileInts); break;
    case 2: v.f = r.pick(kHostileFloats); break;
    case 3: v.i = r.pick(std::vector<int64_t>{2, -1, INT64_MAX, 256}); break;
    case 4: {
      switch (r.below(4)) {
        case 0: v.ints.clear(); break;
        case 1: v.ints.assign(static_cast<size_t>(r.pick(std::vector<int64_t>{9, 100, 70000})), 1); break;
        default: {
          if (v.ints.empty()) v.ints.push_back(1);
          for (auto& x : v.ints)
            if (r.chance(0.6)) x = r.pick(kHostileInts);
        }
      }
      break;
    }
    case 5:
      switch (r.below(3)) {
        case 0: v.s = ""; break;
        case 1: v.s.assign(70000, 'A'); break;
        default: v.s = std::string("\xff\xfe") + v.s + "\x01"; break;
      }
      break;
    case 6: v.dtype = r.pick(kHostileDtypes); break;
    case 7:
      switch (r.below(3)) {
        case 0: v.floats.clear(); break;
        case 1: v.floats.assign(70000, 1.0); break;
        default:
          if (v.floats.empty()) v.floats.push_back(1);
          for (auto& x : v.floats) x = r.pick(kHostileFloats);
      }
      break;
    default: break;
  }
}

// Fills a value of kind `kind` that is plausible for that kind (used for mistyped attributes).
void value_of_kind(Rng& r, int kind, AttrSpec& v) {
  v.kind = kind;
  switch (kind) {
    case 1: v.i = r.range(-1, 3); break;
    case 2: v.f = 1.5; break;
    case 3: v.i = r.below(2); break;
    case 4: v.ints = {1, 2}; break;
    case 5: v.s = "SAME"; break;
    case 6: v.dtype = 1; break;
    case 7: v.floats = {0.5}; break;
    default: v.i = 1; break;
  }
}

// ---- trial generation ----

Trial make_trial(const OpDef& def, int index) {
  uint64_t s = opt.seed ^ hash_str(def.name) ^ (static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ull);
  Rng r(splitmix(s));
  Trial t;
  t.def = &def;
  t.index = index;

  // One dtype per type attribute, mostly an allowed one.
  std::map<std::string, int> type_choice;
  for (const AttrDef& a : def.attrs) {
    if (a.kind != AttrKind::DType) continue;
    std::vector<int> ok;
    for (int d : kDtypes)
      if (a.allowed_dtypes == 0 || cairn::dtype_in(a.allowed_dtypes, static_cast<DType>(d))) ok.push_back(d);
    type_choice[a.name] = (ok.empty() || r.chance(0.08)) ? r.pick(kDtypes) : r.pick(ok);
  }

  // Input count: right (variadic: 1-4 values) or wrong.
  size_t fixed = def.inputs.size() - (def.has_variadic_input() ? 1 : 0);
  size_t n = fixed + (def.has_variadic_input() ? static_cast<size_t>(r.range(1, 4)) : 0);
  if (r.chance(0.05)) {
    int64_t delta = r.chance(0.5) ? 1 : -1;
    n = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(n) + delta));
  }
  if (r.chance(0.01)) n = 0;

  std::vector<int64_t> base = base_shape(r);
  for (size_t i = 0; i < n; ++i) {
    const cairn::ArgDef* arg = def.inputs.empty() ? nullptr : &def.inputs[std::min(i, def.inputs.size() - 1)];
    InputSpec in;
    if (arg && !arg->type_attr.empty() && type_choice.count(arg->type_attr)) in.dtype = type_choice[arg->type_attr];
    else if (arg && arg->type_attr.empty()) in.dtype = static_cast<int>(arg->fixed_dtype);
    else in.dtype = r.pick(kDtypes);
    if (r.chance(0.04)) in.dtype = r.pick(kDtypes);
    if (in.dtype == 7 || in.dtype == 0) in.dtype = 1;

    bool idx = arg && is_int_dtype(in.dtype) && index_like(arg->name) && !r.chance(0.15);
    if (idx) {
      switch (r.below(4)) {
        case 0: in.shape = {}; break;
        case 1: in.shape = {static_cast<int64_t>(base.size())}; break;
        case 2: in.shape = {static_cast<int64_t>(base.size()), 2}; break;
        default: in.shape = {r.range(0, 3)}; break;
      }
      in.fill = r.chance(0.8) ? Fill::Small : Fill::Extreme;
    } else {
      in.shape = variant_shape(r, base);
      static const std::vector<Fill> fills = {Fill::Zeros, Fill::Small, Fill::Small, Fill::Normal, Fill::Normal,
                                              Fill::Normal, Fill::Extreme, Fill::Mixed};
      in.fill = r.pick(fills);
    }
    clamp_elements(in.shape);
    in.on_cpu = opt.device != "cpu" && r.chance(0.02);
    fill_data(in, r);
    t.inputs.push_back(std::move(in));
  }

  // Attributes: each set or left to its default; valid, hostile or of the wrong kind.
  int rank = static_cast<int>(base.size());
  for (const AttrDef& a : def.attrs) {
    bool required = !a.has_default && !a.inferred;
    bool include = a.inferred ? r.chance(0.08) : required ? r.chance(0.95) : r.chance(0.4);
    if (!include) continue;
    AttrSpec v;
    v.name = a.name;
    v.kind = static_cast<int>(a.kind);
    if (a.inferred) {
      v.dtype = r.chance(0.7) && type_choice.count(a.name) ? type_choice[a.name] : r.pick(kDtypes);
    } else {
      valid_value(r, a, v, rank);
    }
    double p = r.unit();
    if (p < 0.2) {
      hostile_value(r, v);
    } else if (p < 0.27) {
      AttrSpec w;
      w.name = a.name;
      int kind = static_cast<int>(r.range(1, 7));
      if (kind == static_cast<int>(a.kind)) kind = kind % 7 + 1;
      value_of_kind(r, kind, w);
      v = w;
    } else if (p < 0.285) {
      // Invalid kinds inside the enum's range: C++ reads a negative value of cairn_attr_kind (whose
      // range is 0..2^31-1) as undefined behaviour before any check could refuse it.
      v.kind = r.pick(std::vector<int>{0, 8, 99, 0x7fffffff});
    }
    t.attrs.push_back(std::move(v));
  }
  if (r.chance(0.03)) {  // an attribute the schema lacks
    AttrSpec v;
    value_of_kind(r, static_cast<int>(r.range(1, 7)), v);
    v.name = r.chance(0.5) ? "no_such_attr" : "";
    t.attrs.push_back(std::move(v));
  }
  if (!t.attrs.empty() && r.chance(0.03)) t.attrs.push_back(t.attrs[static_cast<size_t>(r.below(static_cast<int64_t>(t.attrs.size())))]);
  if (r.chance(0.03)) t.wrong_outputs = r.chance(0.5) ? 1 : -1;
  return t;
}

// ---- description (the repro line's payload) ----

std::string fmt_double(double d) {
  if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

std::string describe_input(const InputSpec& in) {
  std::ostringstream o;
  o << cairn_dtype_name(static_cast<cairn_dtype>(in.dtype)) << "[";
  for (size_t k = 0; k < in.shape.size(); ++k) o << (k ? "," : "") << in.shape[k];
  o << "]";
  int64_t n = in.elements();
  if (n > 0 && n <= 8 && (is_int_dtype(in.dtype) || in.dtype == 10)) {
    size_t es = cairn_dtype_size(static_cast<cairn_dtype>(in.dtype));
    o << "=[";
    for (int64_t e = 0; e < n; ++e) {
      const unsigned char* p = in.data.data() + static_cast<size_t>(e) * es;
      int64_t v = 0;
      switch (in.dtype) {
        case 3: { int32_t x; std::memcpy(&x, p, 4); v = x; break; }
        case 4: v = *p; break;
        case 5: { int16_t x; std::memcpy(&x, p, 2); v = x; break; }
        case 6: v = static_cast<int8_t>(*p); break;
        case 9: std::memcpy(&v, p, 8); break;
        case 10: v = *p; break;
      }
      o << (e ? "," : "") << v;
    }
    o << "]";
  } else {
    o << ":" << fill_name(in.fill);
  }
  if (in.on_cpu) o << "@cpu";
  return o.str();
}

const char* kind_name(int k) {
  static const char* names[] = {"KIND0", "INT", "FLOAT", "BOOL", "INTS", "STRING", "DTYPE", "FLOATS"};
  return k >= 0 && k <= 7 ? names[k] : "KIND?";
}

std::string describe_attr(const AttrSpec& a) {
  std::ostringstream o;
  o << (a.name.empty() ? "''" : a.name) << "=" << kind_name(a.kind);
  if (a.kind < 1 || a.kind > 7) o << a.kind;
  switch (a.kind) {
    case 1: case 3: o << "(" << a.i << ")"; break;
    case 2: o << "(" << fmt_double(a.f) << ")"; break;
    case 4: {
      if (a.ints.size() > 8) o << "(len=" << a.ints.size() << ")";
      o << "[";
      for (size_t k = 0; k < a.ints.size() && k < 8; ++k) o << (k ? "," : "") << a.ints[k];
      o << (a.ints.size() > 8 ? ",...]" : "]");
      break;
    }
    case 5:
      if (a.s.size() > 32) o << "(len=" << a.s.size() << ")";
      else {
        o << "(\"";
        for (unsigned char c : a.s) {
          if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') o << c;
          else { char b[8]; snprintf(b, sizeof b, "\\x%02x", c); o << b; }
        }
        o << "\")";
      }
      break;
    case 6: o << "(" << a.dtype << ")"; break;
    case 7: {
      if (a.floats.size() > 8) o << "(len=" << a.floats.size() << ")";
      o << "[";
      for (size_t k = 0; k < a.floats.size() && k < 8; ++k) o << (k ? "," : "") << fmt_double(a.floats[k]);
      o << (a.floats.size() > 8 ? ",...]" : "]");
      break;
    }
  }
  return o.str();
}

std::string Trial::describe() const {
  std::ostringstream o;
  o << def->name << "(";
  for (size_t i = 0; i < inputs.size(); ++i) o << (i ? ", " : "") << describe_input(inputs[i]);
  o << ") {";
  for (size_t i = 0; i < attrs.size(); ++i) o << (i ? ", " : "") << describe_attr(attrs[i]);
  o << "}";
  if (wrong_outputs) o << " outputs" << (wrong_outputs > 0 ? "+" : "") << wrong_outputs;
  return o.str();
}

std::string repro(const Trial& t) {
  std::ostringstream o;
  o << "op_fuzzer --device=" << opt.device << " --seed=" << opt.seed << " --op=" << t.def->name
    << " --trial=" << t.index << "   # " << t.describe();
  return o.str();
}

// ---- the known-issue list ----

struct Known {
  std::string device, op, cls;
  std::regex re;
  std::string pattern, reason;
  int line = 0;
};
std::vector<Known> known;

bool glob_match(const std::string& pat, const std::string& s) { return fnmatch(pat.c_str(), s.c_str(), 0) == 0; }

void load_known(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    fprintf(stderr, "op_fuzzer: cannot read the known-issue list %s\n", path.c_str());
    exit(2);
  }
  static const std::vector<std::string> classes = {"skip", "crash", "hang", "code", "unnamed", "output", "parity", "any"};
  std::string line;
  int no = 0;
  while (std::getline(f, line)) {
    ++no;
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    std::istringstream in(line);
    Known k;
    k.line = no;
    in >> k.device >> k.op >> k.cls >> k.pattern;
    std::getline(in, k.reason);
    k.reason.erase(0, k.reason.find_first_not_of(" \t"));
    if (k.pattern.empty() || k.reason.empty() ||
        std::find(classes.begin(), classes.end(), k.cls) == classes.end()) {
      fprintf(stderr, "%s:%d: expected `DEVICE OP CLASS REGEX REASON` (CLASS one of skip crash hang code unnamed output parity any)\n",
              path.c_str(), no);
      exit(2);
    }
    try {
      k.re = std::regex(k.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fprintf(stderr, "%s:%d: bad regex %s: %s\n", path.c_str(), no, k.pattern.c_str(), e.what());
      exit(2);
    }
    known.push_back(std::move(k));
  }
}

// The first entry that covers a problem of class `cls` on `text` ("<description> => <outcome>").
const Known* find_known(const std::string& op, const std::string& cls, const std::string& text) {
  for (const Known& k : known) {
    if (!glob_match(k.device, opt.device) || !glob_match(k.op, op)) continue;
    if (cls == "skip" ? k.cls != "skip" : (k.cls != cls && k.cls != "any")) continue;
    if (std::regex_search(text, k.re)) return &k;
  }
  return nullptr;
}

// ---- running a trial ----

// Host allocations go through these hooks: one above opt.alloc_cap fails, as real memory would.
void* fuzz_allocate(void*, size_t size, size_t alignment) {
  if (size > opt.alloc_cap) return nullptr;
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  return aligned_alloc(alignment, rounded ? rounded : alignment);
}
void fuzz_deallocate(void*, void* p, size_t) { free(p); }

cairn_context* make_context(const std::string& device = opt.device) {
  static cairn_allocator alloc = {fuzz_allocate, fuzz_deallocate, nullptr, nullptr};
  cairn_context_options o = CAIRN_CONTEXT_OPTIONS_INIT;
  o.device = device.c_str();
  o.num_threads = 1;
  o.log_level = CAIRN_LOG_ERROR;
  o.allocator = &alloc;
  cairn_context* ctx = nullptr;
  cairn_status* s = cairn_context_create(&o, &ctx);
  if (s) {
    cairn_code c = cairn_status_code(s);
    fprintf(stderr, "op_fuzzer: cannot create a %s context: %s\n", device.c_str(), cairn_status_message(s));
    cairn_status_free(s);
    exit(c == CAIRN_UNAVAILABLE || c == CAIRN_NOT_FOUND ? 77 : 2);
  }
  return ctx;
}

const char* code_name(cairn_code c) {
  static const char* n[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                            "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                            "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"};
  return c >= 0 && c <= 15 ? n[c] : "CODE?";
}

struct Outcome {
  enum Kind { Ok, Error, Skipped, Setup } kind = Ok;
  std::string problem_class;  // "" when the trial passed every check
  std::string text;           // what happened
  cairn_code code = CAIRN_OK;
  std::string signature;      // a success's outputs: "float32[2,3] int64[]" (for the parity check)
};

// The dtype the schema implies for output `arg`, or 0 when the call leaves it open.
int expected_dtype(const Trial& t, const cairn::ArgDef& arg) {
  if (arg.type_attr.empty()) return static_cast<int>(arg.fixed_dtype);
  int found = 0, count = 0;
  for (const AttrSpec& a : t.attrs)
    if (a.name == arg.type_attr) {
      ++count;
      found = a.kind == 6 ? a.dtype : -1;
    }
  if (count > 1 || found < 0) return 0;
  if (found) return found;
  int ai = t.def->attr_index(arg.type_attr);
  if (ai < 0) return 0;
  const AttrDef& ad = t.def->attrs[static_cast<size_t>(ai)];
  if (ad.inferred) {
    for (size_t i = 0; i < t.inputs.size(); ++i) {
      const cairn::ArgDef& in = t.def->inputs[std::min(i, t.def->inputs.size() - 1)];
      if (in.type_attr == arg.type_attr) return t.inputs[i].dtype;
    }
    return 0;
  }
  return ad.has_default ? static_cast<int>(ad.default_dtype) : 0;
}

std::string check_output(const Trial& t, cairn_tensor* out, size_t index, size_t n_outputs) {
  char buf[256];
  if (!out) {
    snprintf(buf, sizeof buf, "output %zu is NULL after success", index);
    return buf;
  }
  int dt = cairn_tensor_dtype(out);
  size_t es = cairn_dtype_size(static_cast<cairn_dtype>(dt));
  if (es == 0) {
    snprintf(buf, sizeof buf, "output %zu has dtype %d (%s)", index, dt, cairn_dtype_name(static_cast<cairn_dtype>(dt)));
    return buf;
  }
  // Which output ArgDef this is: the variadic output covers the middle.
  const auto& outs = t.def->outputs;
  if (!outs.empty()) {
    size_t arg = index;
    bool variadic = false;
    for (size_t k = 0; k < outs.size(); ++k)
      if (outs[k].variadic) variadic = true;
    if (variadic) {
      size_t before = 0;
      while (before < outs.size() && !outs[before].variadic) ++before;
      size_t after = outs.size() - before - 1;
      if (index < before) arg = index;
      else if (index >= n_outputs - after) arg = outs.size() - (n_outputs - index);
      else arg = before;
    }
    if (arg < outs.size()) {
      int want = expected_dtype(t, outs[arg]);
      if (want > 0 && want != dt) {
        snprintf(buf, sizeof buf, "output %zu is %s; the schema implies %s", index,
                 cairn_dtype_name(static_cast<cairn_dtype>(dt)), cairn_dtype_name(static_cast<cairn_dtype>(want)));
        return buf;
      }
    }
  }
  size_t rank = cairn_tensor_rank(out);
  if (rank > 8) {
    snprintf(buf, sizeof buf, "output %zu has rank %zu", index, rank);
    return buf;
  }
  int64_t n = 1;
  bool overflow = false, zero = false;
  for (size_t k = 0; k < rank; ++k) {
    int64_t d = cairn_tensor_dim(out, k);
    if (d < 0) {
      snprintf(buf, sizeof buf, "output %zu has dimension %zu = %" PRId64, index, k, d);
      return buf;
    }
    if (d == 0) zero = true;
    else if (n > INT64_MAX / d) overflow = true;
    else n *= d;
  }
  // A zero dimension makes the element count 0 whatever the others are.
  if (zero) {
    n = 0;
    overflow = false;
  }
  if (overflow) {
    snprintf(buf, sizeof buf, "output %zu: its shape's element count overflows int64", index);
    return buf;
  }
  int64_t ne = cairn_tensor_num_elements(out);
  if (ne != n) {
    snprintf(buf, sizeof buf, "output %zu has %" PRId64 " elements; its shape has %" PRId64, index, ne, n);
    return buf;
  }
  if (n > INT64_MAX / static_cast<int64_t>(es)) {  // no device holds it: the byte size overflows int64
    snprintf(buf, sizeof buf, "output %zu: %" PRId64 " elements of %zu bytes: the byte size overflows int64", index, n,
             es);
    return buf;
  }
  size_t nb = cairn_tensor_nbytes(out);
  if (nb != static_cast<size_t>(n) * es) {
    snprintf(buf, sizeof buf, "output %zu has %zu bytes for %" PRId64 " elements of %zu bytes", index, nb, n, es);
    return buf;
  }
  if (nb <= (size_t{256} << 20)) {
    std::vector<unsigned char> host(nb);
    cairn_status* s = cairn_tensor_read(out, host.data(), nb);
    if (s) {
      snprintf(buf, sizeof buf, "output %zu cannot be read: %s: %.150s", index, code_name(cairn_status_code(s)),
               cairn_status_message(s));
      cairn_status_free(s);
      return buf;
    }
    if (dt == CAIRN_BOOL)
      for (size_t k = 0; k < nb; ++k)
        if (host[k] > 1) {
          snprintf(buf, sizeof buf, "output %zu: bool element %zu is %u", index, k, host[k]);
          return buf;
        }
  }
  return "";
}

Outcome run_trial(cairn_context* ctx, const Trial& t) {
  Outcome o;
  const std::string desc = t.describe();
  if (find_known(t.def->name, "skip", desc)) {
    o.kind = Outcome::Skipped;
    return o;
  }
  std::vector<cairn_tensor*> ins;
  auto cleanup_inputs = [&] {
    for (cairn_tensor* x : ins) cairn_tensor_free(x);
  };
  for (const InputSpec& in : t.inputs) {
    cairn_tensor* x = nullptr;
    cairn_status* s = cairn_tensor_create(ctx, static_cast<cairn_dtype>(in.dtype), in.shape.data(), in.shape.size(),
                                          in.data.data(), in.data.size(), &x);
    if (s) {
      // Refused before the op: a shape whose element count overflows while being multiplied out
      // (a huge dimension before a zero). Counted as an error of the trial, not a problem.
      o.kind = Outcome::Setup;
      o.text = std::string("cairn_tensor_create failed: ") + cairn_status_message(s);
      cairn_status_free(s);
      cleanup_inputs();
      return o;
    }
    if (in.on_cpu) {
      cairn_tensor* y = nullptr;
      cairn_status* s2 = cairn_tensor_copy_to_device(ctx, x, "cpu", &y);
      if (!s2) {
        cairn_tensor_free(x);
        x = y;
      } else {
        cairn_status_free(s2);
      }
    }
    ins.push_back(x);
  }
  std::vector<cairn_attr> attrs(t.attrs.size());
  for (size_t i = 0; i < t.attrs.size(); ++i) {
    const AttrSpec& a = t.attrs[i];
    cairn_attr& c = attrs[i];
    std::memset(&c, 0, sizeof c);
    c.name = a.name.c_str();
    c.kind = static_cast<cairn_attr_kind>(a.kind);
    c.i = a.i;
    c.f = a.f;
    c.ints = a.ints.data();
    c.n_ints = a.ints.size();
    c.s = a.s.c_str();
    c.dtype = static_cast<cairn_dtype>(a.kind == 6 ? a.dtype : 0);
    c.floats = a.floats.data();
    c.n_floats = a.floats.size();
  }

  const char* op = t.def->name.c_str();
  size_t n_out = 0;
  bool out_known = false;
  if (cairn_status* s = cairn_op_num_outputs(op, attrs.data(), attrs.size(), &n_out)) {
    cairn_code c = cairn_status_code(s);
    if (c != CAIRN_INVALID_ARGUMENT) {
      o.problem_class = "code";
      o.text = std::string("cairn_op_num_outputs: ") + code_name(c) + ": " + cairn_status_message(s);
    }
    cairn_status_free(s);
    n_out = t.def->outputs.size();
  } else {
    out_known = true;
  }
  if (!o.problem_class.empty()) {
    cleanup_inputs();
    return o;
  }
  constexpr size_t kMaxOutputs = 1 << 12;
  bool capped = false;
  if (n_out > kMaxOutputs) {
    n_out = kMaxOutputs;
    capped = true;
  }
  bool wrong_count = false;
  if (t.wrong_outputs < 0 && n_out > 0) {
    n_out -= 1;
    wrong_count = true;
  }
  if (t.wrong_outputs > 0) {
    n_out += 1;
    wrong_count = true;
  }
  bool expect_failure = !out_known || capped || wrong_count;

  cairn_tensor* sentinel = reinterpret_cast<cairn_tensor*>(uintptr_t{0x5e});
  std::vector<cairn_tensor*> outs(n_out + 1, sentinel);
  cairn_status* s = cairn_op_run(ctx, op, ins.data(), ins.size(), attrs.data(), attrs.size(), outs.data(), n_out);
  if (s) {
    o.kind = Outcome::Error;
    cairn_code c = cairn_status_code(s);
    std::string msg = cairn_status_message(s);
    cairn_status_free(s);
    o.code = c;
    o.text = std::string(code_name(c)) + ": " + msg;
    // The codes cairn_op_run documents, and RESOURCE_EXHAUSTED (any call, out of memory);
    // FAILED_PRECONDITION for stateful ops, whose state (a freed summary writer) can refuse a call.
    bool documented = c == CAIRN_INVALID_ARGUMENT || c == CAIRN_UNIMPLEMENTED || c == CAIRN_RESOURCE_EXHAUSTED ||
                      (c == CAIRN_FAILED_PRECONDITION && t.def->stateful);
    if (!documented) {
      o.problem_class = "code";
    } else if (msg.find(t.def->name) == std::string::npos) {
      o.problem_class = "unnamed";
    } else {
      for (size_t i = 0; i <= n_out; ++i)
        if (outs[i] != sentinel) {
          o.problem_class = "output";
          o.text += " (and an output was written although the call failed)";
          break;
        }
    }
  } else {
    o.kind = Outcome::Ok;
    o.text = "OK";
    if (expect_failure) {
      o.problem_class = "output";
      o.text = "succeeded with a wrong output count (" + std::to_string(n_out) + ")";
    }
    for (size_t i = 0; i < n_out && o.problem_class.empty(); ++i) {
      std::string bad = check_output(t, outs[i], i, n_out);
      if (!bad.empty()) {
        o.problem_class = "output";
        o.text = bad;
      }
    }
    if (o.problem_class.empty() && outs[n_out] != sentinel) {
      o.problem_class = "output";
      o.text = "wrote past the outputs it was given";
    }
    for (size_t i = 0; i < n_out && o.problem_class.empty(); ++i) {
      o.signature += i ? " " : "";
      o.signature += cairn_dtype_name(cairn_tensor_dtype(outs[i]));
      o.signature += "[";
      for (size_t k = 0; k < cairn_tensor_rank(outs[i]); ++k)
        o.signature += (k ? "," : "") + std::to_string(cairn_tensor_dim(outs[i], k));
      o.signature += "]";
    }
    for (size_t i = 0; i < n_out; ++i)
      if (outs[i] != sentinel) cairn_tensor_free(outs[i]);
  }
  cleanup_inputs();
  return o;
}

// ---- the child: one op, trials [from, to) ----

struct Shared {  // MAP_SHARED between the parent and one child
  std::atomic<int> current;
  std::atomic<int> done;
  std::atomic<int> ok, errors, skipped, problems, known_problems;
  std::atomic<int64_t> heartbeat_ms;
  std::atomic<unsigned> classes;  // bit per new problem class seen (class_bit)
};

unsigned class_bit(const std::string& cls) {
  static const char* names[] = {"crash", "hang", "code", "unnamed", "output", "parity"};
  for (unsigned i = 0; i < 6; ++i)
    if (cls == names[i]) return 1u << i;
  return 1u << 6;
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A violation: known ones print one short line, new ones the repro.
void report(const Trial& t, const std::string& cls, const std::string& what, Shared* sh) {
  std::string text = t.describe() + " => " + what;
  if (const Known* k = find_known(t.def->name, cls, text)) {
    if (sh) sh->known_problems++;
    if (opt.verbose || opt.show_known)
      printf("KNOWN %s [%s, line %d: %s] %s\n", t.def->name.c_str(), cls.c_str(), k->line, k->reason.c_str(),
             repro(t).c_str());
    return;
  }
  if (sh) {
    sh->problems++;
    sh->classes |= class_bit(cls);
  }
  std::string shown = what.size() > 400 ? what.substr(0, 400) + "..." : what;
  printf("FAIL %s %s: %s\n  repro: %s\n", t.def->name.c_str(), cls.c_str(), shown.c_str(), repro(t).c_str());
  fflush(stdout);
}

// On a device other than the CPU, the same trial on the CPU: a call that one device accepts and the
// other refuses as INVALID_ARGUMENT, or that both accept with different output dtypes or shapes, is
// a parity problem. (UNIMPLEMENTED and RESOURCE_EXHAUSTED differ by design: kernels and limits are
// per device. Trials with an input left on the CPU are not compared.)
void check_parity(cairn_context* cpu, const Trial& t, Outcome& o) {
  if (!cpu || !o.problem_class.empty() || o.kind == Outcome::Skipped || o.kind == Outcome::Setup) return;
  for (const InputSpec& in : t.inputs)
    if (in.on_cpu) return;
  if (o.kind == Outcome::Error && o.code != CAIRN_INVALID_ARGUMENT) return;
  Outcome c = run_trial(cpu, t);
  if (!c.problem_class.empty() || c.kind == Outcome::Setup) return;  // the CPU run reports its own problems
  if (c.kind == Outcome::Error && c.code != CAIRN_INVALID_ARGUMENT) return;
  if (o.kind == c.kind && (o.kind == Outcome::Error || o.signature == c.signature)) return;
  o.problem_class = "parity";
  o.text = opt.device + ": " + (o.kind == Outcome::Ok ? "OK " + o.signature : o.text) + "; cpu: " +
           (c.kind == Outcome::Ok ? "OK " + c.signature : c.text);
}

[[noreturn]] void child_main(const OpDef& def, int from, int to, Shared* sh) {
  cairn_context* ctx = make_context();
  cairn_context* cpu = opt.device != "cpu" && opt.parity ? make_context("cpu") : nullptr;
  for (int i = from; i < to; ++i) {
    sh->current = i;
    sh->heartbeat_ms = now_ms();
    Trial t = make_trial(def, i);
    Outcome o = run_trial(ctx, t);
    check_parity(cpu, t, o);
    switch (o.kind) {
      case Outcome::Ok: sh->ok++; break;
      case Outcome::Error: sh->errors++; break;
      case Outcome::Skipped: sh->skipped++; break;
      case Outcome::Setup: sh->errors++; break;
    }
    if (!o.problem_class.empty()) report(t, o.problem_class, o.text, sh);
    sh->done = i + 1;
  }
  fflush(stdout);
  cairn_context_free(cpu);
  cairn_context_free(ctx);
  fflush(stdout);
  _exit(0);
}

// ---- the parent: forks per op, restarts after a crash, kills hangs ----

struct OpResult {
  std::string op;
  int trials = 0, ok = 0, errors = 0, skipped = 0, problems = 0, known = 0, crashes = 0, hangs = 0;
  double seconds = 0;
  bool budget_hit = false;
  unsigned classes = 0;
};

std::string read_tail_lines(const std::string& path) {
  // The sanitizer's or the signal's first informative line from the child's stderr.
  std::ifstream f(path);
  std::string line, first, summary;
  while (std::getline(f, line)) {
    if (first.empty() && (line.find("runtime error:") != std::string::npos ||
                          line.find("ERROR: AddressSanitizer") != std::string::npos ||
                          line.find("ERROR: LeakSanitizer") != std::string::npos ||
                          line.find("terminate called") != std::string::npos || line.find("what():") != std::string::npos))
      first = line;
    if (line.find("SUMMARY:") != std::string::npos && summary.empty()) summary = line;
  }
  if (!first.empty() && !summary.empty()) return first + " | " + summary;
  return first.empty() ? summary : first;
}

struct Running {
  pid_t pid = -1;
  Shared* sh = nullptr;
  const OpDef* def = nullptr;
  int from = 0;
  OpResult res;
  int64_t op_start = 0;
  std::string err_path;
};

void start_child(Running& r) {
  r.sh->current = r.from;
  r.sh->done = r.from;
  r.sh->heartbeat_ms = now_ms();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    int fd = open(r.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 2);
      close(fd);
    }
    child_main(*r.def, r.from, opt.trials, r.sh);
  }
  r.pid = pid;
}

void dump_stderr(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  int n = 0;
  while (std::getline(f, line) && n < 40) {
    printf("    | %s\n", line.c_str());
    ++n;
  }
}

// The child ended (or was killed): account for it; returns true when the op is finished.
bool child_ended(Running& r, int status, bool hung) {
  Shared* sh = r.sh;
  int done = sh->done;
  if (!hung && WIFEXITED(status) && WEXITSTATUS(status) == 0 && done >= opt.trials) return true;
  if (!hung && WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    printf("SKIP %s: the %s device is unavailable\n", r.def->name.c_str(), opt.device.c_str());
    r.res.budget_hit = true;
    return true;
  }
  int at = sh->current;
  Trial t = make_trial(*r.def, at);
  std::string what;
  std::string cls = hung ? "hang" : "crash";
  if (hung) {
    what = "no progress for " + std::to_string(static_cast<int>(opt.trial_timeout)) + " s (killed)";
    r.res.hangs++;
  } else {
    char buf[96];
    if (WIFSIGNALED(status)) snprintf(buf, sizeof buf, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else snprintf(buf, sizeof buf, "exited with status %d", WEXITSTATUS(status));
    what = buf;
    std::string san = read_tail_lines(r.err_path);
    if (!san.empty()) what += ": " + san;
    r.res.crashes++;
  }
  if (done >= opt.trials && !hung) {
    // Every trial ran; the failure came at exit (a leak report, a crash in teardown).
    t = make_trial(*r.def, opt.trials - 1);
    what = "after the last trial: " + what;
  }
  size_t before = static_cast<size_t>(sh->problems.load());
  report(t, cls, what, sh);
  if (static_cast<size_t>(sh->problems.load()) > before) dump_stderr(r.err_path);
  r.from = std::max(done, at + 1);
  return r.from >= opt.trials;
}

void finish(Running& r) {
  r.res.trials = std::max(r.sh->done.load(), r.from);  // a crash in the last trial still ran it
  r.res.ok = r.sh->ok;
  r.res.errors = r.sh->errors;
  r.res.skipped = r.sh->skipped;
  r.res.problems = r.sh->problems;
  r.res.known = r.sh->known_problems;
  r.res.classes = r.sh->classes;
  r.res.seconds = static_cast<double>(now_ms() - r.op_start) / 1000.0;
  unlink(r.err_path.c_str());
}

volatile sig_atomic_t g_stop = 0;  // SIGTERM/SIGINT: kill the children and stop
void on_stop(int) { g_stop = 1; }

int run_all(const std::vector<const OpDef*>& ops, std::vector<OpResult>* out = nullptr) {
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  auto t0 = now_ms();
  std::vector<OpResult> results;
  std::vector<Running> slots(static_cast<size_t>(std::max(1, opt.jobs)));
  Shared* mem = static_cast<Shared*>(mmap(nullptr, sizeof(Shared) * slots.size(), PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (mem == MAP_FAILED) {
    perror("mmap");
    return 2;
  }
  const char* tmp = getenv("TMPDIR");
  std::string tmpdir = tmp && *tmp ? tmp : "/tmp";
  size_t next = 0;
  int active = 0;
  for (size_t k = 0; k < slots.size(); ++k) {
    slots[k].sh = new (&mem[k]) Shared();
  }
  auto launch = [&](Running& r) {
    const OpDef* def = ops[next++];
    Shared* sh = r.sh;
    std::memset(static_cast<void*>(sh), 0, sizeof(Shared));
    r = Running();
    r.sh = sh;
    r.def = def;
    r.res.op = def->name;
    r.op_start = now_ms();
    r.err_path = tmpdir + "/op_fuzzer." + std::to_string(getpid()) + "." + def->name + ".stderr";
    start_child(r);
    ++active;
  };
  for (auto& r : slots)
    if (next < ops.size()) launch(r);
  while (active > 0) {
    usleep(5000);
    if (g_stop) {
      for (auto& r : slots)
        if (r.pid > 0) {
          kill(r.pid, SIGKILL);
          waitpid(r.pid, nullptr, 0);
        }
      printf("op_fuzzer %s: stopped by a signal with %zu of %zu ops done\n", opt.device.c_str(), results.size(), ops.size());
      return 3;
    }
    for (auto& r : slots) {
      if (r.pid < 0) continue;
      int status = 0;
      pid_t p = waitpid(r.pid, &status, WNOHANG);
      bool hung = false, budget = false;
      if (p == 0) {
        int64_t now = now_ms();
        if (now - r.sh->heartbeat_ms > static_cast<int64_t>(opt.trial_timeout * 1000)) hung = true;
        else if (now - r.op_start > static_cast<int64_t>(opt.op_seconds * 1000)) budget = true;
        else continue;
        kill(r.pid, SIGKILL);
        waitpid(r.pid, &status, 0);
      }
      r.pid = -1;
      bool finished;
      if (budget) {
        r.res.budget_hit = true;
        finished = true;
      } else {
        finished = child_ended(r, status, hung);
      }
      if (!finished) {
        start_child(r);
        continue;
      }
      finish(r);
      const OpResult& x = r.res;
      printf("%-28s %4d trials  %4d ok  %4d errors  %3d skipped  %2d known  %2d new  %6.2fs%s\n", x.op.c_str(), x.trials,
             x.ok, x.errors, x.skipped, x.known, x.problems, x.seconds,
             x.budget_hit ? "  (stopped: op time budget)" : "");
      fflush(stdout);
      results.push_back(x);
      --active;
      if (next < ops.size()) launch(r);
    }
  }
  OpResult total;
  int budget_ops = 0;
  int min_trials = INT32_MAX;
  for (const OpResult& x : results) {
    total.trials += x.trials;
    total.ok += x.ok;
    total.errors += x.errors;
    total.skipped += x.skipped;
    total.known += x.known;
    total.problems += x.problems;
    total.crashes += x.crashes;
    total.hangs += x.hangs;
    budget_ops += x.budget_hit;
    min_trials = std::min(min_trials, x.trials);
  }
  double secs = static_cast<double>(now_ms() - t0) / 1000.0;
  printf("op_fuzzer %s seed %" PRIu64 ": %zu ops, %d trials (min %d per op), %d ok, %d errors, %d skipped by the known list, "
         "%d known problems, %d NEW problems (%d crashes, %d hangs in all), %d ops stopped by the time budget, %.1f s\n",
         opt.device.c_str(), opt.seed, results.size(), total.trials, results.empty() ? 0 : min_trials, total.ok,
         total.errors, total.skipped, total.known, total.problems, total.crashes, total.hangs, budget_ops, secs);
  if (out) *out = results;
  return total.problems > 0 ? 1 : 0;
}

// ---- self-test: ops with planted bugs, one per problem class, that the harness must catch ----
// Registered only in this binary, under names the normal runs leave out (kSelfTestPrefix).

const std::string kSelfTestPrefix = "FuzzSelfTest";

cairn::OpBuilder self_test_op(const char* name) {
  cairn::OpBuilder b(name);
  b.summary("op fuzzer self-test: a planted bug").input("x", "T").output("y", DType::Float32).type_attr("T", cairn::dtypes::kAll);
  b.def.differentiable = false;
  return b;
}
void same_shape(cairn::ShapeContext& c) { c.set_out(0, c.in(0)); }

void planted_crash(cairn::KernelContext&) {
  volatile int* p = nullptr;
  *p = 1;  // a null write: SIGSEGV (ASan reports and aborts)
}
void planted_hang(cairn::KernelContext&) {
  for (;;) pause();
}
void planted_internal(cairn::KernelContext& k) { cairn::raise(cairn::Code::Internal, "{}: a planted INTERNAL", k.op()); }
// Eager dispatch prefixes a kernel's errors with the op's name, so the unnamed error is planted in
// the shape function, which answers for its own messages.
void planted_unnamed_shape(cairn::ShapeContext&) {
  cairn::raise(cairn::Code::InvalidArgument, "a message without the op");
}
void planted_unnamed(cairn::KernelContext&) {}
void planted_bad_output(cairn::KernelContext& k) {
  k.allocate_output(0, DType::Int32, cairn::Shape{});  // the schema says float32
}

CAIRN_REGISTER_OP(self_test_op("FuzzSelfTestCrash").shape(same_shape));
CAIRN_REGISTER_OP(self_test_op("FuzzSelfTestHang").shape(same_shape));
CAIRN_REGISTER_OP(self_test_op("FuzzSelfTestInternal").shape(same_shape));
CAIRN_REGISTER_OP(self_test_op("FuzzSelfTestUnnamed").shape(planted_unnamed_shape));
CAIRN_REGISTER_OP(self_test_op("FuzzSelfTestBadOutput").dynamic_output_shape());
CAIRN_REGISTER_KERNEL("FuzzSelfTestCrash", cairn::DeviceKind::CPU, planted_crash);
CAIRN_REGISTER_KERNEL("FuzzSelfTestHang", cairn::DeviceKind::CPU, planted_hang);
CAIRN_REGISTER_KERNEL("FuzzSelfTestInternal", cairn::DeviceKind::CPU, planted_internal);
CAIRN_REGISTER_KERNEL("FuzzSelfTestUnnamed", cairn::DeviceKind::CPU, planted_unnamed);
CAIRN_REGISTER_KERNEL("FuzzSelfTestBadOutput", cairn::DeviceKind::CPU, planted_bad_output);

// Runs the planted ops on the CPU; 0 when each one's problem was caught as its class.
int self_test() {
  const std::vector<std::pair<std::string, std::string>> expect = {
      {"FuzzSelfTestCrash", "crash"},     {"FuzzSelfTestHang", "hang"},       {"FuzzSelfTestInternal", "code"},
      {"FuzzSelfTestUnnamed", "unnamed"}, {"FuzzSelfTestBadOutput", "output"}};
  opt.device = "cpu";
  opt.trials = 4;
  opt.trial_timeout = 1;
  known.clear();
  std::vector<const OpDef*> ops;
  for (const auto& e : expect) ops.push_back(&cairn::OpRegistry::global().get(e.first));
  std::vector<OpResult> results;
  printf("self-test: each planted bug below must be reported\n");
  run_all(ops, &results);
  int missed = 0;
  for (const auto& e : expect) {
    bool caught = false;
    for (const OpResult& r : results)
      if (r.op == e.first && (r.classes & class_bit(e.second))) caught = true;
    printf("self-test %s: %s %s\n", e.first.c_str(), e.second.c_str(), caught ? "caught" : "MISSED");
    missed += !caught;
  }
  printf("self-test: %s\n", missed ? "FAILED" : "passed");
  return missed ? 1 : 0;
}

void usage() {
  fprintf(stderr,
          "usage: op_fuzzer [--device=cpu|vulkan] [--seed=N] [--trials=N] [--op=NAME[,NAME...]] [--trial=K]\n"
          "                 [--known=FILE] [--jobs=N] [--trial-timeout=S] [--op-seconds=S] [--verbose] [--show-known] [--list]\n"
          "                 [--probe]   (exit 0 when the device opens, 77 when it is unavailable) [--no-parity]\n"
          "                 [--self-test]   (ops with planted bugs: exit 0 when each is caught)\n");
  exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  bool probe = false, self = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char* key) -> const char* {
      size_t n = strlen(key);
      return a.compare(0, n, key) == 0 ? a.c_str() + n : nullptr;
    };
    if (const char* v = val("--device=")) opt.device = v;
    else if (const char* v = val("--seed=")) opt.seed = strtoull(v, nullptr, 0);
    else if (const char* v = val("--trials=")) opt.trials = atoi(v);
    else if (const char* v = val("--op=")) opt.only_op = v;
    else if (const char* v = val("--trial=")) opt.trial = atoi(v);
    else if (const char* v = val("--known=")) opt.known_path = v;
    else if (const char* v = val("--jobs=")) opt.jobs = atoi(v);
    else if (const char* v = val("--trial-timeout=")) opt.trial_timeout = atof(v);
    else if (const char* v = val("--op-seconds=")) opt.op_seconds = atof(v);
    else if (a == "--verbose") opt.verbose = true;
    else if (a == "--show-known") opt.show_known = true;
    else if (a == "--list") opt.list = true;
    else if (a == "--probe") probe = true;
    else if (a == "--no-parity") opt.parity = false;
    else if (a == "--self-test") self = true;
    else usage();
  }
  if (probe) {  // exits 0 when the device opens, 77 when it is unavailable
    cairn_context_free(make_context());
    return 0;
  }
  signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  load_known(opt.known_path);

  std::vector<const OpDef*> ops = cairn::OpRegistry::global().list();
  if (ops.size() != cairn_op_count()) {
    fprintf(stderr, "op_fuzzer: the registry lists %zu ops but cairn_op_count() says %zu\n", ops.size(), cairn_op_count());
    return 2;
  }
  if (self) return self_test();
  ops.erase(std::remove_if(ops.begin(), ops.end(),
                           [](const OpDef* d) { return d->name.compare(0, kSelfTestPrefix.size(), kSelfTestPrefix) == 0; }),
            ops.end());
  if (!opt.only_op.empty()) {
    std::vector<const OpDef*> chosen;
    std::stringstream ss(opt.only_op);
    std::string name;
    while (std::getline(ss, name, ',')) {
      const OpDef* d = cairn::OpRegistry::global().find(name);
      if (!d) {
        fprintf(stderr, "op_fuzzer: unknown op %s\n", name.c_str());
        return 2;
      }
      chosen.push_back(d);
    }
    ops = chosen;
  }
  if (opt.list) {
    for (const OpDef* d : ops) printf("%s\n", d->name.c_str());
    return 0;
  }
  if (opt.trial >= 0) {
    // Replay: every chosen op's trial K in this process, printing what it does.
    opt.show_known = true;
    cairn_context* ctx = make_context();
    cairn_context* cpu = opt.device != "cpu" && opt.parity ? make_context("cpu") : nullptr;
    int bad = 0;
    for (const OpDef* d : ops) {
      Trial t = make_trial(*d, opt.trial);
      printf("%s\n", repro(t).c_str());
      fflush(stdout);
      known.erase(std::remove_if(known.begin(), known.end(), [](const Known& k) { return k.cls == "skip"; }),
                  known.end());  // a replay runs the trial even when the list skips it
      Outcome o = run_trial(ctx, t);
      check_parity(cpu, t, o);
      printf("  => %s%s%s\n", o.text.c_str(), o.problem_class.empty() ? "" : "   [problem: ",
             o.problem_class.empty() ? "" : (o.problem_class + "]").c_str());
      if (!o.problem_class.empty()) {
        report(t, o.problem_class, o.text, nullptr);
        ++bad;
      }
    }
    cairn_context_free(cpu);
    cairn_context_free(ctx);
    return bad ? 1 : 0;
  }
  return run_all(ops);
}
