// Object, assembly and IR emission for a target, and linking with the system linker (spawned
// directly, no shell).
#include "codegen/llvm/object.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "codegen/llvm/kernel_module.h"
#include "codegen/llvm/llvm_target.h"
#include "core/str_cat.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

extern char** environ;

namespace collage::codegen {

namespace {

enum class Output { object, assembly, ir };

absl::StatusOr<std::string> emit(const std::vector<te::PrimFunc>& funcs, const TargetSpec& target,
                                 Output what) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = detail::make_target_machine(target);
  if (!tm.ok()) return tm.status();
  llvm::LLVMContext ctx;
  absl::StatusOr<std::unique_ptr<llvm::Module>> m =
      detail::build_kernel_module(ctx, funcs, target, **tm);
  if (!m.ok()) return m.status();
  if (what == Output::ir) {
    std::string s;
    llvm::raw_string_ostream os(s);
    (*m)->print(os, nullptr);
    return os.str();
  }
  return detail::emit_machine_code(**m, **tm, what == Output::assembly);
}

// Runs argv[0] (searched in PATH) and returns its exit status; its stdout and stderr go to
// `output`.
absl::StatusOr<int> run_program(const std::vector<std::string>& argv, std::string& output) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("cannot create a pipe for the linker");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(str_cat("cannot run linker '", argv[0], "'"));
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) output.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return absl::InternalError("waiting for the linker failed");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

absl::StatusOr<std::string> emit_object(const std::vector<te::PrimFunc>& funcs,
                                        const TargetSpec& target) {
  return emit(funcs, target, Output::object);
}

absl::StatusOr<std::string> emit_assembly(const std::vector<te::PrimFunc>& funcs,
                                          const TargetSpec& target) {
  return emit(funcs, target, Output::assembly);
}

absl::StatusOr<std::string> emit_llvm_ir(const std::vector<te::PrimFunc>& funcs,
                                         const TargetSpec& target) {
  return emit(funcs, target, Output::ir);
}

std::string default_cross_linker() {
  const std::string bundled = COLLAGE_LLVM_TOOLS_DIR "/ld.lld";
  return access(bundled.c_str(), X_OK) == 0 ? bundled : "ld.lld";
}

absl::Status link_shared_library(const std::vector<std::string>& objects, const std::string& output,
                                 const TargetSpec& target, const LinkOptions& options) {
  std::string linker = options.linker;
  if (linker.empty()) {
    linker = target.triple == llvm::sys::getProcessTriple() ? "cc" : default_cross_linker();
  }
  const std::string base = linker.substr(
      linker.find_last_of('/') == std::string::npos ? 0 : linker.find_last_of('/') + 1);
  const bool is_ld = base.find("ld") != std::string::npos;
  std::vector<std::string> argv = {linker, "-shared", "-o", output};
  argv.insert(argv.end(), objects.begin(), objects.end());
  if (!is_ld) argv.push_back("-lm");
  std::string diagnostics;
  absl::StatusOr<int> rc = run_program(argv, diagnostics);
  if (!rc.ok()) return rc.status();
  if (*rc != 0) {
    return absl::InternalError(str_cat("linker '", linker, "' failed with status ", *rc,
                                       " linking '", output, "': ", diagnostics));
  }
  return absl::OkStatus();
}

}  // namespace collage::codegen
