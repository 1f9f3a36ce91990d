#include "kiln/codegen/target.h"

#include "target_machine.h"

#include <fmt/format.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::codegen {

void initialize_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

Expected<std::unique_ptr<llvm::TargetMachine>> create_target_machine(const Target& target) {
  initialize_llvm_targets();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!t)
    return Error("unknown-target",
                 fmt::format("LLVM has no target for triple '{}': {}; use a triple such as "
                             "x86_64-linux-gnu",
                             target.triple, error));
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      t->createTargetMachine(target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return Error("unknown-target", fmt::format("cannot create a target machine for {} / {}",
                                               target.triple, target.cpu));
  return tm;
}

/// The widest vector register the CPU's features give: LLVM's cost model
/// answers with the CPU's *preferred* width, which for many AVX-512 parts
/// (Skylake-X through Rocket Lake and the server cores a hypervisor reports
/// under those names) is 256 bits, chosen to avoid the clock drop of 512-bit
/// instructions in mixed code. Tensor kernels are long FMA loops where the
/// 512-bit path does twice the work per instruction, so kiln asks
/// for the widest registers and marks its kernels with that width
/// ("prefer-vector-width"), so that LLVM's own vectorisers agree.
static int vector_width_bits(llvm::TargetMachine& tm) {
  llvm::LLVMContext ctx;
  llvm::Module m("probe", ctx);
  m.setDataLayout(tm.createDataLayout());
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                    llvm::Function::ExternalLinkage, "probe", m);
  fn->addFnAttr("target-cpu", tm.getTargetCPU());
  fn->addFnAttr("target-features", tm.getTargetFeatureString());
  fn->addFnAttr("prefer-vector-width", "512");
  llvm::TargetTransformInfo tti = tm.getTargetTransformInfo(*fn);
  auto bits = tti.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector);
  return static_cast<int>(bits.getFixedValue());
}

/// A cache size from sysfs ("32K", "1024K", "32M"), or 0.
static std::int64_t read_cache_bytes(int level, const char* type) {
  for (int index = 0; index < 8; ++index) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream lv(dir + "level"), ty(dir + "type"), sz(dir + "size");
    int l = 0;
    std::string t, s;
    if (!(lv >> l) || !(ty >> t) || !(sz >> s))
      continue;
    if (l != level || (t != type && t != "Unified"))
      continue;
    std::int64_t n = std::atoll(s.c_str());
    char unit = s.empty() ? 0 : s.back();
    return unit == 'K' ? n << 10 : unit == 'M' ? n << 20 : n;
  }
  return 0;
}

static std::string host_feature_string() {
  std::vector<std::string> parts;
  for (const auto& f : llvm::sys::getHostCPUFeatures())
    parts.push_back((f.second ? "+" : "-") + f.first().str());
  std::sort(parts.begin(), parts.end());
  std::string s;
  for (const std::string& p : parts) {
    if (!s.empty())
      s += ',';
    s += p;
  }
  return s;
}

static void fill_vector_width(Target& t) {
  auto tm = create_target_machine(t);
  t.vector_bits = tm ? vector_width_bits(**tm) : 128;
}

Target host_target() {
  Target t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  t.features = host_feature_string();
  t.cores = std::max(1u, std::thread::hardware_concurrency());
  t.l1d_bytes = read_cache_bytes(1, "Data");
  t.l2_bytes = read_cache_bytes(2, "Unified");
  t.l3_bytes = read_cache_bytes(3, "Unified");
  fill_vector_width(t);
  return t;
}

Expected<Target> named_target(const std::string& triple, const std::string& cpu) {
  Target host = host_target();
  Target t;
  t.triple = llvm::Triple::normalize(triple);
  t.cpu = cpu;
  t.cores = host.cores;
  t.l1d_bytes = host.l1d_bytes;
  t.l2_bytes = host.l2_bytes;
  t.l3_bytes = host.l3_bytes;
  // Check the CPU name on a generic machine first: LLVM only warns about an
  // unknown one and would quietly compile for a generic CPU.
  Target probe = t;
  probe.cpu = "";
  auto generic = create_target_machine(probe);
  if (!generic)
    return generic.error();
  if (!(*generic)->getMCSubtargetInfo()->isCPUStringValid(cpu))
    return Error("unknown-cpu", fmt::format("LLVM does not know the CPU '{}' for {}; run `llc "
                                            "-march=x86-64 -mcpu=help` to list the CPUs",
                                            cpu, t.triple));
  auto tm = create_target_machine(t);
  if (!tm)
    return tm.error();
  t.vector_bits = vector_width_bits(**tm);
  return t;
}

} // namespace kiln::codegen
