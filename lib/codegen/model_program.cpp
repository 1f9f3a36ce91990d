#include "kiln/codegen/model_program.h"

#include "target_machine.h"

#include <fmt/format.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

namespace kiln::codegen {

namespace {

constexpr std::uint64_t kAlignment = 64; // docs/kernel-abi.md

std::int64_t round_up(std::int64_t bytes) {
  const auto a = static_cast<std::int64_t>(kAlignment);
  return std::max<std::int64_t>((bytes + a - 1) / a * a, a);
}

/// Builds the three functions of a model program into one module.
class ProgramEmitter {
public:
  ProgramEmitter(const ModelProgram& program, llvm::Module& module)
      : program_(program), module_(module), context_(module.getContext()), builder_(context_),
        ptr_(llvm::PointerType::getUnqual(context_)), i64_(builder_.getInt64Ty()) {}

  void emit() {
    declare_weights();
    emit_create();
    emit_run();
    emit_destroy();
  }

private:
  llvm::Function* define(const std::string& suffix, llvm::Type* result,
                         std::vector<llvm::Type*> params) {
    auto* type = llvm::FunctionType::get(result, params, false);
    auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                     program_.name + "_" + suffix, module_);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    return f;
  }

  llvm::FunctionCallee libc(const char* name, llvm::Type* result, std::vector<llvm::Type*> params) {
    return module_.getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
  }

  llvm::FunctionCallee wrapper(const std::string& symbol) {
    return module_.getOrInsertFunction(
        symbol, llvm::FunctionType::get(builder_.getVoidTy(), {ptr_}, false));
  }

  /// The weights as one private read-only array, 64-byte aligned, so that
  /// each constant's 64-byte aligned offset is an aligned address.
  void declare_weights() {
    if (program_.weights.empty())
      return;
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(
        llvm::StringRef(program_.weights.data(), program_.weights.size()), program_.weights.size(),
        builder_.getInt8Ty());
    auto* global = new llvm::GlobalVariable(module_, data->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, data,
                                            program_.name + "_weights");
    global->setAlignment(llvm::Align(kAlignment));
    weights_ = global;
  }

  llvm::Value* call_aligned_alloc(std::int64_t bytes) {
    return builder_.CreateCall(libc("aligned_alloc", ptr_, {i64_, i64_}),
                               {builder_.getInt64(kAlignment), builder_.getInt64(round_up(bytes))});
  }

  void call_free(llvm::Value* p) {
    builder_.CreateCall(libc("free", builder_.getVoidTy(), {ptr_}), {p});
  }

  /// Calls `symbol` with the call's arguments, stored into `args` (an
  /// array of at least as many pointers).
  void call(const std::string& symbol, const ProgramCall& c, llvm::Value* args, llvm::Value* state,
            const std::vector<llvm::Value*>& inputs, const std::vector<llvm::Value*>& outputs) {
    for (std::size_t a = 0; a < c.args.size(); ++a)
      builder_.CreateStore(pointer(c.args[a], state, inputs, outputs),
                           builder_.CreateConstInBoundsGEP1_64(ptr_, args, a));
    builder_.CreateCall(wrapper(symbol), {args});
  }

  llvm::Value* pointer(const ProgramPointer& p, llvm::Value* state,
                       const std::vector<llvm::Value*>& inputs,
                       const std::vector<llvm::Value*>& outputs) {
    switch (p.kind) {
    case ProgramPointer::State:
      return builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), state,
                                                 static_cast<std::uint64_t>(p.offset));
    case ProgramPointer::Weights:
      KILN_ASSERT(weights_ != nullptr, "a weights pointer needs weights");
      return builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), weights_,
                                                 static_cast<std::uint64_t>(p.offset));
    case ProgramPointer::Input:
      return inputs.at(static_cast<std::size_t>(p.index));
    case ProgramPointer::Output:
      return outputs.at(static_cast<std::size_t>(p.index));
    }
    kiln_unreachable("unknown program pointer");
  }

  llvm::Value* args_array() {
    std::size_t most = 1;
    for (const ProgramCall& c : program_.calls)
      most = std::max(most, c.args.size());
    return builder_.CreateAlloca(ptr_, builder_.getInt64(most), "args");
  }

  /// Returns null from the current function when `p` is null.
  void return_null_if_null(llvm::Function* f, llvm::Value* p, llvm::Value* also_free = nullptr) {
    auto* fail = llvm::BasicBlock::Create(context_, "out_of_memory", f);
    auto* ok = llvm::BasicBlock::Create(context_, "allocated", f);
    builder_.CreateCondBr(builder_.CreateIsNull(p), fail, ok);
    builder_.SetInsertPoint(fail);
    if (also_free)
      call_free(also_free);
    builder_.CreateRet(llvm::ConstantPointerNull::get(ptr_));
    builder_.SetInsertPoint(ok);
  }

  /// NAME_create: the state block zeroed, then every prepack with the
  /// inputs and outputs pointing at zeroed scratch (prepack reads only the
  /// constants, but every pointer it gets must be valid).
  void emit_create() {
    llvm::Function* f = define("create", ptr_, {});
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", f));
    llvm::Value* args = args_array();
    llvm::Value* state = call_aligned_alloc(program_.state_bytes);
    return_null_if_null(f, state);
    builder_.CreateMemSet(state, builder_.getInt8(0), round_up(program_.state_bytes),
                          llvm::MaybeAlign(kAlignment));
    const bool prepacks = std::any_of(program_.calls.begin(), program_.calls.end(),
                                      [](const ProgramCall& c) { return !c.prepack.empty(); });
    if (prepacks) {
      std::int64_t scratch_bytes = 0;
      std::vector<std::int64_t> in_at, out_at;
      for (std::int64_t b : program_.input_bytes) {
        in_at.push_back(scratch_bytes);
        scratch_bytes += round_up(b);
      }
      for (std::int64_t b : program_.output_bytes) {
        out_at.push_back(scratch_bytes);
        scratch_bytes += round_up(b);
      }
      llvm::Value* scratch = call_aligned_alloc(scratch_bytes);
      return_null_if_null(f, scratch, state);
      builder_.CreateMemSet(scratch, builder_.getInt8(0), round_up(scratch_bytes),
                            llvm::MaybeAlign(kAlignment));
      std::vector<llvm::Value*> inputs, outputs;
      for (std::int64_t at : in_at)
        inputs.push_back(builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), scratch,
                                                             static_cast<std::uint64_t>(at)));
      for (std::int64_t at : out_at)
        outputs.push_back(builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), scratch,
                                                              static_cast<std::uint64_t>(at)));
      for (const ProgramCall& c : program_.calls)
        if (!c.prepack.empty())
          call(c.prepack, c, args, state, inputs, outputs);
      call_free(scratch);
    }
    builder_.CreateRet(state);
  }

  /// Loads the pointers of a `const float* const*` array and ORs into
  /// `bad` whether any is null or not 64-byte aligned.
  std::vector<llvm::Value*> load_buffers(llvm::Value* array, std::size_t count, llvm::Value*& bad) {
    std::vector<llvm::Value*> out;
    for (std::size_t i = 0; i < count; ++i) {
      llvm::Value* p =
          builder_.CreateLoad(ptr_, builder_.CreateConstInBoundsGEP1_64(ptr_, array, i));
      llvm::Value* low =
          builder_.CreateAnd(builder_.CreatePtrToInt(p, i64_), builder_.getInt64(kAlignment - 1));
      bad = builder_.CreateOr(bad, builder_.CreateIsNull(p));
      bad = builder_.CreateOr(bad, builder_.CreateIsNotNull(low));
      out.push_back(p);
    }
    return out;
  }

  void emit_run() {
    llvm::Function* f = define("run", builder_.getInt32Ty(), {ptr_, ptr_, ptr_});
    llvm::Value* state = f->getArg(0);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", f));
    llvm::Value* args = args_array();
    const std::size_t num_inputs = program_.input_bytes.size();
    const std::size_t num_outputs = program_.output_bytes.size();
    auto* fail = llvm::BasicBlock::Create(context_, "bad_argument", f);
    auto* arrays = llvm::BasicBlock::Create(context_, "arrays", f);
    auto* body = llvm::BasicBlock::Create(context_, "body", f);
    // The model and the two arrays first: the buffers are read from them.
    llvm::Value* null_array =
        builder_.CreateOr(builder_.CreateIsNull(state), builder_.CreateIsNull(f->getArg(2)));
    if (num_inputs)
      null_array = builder_.CreateOr(null_array, builder_.CreateIsNull(f->getArg(1)));
    builder_.CreateCondBr(null_array, fail, arrays);
    builder_.SetInsertPoint(arrays);
    llvm::Value* bad = builder_.getFalse();
    std::vector<llvm::Value*> inputs =
        num_inputs ? load_buffers(f->getArg(1), num_inputs, bad) : std::vector<llvm::Value*>();
    std::vector<llvm::Value*> outputs = load_buffers(f->getArg(2), num_outputs, bad);
    builder_.CreateCondBr(bad, fail, body);
    builder_.SetInsertPoint(fail);
    builder_.CreateRet(builder_.getInt32(1));
    builder_.SetInsertPoint(body);
    for (const ProgramCall& c : program_.calls)
      call(c.kernel, c, args, state, inputs, outputs);
    for (const ProgramCopy& copy : program_.copies)
      builder_.CreateMemCpy(
          outputs.at(static_cast<std::size_t>(copy.output)), llvm::MaybeAlign(kAlignment),
          pointer(copy.from, state, inputs, outputs), llvm::MaybeAlign(kAlignment), copy.bytes);
    builder_.CreateRet(builder_.getInt32(0));
  }

  void emit_destroy() {
    llvm::Function* f = define("destroy", builder_.getVoidTy(), {ptr_});
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", f));
    call_free(f->getArg(0));
    builder_.CreateRetVoid();
  }

  const ModelProgram& program_;
  llvm::Module& module_;
  llvm::LLVMContext& context_;
  llvm::IRBuilder<> builder_;
  llvm::PointerType* ptr_;
  llvm::IntegerType* i64_;
  llvm::GlobalVariable* weights_ = nullptr;
};

} // namespace

Expected<std::vector<char>> compile_model_program(const ModelProgram& program,
                                                  const Target& target) {
  auto machine = create_target_machine(target);
  if (!machine)
    return machine.error();
  llvm::LLVMContext context;
  llvm::Module module(program.name + "_model", context);
  module.setTargetTriple((*machine)->getTargetTriple().str());
  module.setDataLayout((*machine)->createDataLayout());
  ProgramEmitter(program, module).emit();
  std::string problems;
  llvm::raw_string_ostream os(problems);
  KILN_ASSERT(!llvm::verifyModule(module, &os), "a model program's IR is invalid: " + os.str());
  return emit_file(module, **machine, llvm::CodeGenFileType::ObjectFile);
}

} // namespace kiln::codegen
