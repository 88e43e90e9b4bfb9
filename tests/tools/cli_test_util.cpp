// Implementation of the command-line test helpers.
#include "tools/cli_test_util.h"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <vector>

extern char** environ;

namespace collage::testing {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void set_type(onnx::ValueInfoProto* v, const std::string& name, int elem_type,
              const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const std::string& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0])))
      shape->add_dim()->set_dim_value(std::stoll(d));
    else
      shape->add_dim()->set_dim_param(d);
  }
}

void add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> inputs,
              const std::string& output) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(output + "_node");
  for (const std::string& in : inputs) n->add_input(in);
  n->add_output(output);
}

}  // namespace

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "collage-cli-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CliResult run_collage(const TempDir& dir, const std::vector<std::string>& args) {
  const std::string binary = std::string(COLLAGE_BINARY_DIR) + "/bin/collage";
  const std::string out_path = (dir / "stdout.txt").string();
  const std::string err_path = (dir / "stderr.txt").string();
  std::vector<std::string> argv_storage = {binary};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The cost database goes to the test's folder, not the user's cache.
  const std::string cache = "XDG_CACHE_HOME=" + (dir / "cache").string();
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).substr(0, 15) != "XDG_CACHE_HOME=") env.push_back(*e);
  env.push_back(const_cast<char*>(cache.c_str()));
  env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid;
  const int rc = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + binary);
  int status = 0;
  waitpid(pid, &status, 0);
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

void write_tiny_model(const std::filesystem::path& path, bool symbolic_batch, bool with_int) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("collage-tests");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  const std::string batch = symbolic_batch ? "batch" : "2";
  set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {batch, "3"});
  set_type(g->add_input(), "y", onnx::TensorProto::FLOAT, {batch, "3"});
  if (with_int) set_type(g->add_input(), "n", onnx::TensorProto::INT64, {"4"});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  for (int i = 0; i < 6; ++i) w->add_float_data(0.5f * static_cast<float>(i));
  add_node(g, "Add", {"x", "W"}, "a");
  add_node(g, "Relu", {"a"}, "z");
  add_node(g, "Mul", {"x", "y"}, "p");
  if (with_int) add_node(g, "Add", {"n", "n"}, "m");
  set_type(g->add_output(), "z", onnx::TensorProto::FLOAT, {batch, "3"});
  set_type(g->add_output(), "p", onnx::TensorProto::FLOAT, {batch, "3"});
  if (with_int) set_type(g->add_output(), "m", onnx::TensorProto::INT64, {"4"});
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!m.SerializeToOstream(&f)) throw std::runtime_error("cannot write " + path.string());
}

void write_matmul_model(const std::filesystem::path& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("collage-tests");
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("matmul");
  set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {"4", "3"});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(5);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) w->add_float_data(static_cast<float>(i - j) / 4);
  add_node(g, "MatMul", {"x", "W"}, "h");
  add_node(g, "Relu", {"h"}, "z");
  set_type(g->add_output(), "z", onnx::TensorProto::FLOAT, {"4", "5"});
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!m.SerializeToOstream(&f)) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace collage::testing
