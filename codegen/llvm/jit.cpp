// JitModule: builds the kernel module for the host and hands it to an ORC LLJIT instance that
// resolves libc/libm symbols (malloc, powf) from the process.
#include "collage/jit.h"

#include "codegen/llvm/kernel_module.h"
#include "codegen/llvm/llvm_target.h"
#include "core/str_cat.h"
#include "kernel_workspace.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

namespace collage::codegen {

struct JitModule::Impl {
  TargetSpec target;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string ir, assembly, object;
};

namespace {
absl::Status llvm_error(const std::string& what, llvm::Error err) {
  return absl::InternalError(str_cat(what, ": ", llvm::toString(std::move(err))));
}

absl::Status check_triple(const TargetSpec& target) {
  if (target.triple == llvm::sys::getProcessTriple()) return absl::OkStatus();
  return absl::InvalidArgumentError(str_cat("JIT target triple '", target.triple,
                                            "' is not the host's '", llvm::sys::getProcessTriple(),
                                            "'"));
}

// An LLJIT for `target` that resolves libc/libm symbols from the process. It links with JITLink,
// which places each object's sections in one contiguous slab. LLVM 16's default on x86-64 ELF,
// RuntimeDyld with a SectionMemoryManager, maps code and constants separately: in a long-lived
// process with a fragmented address space (a compile measuring hundreds of kernels beside
// OpenVINO and oneDNN) the constants landed 2.4 GB from the code, and the small code model's
// 32-bit displacement was silently truncated (a segfault reading the constant pool of a DenseNet
// kernel).
absl::StatusOr<std::unique_ptr<llvm::orc::LLJIT>> make_jit(const TargetSpec& target) {
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu);
  jtmb.addFeatures(std::vector<std::string>{target.features});
  jtmb.setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  llvm::TargetOptions topts;
  topts.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  jtmb.setOptions(topts);
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(jtmb))
                 .setObjectLinkingLayerCreator(
                     [](llvm::orc::ExecutionSession& session, const llvm::Triple&)
                         -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                       return std::make_unique<llvm::orc::ObjectLinkingLayer>(session);
                     })
                 .create();
  if (!jit) return llvm_error("cannot create the JIT", jit.takeError());
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!gen) return llvm_error("cannot expose process symbols to the JIT", gen.takeError());
  (*jit)->getMainJITDylib().addGenerator(std::move(*gen));
  return std::move(*jit);
}

// The address of `name` in `jit`, or null when its code does not define it.
void* find_symbol(llvm::orc::LLJIT& jit, const char* name) {
  auto sym = jit.lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<void*>();
}

// Generated code takes its large buffers from the per-thread workspace (kernel_workspace.h).
void install_workspace(llvm::orc::LLJIT& jit) {
  rt::install_workspace_hooks(find_symbol(jit, rt::kWorkspaceAllocHook),
                              find_symbol(jit, rt::kWorkspaceFreeHook));
}
}  // namespace

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

absl::StatusOr<std::unique_ptr<JitModule>> JitModule::compile(
    const std::vector<te::PrimFunc>& funcs, const JitOptions& options) {
  detail::initialize_llvm();
  auto impl = std::make_unique<Impl>();
  impl->target = options.target ? *options.target : TargetSpec::host();
  if (absl::Status s = check_triple(impl->target); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm =
      detail::make_target_machine(impl->target);
  if (!tm.ok()) return tm.status();

  auto ctx = std::make_unique<llvm::LLVMContext>();
  absl::StatusOr<std::unique_ptr<llvm::Module>> m =
      detail::build_kernel_module(*ctx, funcs, impl->target, **tm);
  if (!m.ok()) return m.status();
  if (options.keep_llvm_ir) {
    llvm::raw_string_ostream os(impl->ir);
    (*m)->print(os, nullptr);
  }
  if (options.keep_assembly) {
    absl::StatusOr<std::string> a = detail::emit_machine_code(**m, **tm, /*assembly=*/true);
    if (!a.ok()) return a.status();
    impl->assembly = std::move(*a);
  }

  auto jit = make_jit(impl->target);
  if (!jit.ok()) return jit.status();
  impl->jit = std::move(*jit);
  if (options.keep_object) {
    absl::StatusOr<std::string> object = detail::emit_machine_code(**m, **tm, /*assembly=*/false);
    if (!object.ok()) return object.status();
    if (absl::Status s = add_object(*impl, std::move(*object)); !s.ok()) return s;
  } else {
    (*m)->setDataLayout(impl->jit->getDataLayout());
    if (llvm::Error e =
            impl->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(*m), std::move(ctx)))) {
      return llvm_error("cannot add the kernel module to the JIT", std::move(e));
    }
  }
  // Materialise every kernel now so that compile errors surface here, not at first lookup.
  auto result = std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
  for (const te::PrimFunc& f : funcs) {
    absl::StatusOr<KernelFn> fn = result->lookup(f.name);
    if (!fn.ok()) return fn.status();
  }
  install_workspace(*result->impl_->jit);
  return result;
}

absl::Status JitModule::add_object(Impl& impl, std::string object) {
  impl.object = std::move(object);
  if (llvm::Error e = impl.jit->addObjectFile(llvm::MemoryBuffer::getMemBuffer(
          llvm::StringRef(impl.object), "kernels.o", /*RequiresNullTerminator=*/false)))
    return llvm_error("cannot add the kernel object to the JIT", std::move(e));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<JitModule>> JitModule::load_object(
    std::string object, const std::vector<std::string>& names, const TargetSpec& target) {
  detail::initialize_llvm();
  auto impl = std::make_unique<Impl>();
  impl->target = target;
  if (absl::Status s = check_triple(target); !s.ok()) return s;
  auto jit = make_jit(target);
  if (!jit.ok()) return jit.status();
  impl->jit = std::move(*jit);
  if (absl::Status s = add_object(*impl, std::move(object)); !s.ok()) return s;
  auto result = std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
  for (const std::string& name : names) {
    absl::StatusOr<KernelFn> fn = result->lookup(name);
    if (!fn.ok())
      return absl::InternalError(str_cat("the kernel object has no usable '", name, "'"));
  }
  install_workspace(*result->impl_->jit);
  return result;
}

absl::StatusOr<KernelFn> JitModule::lookup(const std::string& name) const {
  auto sym = impl_->jit->lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return absl::NotFoundError(str_cat("the JIT module has no kernel '", name, "'"));
  }
  return sym->toPtr<KernelFn>();
}

const TargetSpec& JitModule::target() const {
  return impl_->target;
}
const std::string& JitModule::llvm_ir() const {
  return impl_->ir;
}
const std::string& JitModule::assembly() const {
  return impl_->assembly;
}
const std::string& JitModule::object() const {
  return impl_->object;
}

const char* llvm_version() {
  return LLVM_VERSION_STRING;
}

void run_kernel(KernelFn fn, void* const* args, int task_count, ThreadPool* pool) {
  if (task_count < 1) task_count = 1;
  if (pool) {
    pool->parallel_for(task_count,
                       [&](int64_t t) { fn(args, static_cast<int32_t>(t), task_count); });
    return;
  }
  for (int t = 0; t < task_count; ++t) fn(args, t, task_count);
}

}  // namespace collage::codegen
