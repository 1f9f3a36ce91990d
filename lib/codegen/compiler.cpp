#include "kiln/codegen/compiler.h"

#include "target_machine.h"
#include "vector_math.h"

#include "kiln/codegen/llvm_emitter.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

struct Compiler::Impl {
  Target target;
  std::unique_ptr<llvm::TargetMachine> machine;
};

Compiler::Compiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Compiler::~Compiler() = default;

Expected<std::unique_ptr<Compiler>> Compiler::create(const Target& target) {
  auto machine = create_target_machine(target);
  if (!machine)
    return machine.error();
  auto impl = std::make_unique<Impl>(Impl{target, std::move(*machine)});
  return std::unique_ptr<Compiler>(new Compiler(std::move(impl)));
}

const Target& Compiler::target() const {
  return impl_->target;
}

/// LLVM's standard -O3 module pipeline, tuned for the target, without its
/// loop unroller and its SLP vectorizer.
static void optimize(llvm::Module& module, llvm::TargetMachine& machine, const Target& target) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  // LLVM 19's SLP vectorizer miscompiles some fully unrolled kernels: it
  // packs their scalar loads into 8- and 16-lane gathers and the answer is
  // wrong (test/e2e/schedule_steps_test.cpp has one; `opt-19 -O3` reproduces
  // it, `-vectorize-slp=false` or `-slp-max-vf=4` does not). kiln emits its
  // vector loops as vectors, and SLP left the benchmark kernels unchanged,
  // so it is off: a faster wrong kernel is worth nothing.
  tuning.SLPVectorization = false;
  // The schedule decides what is unrolled (unroll steps, auto_unroll), so
  // LLVM's partial and runtime unrolling is off: it second-guessed the
  // schedule, which the cost model's features then misdescribed, and it
  // cost half of the compile time without making the kernels faster.
  // (LLVM would still honour explicit unroll metadata; kiln emits none.)
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(&machine, tuning);
  // The loop vectorizer may widen scalar exp/log calls into libmvec's vector
  // variants (kiln's own vector loops call them directly: vector_math.h).
  llvm::TargetLibraryInfoImpl library_info(machine.getTargetTriple());
  if (uses_libmvec(target))
    library_info.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86,
                                                    machine.getTargetTriple());
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(library_info); });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
}

Expected<std::vector<char>> emit_file(llvm::Module& module, llvm::TargetMachine& machine,
                                      llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, type))
    return Error("compile-error", fmt::format("LLVM cannot emit this file type for {}",
                                              machine.getTargetTriple().str()));
  passes.run(module);
  return std::vector<char>(buffer.begin(), buffer.end());
}

Expected<ObjectCode> Compiler::compile(const schedule::LoweredFunc& func) {
  ObjectCode out;
  out.kernel = func.name;
  out.packed_kernel = packed_symbol(func.name);
  if (func.has_prepack())
    out.packed_prepack = packed_symbol(prepack_symbol(func.name));
  for (const schedule::Buffer& b : func.args)
    if (b.scope == schedule::BufferScope::Packed)
      out.packed_bytes.push_back(b.size_bytes());
  out.num_args = static_cast<int>(func.args.size());
  Stopwatch clock;
  llvm::LLVMContext context;
  auto module = emit_llvm_module(func, impl_->target, context, impl_->machine->createDataLayout());
  out.times.ir_ms = clock.lap_ms();
  optimize(*module, *impl_->machine, impl_->target);
  out.times.opt_ms = clock.lap_ms();
  auto bytes = emit_file(*module, *impl_->machine, llvm::CodeGenFileType::ObjectFile);
  if (!bytes)
    return bytes.error();
  out.bytes = std::move(*bytes);
  out.times.codegen_ms = clock.lap_ms();
  return out;
}

Expected<std::string> Compiler::dump(const schedule::LoweredFunc& func, DumpStage stage) {
  llvm::LLVMContext context;
  auto module = emit_llvm_module(func, impl_->target, context, impl_->machine->createDataLayout());
  if (stage != DumpStage::LLVM)
    optimize(*module, *impl_->machine, impl_->target);
  if (stage == DumpStage::Assembly) {
    auto text = emit_file(*module, *impl_->machine, llvm::CodeGenFileType::AssemblyFile);
    if (!text)
      return text.error();
    return std::string(text->begin(), text->end());
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return os.str();
}

} // namespace kiln::codegen
