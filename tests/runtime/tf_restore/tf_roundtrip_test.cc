// Cairn writes TensorFlow bundles: a trained Cairn MLP with Adam written by write_tf reads back by
// name (BundleReader) and by object graph (restore_tf into a fresh Cairn model, assert_consumed),
// and real TensorFlow with Keras 3 restores it into the equivalent Keras model with
// assert_consumed, values equal, as it restores a Cairn structure of modules, lists and dicts into
// the same tf.Module (verify_keras_restore.py). The real-TF part runs when the test
// venv's python (or $CAIRN_TF_PYTHON) imports tensorflow and keras, and prints SKIP otherwise.
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "runtime/checkpoint/tf_restore.h"
#include "runtime/track/containers.h"
#include "runtime/nn/layer.h"
#include "runtime/optim/optimizer.h"
#include "tests/runtime/tf_restore/mlp.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
using namespace tfckpt;

using Mlp = BuiltMlp;

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

// Runs verify_keras_restore.py `kind` on the bundle and the expected values; CHECKs it passed.
void check_with_tf(const std::string& python, const std::string& kind, const std::string& prefix,
                   const std::string& expected) {
  const std::string cmd = fmt::format("'{}' tests/runtime/tf_restore/verify_keras_restore.py {} '{}' '{}' 2>&1", python,
                                      kind, prefix, expected);
  std::string output;
  int rc = -1;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) output.append(buf, n);
    rc = pclose(p);
  }
  CHECK_MESSAGE(rc == 0, output);
  CHECK_MESSAGE(output.find("assert_consumed(): ok") != std::string::npos, output);
  CHECK_MESSAGE(output.find("values: equal") != std::string::npos, output);
}

// The python to check with, or empty (after printing SKIP) when it lacks TensorFlow and Keras.
std::string python_with_tf() {
  const std::string python = tf_python();
  if (std::system(fmt::format("'{}' -c 'import tensorflow, keras' >/dev/null 2>&1", python).c_str()) == 0) return python;
  MESSAGE("SKIP: " << python << " cannot import tensorflow and keras (set CAIRN_TF_PYTHON, or add them to the test venv)");
  return {};
}

TEST_CASE("real TensorFlow restores a Cairn-written bundle into the equivalent Keras 3 model") {
  const std::string python = python_with_tf();
  if (python.empty()) return;
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
  check_with_tf(python, "keras", prefix, expected);
}

TEST_CASE("real TensorFlow restores a Cairn structure of modules, lists and dicts into the same tf.Module") {
  const std::string python = python_with_tf();
  if (python.empty()) return;
  // Cairn's names are tf.Module's: attributes, list indices, dict keys (no Keras mapping needed).
  std::vector<std::pair<std::string, Ref<Variable>>> vars;
  auto var = [&](const std::string& path, const Tensor& value) {
    Ref<Variable> v = Variable::create(ctx(), value);
    vars.emplace_back(path, v);
    return v;
  };
  Ref<Module> root = Module::create(ctx(), "root");
  Ref<List> blocks = List::create(ctx());
  for (int i = 0; i < 2; ++i) {
    Ref<Module> b = Module::create(ctx(), "block");
    const std::string p = "blocks/" + std::to_string(i) + "/";
    b->set("w", var(p + "w", make<float>({0.5f + i, -1, 2, 3.25f, 4, 5}, Shape{2, 3})));
    b->set("b", var(p + "b", make<float>({-0.125f * i, 7, 8}, Shape{3})));
    blocks->append(b);
  }
  root->set("blocks", blocks);
  Ref<Dict> table = Dict::create(ctx());
  table->set("alpha", var("table/alpha", make<float>({1.5f, -2.5f}, Shape{2})));
  Ref<Dict> nested = Dict::create(ctx());
  Ref<List> deep = List::create(ctx());
  deep->append(var("table/nested/deep/0", scalar<int32_t>(-7)));
  deep->append(var("table/nested/deep/1", make_as(DType::Bool, {1, 0}, Shape{1, 2})));
  nested->set("deep", deep);
  table->set("nested", nested);
  root->set("table", table);
  root->set("scalar", var("scalar", scalar<double>(4.5)));
  Checkpoint c(ctx(), {{"m", root}});
  const std::string prefix = temp_prefix("module");
  write_tf(c, prefix);
  const std::string expected = prefix + ".expected.txt";
  {
    std::ofstream out(expected);
    for (auto& [path, v] : vars) write_values(out, path, v->read());
  }
  check_with_tf(python, "module", prefix, expected);
}

}  // namespace
}  // namespace cairn::test
