// Cairn writes TensorFlow bundles: a trained Cairn MLP with Adam written by write_tf reads back by
// name (BundleReader) and by object graph (restore_tf into a fresh Cairn model, assert_consumed),
// and real TensorFlow with Keras 3 restores it into the equivalent Keras model with
// assert_consumed, values equal (verify_keras_restore.py). The real-TF part runs when the test
// venv's python (or $CAIRN_TF_PYTHON) imports tensorflow and keras, and prints SKIP otherwise.
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "runtime/checkpoint/tf_restore.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/tf_restore/mlp.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using namespace tfckpt;

// A built MLP with kernels from `seed`.
struct Mlp : CairnMlp {
  explicit Mlp(int64_t seed) : CairnMlp(0.01, seed) { build(); }
};

std::string temp_prefix(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = fmt::format("{}/tf_roundtrip_{}", tmp ? tmp : "/tmp", ::getpid());
  std::system(fmt::format("mkdir -p '{}'", dir).c_str());
  return dir + "/" + name;
}

// The python with TensorFlow and Keras: $CAIRN_TF_PYTHON, else the test venv tools/setup makes
// (the home directory from the password database: Bazel's test environment changes $HOME).
std::string tf_python() {
  if (const char* p = std::getenv("CAIRN_TF_PYTHON")) return p;
  const passwd* pw = getpwuid(getuid());
  return std::string(pw ? pw->pw_dir : "") + "/.cache/cairn/venv/bin/python";
}

TEST_CASE("write_tf: read back by name and by object graph into a fresh Cairn model") {
  Mlp a(3);
  a.step(1.0f);
  a.step(-0.5f);
  const std::string prefix = temp_prefix("mlp");
  write_tf(*a.ckpt, prefix);
  auto reader = BundleReader::open(prefix);
  std::vector<std::string> keys;
  for (const BundleEntry& e : reader->entries()) keys.push_back(e.key);
  CHECK(keys.size() == 16);  // 14 Keras values, save_counter, the object graph
  CHECK(reader->find("optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"));
  CHECK(reader->find(tfckpt::kObjectGraphKey));
  for (const BundleEntry& e : reader->entries())
    if (e.dtype != DType::String) reader->verify(e);

  Mlp b(11);
  auto status = restore_tf(*b.ckpt, prefix);
  std::vector<Ref<Variable>> wa = a.model->trainable_weights(), wb = b.model->trainable_weights();
  for (size_t i = 0; i < wa.size(); ++i) CHECK(values<float>(wa[i]->read()) == values<float>(wb[i]->read()));
  CHECK(b.adam->iterations_value() == 2);
  a.step(0.25f);
  b.step(0.25f);
  for (size_t i = 0; i < wa.size(); ++i) {
    CHECK(values<float>(wa[i]->read()) == values<float>(wb[i]->read()));
    CHECK(values<float>(a.adam->get_slot(*wa[i], "m")->read()) == values<float>(b.adam->get_slot(*wb[i], "m")->read()));
  }
  status->assert_consumed();
}

void write_values(std::ofstream& out, const std::string& name, const Tensor& t) {
  out << name;
  for (double v : as_doubles(t)) out << fmt::format(" {:.9g}", v);
  out << "\n";
}

TEST_CASE("real TensorFlow restores a Cairn-written bundle into the equivalent Keras 3 model") {
  const std::string python = tf_python();
  if (std::system(fmt::format("'{}' -c 'import tensorflow, keras' >/dev/null 2>&1", python).c_str()) != 0) {
    MESSAGE("SKIP: " << python << " cannot import tensorflow and keras (set CAIRN_TF_PYTHON, or add them to the test venv)");
    return;
  }
  Mlp a(5);
  a.step(1.0f);
  a.step(0.5f);
  a.step(-2.0f);
  const std::string prefix = temp_prefix("keras");
  write_tf(*a.ckpt, prefix);
  const std::string expected = prefix + ".expected.txt";
  {
    std::ofstream out(expected);
    std::vector<Ref<Variable>> w = a.model->trainable_weights();
    const char* names[] = {"kernel0", "bias0", "kernel1", "bias1"};
    for (size_t i = 0; i < 4; ++i) write_values(out, names[i], w[i]->read());
    for (size_t i = 0; i < 4; ++i) write_values(out, "m" + std::to_string(i), a.adam->get_slot(*w[i], "m")->read());
    for (size_t i = 0; i < 4; ++i) write_values(out, "v" + std::to_string(i), a.adam->get_slot(*w[i], "v")->read());
    write_values(out, "iterations", a.adam->iterations().read());
    write_values(out, "learning_rate", a.adam->learning_rate());
  }
  const std::string cmd = fmt::format("'{}' tests/runtime/tf_restore/verify_keras_restore.py '{}' '{}' 2>&1", python,
                                      prefix, expected);
  std::string output;
  int rc = -1;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) output.append(buf, n);
    rc = pclose(p);
  }
  CHECK_MESSAGE(rc == 0, output);
  CHECK_MESSAGE(output.find("assert_consumed(): ok") != std::string::npos, output);
}

}  // namespace
}  // namespace cairn::test
