// Private to codegen: the state and the parts of the loop nest → LLVM IR
// emitter, one class whose members are defined by concern, as clang's
// CodeGenFunction is across CGStmt.cpp and CGExpr.cpp:
//
//   llvm_emitter.cpp   the module, the kernel's entry points and types
//   emit_stmt.cpp      statements: loops (serial, vector, parallel), stores,
//                      allocations, ifs
//   emit_expr.cpp      expressions: arithmetic, comparisons, casts, selects
//   vector_access.cpp  memory: element addresses, loads, and how the lanes of
//                      a vector loop touch a buffer (uniform, contiguous,
//                      strided)
#ifndef KILN_LIB_CODEGEN_EMITTER_H
#define KILN_LIB_CODEGEN_EMITTER_H

#include "kiln/codegen/target.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/schedule/stmt_visitor.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::codegen {

/// Emits one lowered function into a module. Statements are visited
/// (StmtVisitor); expressions are emitted by emit_expr.
class Emitter : private schedule::StmtVisitor {
public:
  Emitter(llvm::Module& module, const Target& target)
      : module_(module), ctx_(module.getContext()), target_(target), b_(ctx_) {}

  /// The kernel and its packed wrapper, and the prepack function and its
  /// wrapper when the function has one (llvm_emitter.h).
  void emit(const schedule::LoweredFunc& func);

private:
  /// A buffer in scope and its base pointer.
  struct BoundBuffer {
    schedule::Buffer buffer;
    llvm::Value* base;
  };

  /// How the lanes of a vector loop touch a buffer.
  enum class AccessKind { Uniform, Contiguous, Strided };
  struct Access {
    AccessKind kind;
    llvm::Value* ptr; ///< element pointer (Uniform, Contiguous) or vector of pointers
    /// Strided by a constant: lane 0's element pointer and the stride in
    /// elements; null and 0 when the lanes' offsets are not a constant step.
    llvm::Value* first = nullptr;
    std::int64_t stride = 0;
  };

  /// The vector loop being emitted as vector code.
  struct VectorLoop {
    std::string var;
    unsigned lanes;
    std::int64_t first = 0; ///< the loop variable's value in lane 0 (a chunk's start)
  };

  /// A call of glibc's libmvec for `fn` on a vector of `type`, split into
  /// the widest variant the target runs (vector_math.h); nullptr when none
  /// fits.
  llvm::Value* emit_libmvec_call(ir::Intrinsic fn, llvm::Value* x, llvm::FixedVectorType* type);
  /// libm's scalar function for an intrinsic LLVM lacks (erf, tanh), per lane
  /// for a vector.
  llvm::Value* emit_libm_call(ir::Intrinsic fn, llvm::Value* x);

  // --- the function (llvm_emitter.cpp) ---

  void set_target_attributes(llvm::Function* f);
  /// One entry point: a pointer per argument, `body` its code.
  llvm::Function* emit_function(const std::string& name, const std::vector<schedule::Buffer>& args,
                                const schedule::Stmt& body);
  /// `symbol(void** args)`, which calls `fn` with the array's pointers.
  void emit_packed_wrapper(llvm::Function* fn, const std::string& symbol,
                           const std::vector<schedule::Buffer>& args);
  llvm::Type* llvm_type(ir::ScalarType t);

  // --- statements (emit_stmt.cpp) ---

  using StmtVisitor::visit;
  void visit(const schedule::For* f) override;
  void visit(const schedule::Store* s) override;
  void visit(const schedule::Allocate* a) override;
  void visit(const schedule::IfThenElse* s) override;

  /// A bottom-tested loop: every extent is at least 1.
  void emit_serial(const schedule::For* f);
  /// The loop becomes vector code: its variable is the lane number, every
  /// value that depends on it a vector. An extent that is not a power of two
  /// runs as chunks of power-of-two widths (56 = 32 + 16 + 8): type
  /// legalisation would scalarise a `<56 x float>` whole.
  void emit_vector(const schedule::For* f);
  void emit_vector_chunk(const schedule::For* f, std::int64_t offset, std::int64_t width);
  /// A one-lane remainder is scalar code with the variable a constant.
  void emit_single_lane(const schedule::For* f, std::int64_t lane);
  /// The body of a parallel loop is outlined into `task(index, closure)`,
  /// which the runtime's thread pool calls for every index. The closure holds
  /// the variables and buffers in scope; the task passes them on to a body
  /// function whose pointer parameters are noalias again, and which is
  /// inlined into the task so the optimiser keeps that knowledge.
  void emit_parallel(const schedule::For* f);
  /// A store in a vector loop under a lane-dependent guard: only the active
  /// lanes write.
  void emit_masked_store(llvm::Value* value, const Access& access, llvm::Align align);
  /// An if whose condition differs between lanes (the guard of a split tail
  /// inside a vector loop): both sides run, each masked to its lanes, so
  /// the loop stays vector code.
  void emit_masked_if(const schedule::IfThenElse* s, llvm::Value* cond);

  // --- expressions (emit_expr.cpp) ---

  llvm::Value* emit_expr(const ir::Expr& e);
  llvm::Value* lookup_var(const std::string& name);
  llvm::Value* emit_cast(const ir::Cast* c);
  /// `x * y + z` as one fused multiply-add (float Add of a Mul).
  llvm::Value* emit_fma(const ir::Binary* op);
  static bool is_float_mul(const ir::Expr& e);
  llvm::Value* emit_binary(const ir::Binary* op);
  /// Integer division rounding toward negative infinity, as instructions
  /// (ir::floor_div computes it on constants).
  llvm::Value* emit_floor_div(llvm::Value* a, llvm::Value* b);
  /// Integer remainder with the sign of the divisor, as instructions
  /// (ir::floor_mod computes it on constants).
  llvm::Value* emit_floor_mod(llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_compare(const ir::Compare* c);
  /// Evaluates `then_value` or `else_value` under a branch, joined by a phi;
  /// used when an operand may trap and must not run when not taken.
  template <typename Then, typename Else>
  llvm::Value* branch(llvm::Value* cond, Then then_value, Else else_value, llvm::Type* type);
  llvm::Value* emit_logical(const ir::Logical* l);
  llvm::Value* emit_select(const ir::Select* s);
  llvm::Value* emit_call(const ir::Call* c);

  // --- memory and vector lanes (vector_access.cpp) ---

  const BoundBuffer& lookup_buffer(const std::string& name);
  /// Address of one element (scalar code).
  llvm::Value* element_ptr(const BoundBuffer& buf, const std::vector<ir::Expr>& indices);
  /// <first, first+1, …, first+lanes-1> of an integer type.
  llvm::Value* lane_numbers(llvm::Type* type);
  /// A scalar broadcast to every lane (vectors pass through).
  llvm::Value* widen(llvm::Value* v);
  /// Makes two operands both scalars or both vectors.
  void match_lanes(llvm::Value*& a, llvm::Value*& b);
  /// `scalar` as a vector type when `like_value` is a vector.
  llvm::Type* like(llvm::Value* like_value, llvm::Type* scalar);
  /// How the lanes of a vector loop touch a buffer: all the same element,
  /// consecutive elements, or anything else (gather / scatter). Each index is
  /// split into `coefficient × lane + rest`; a non-affine rest that does not
  /// involve the lane (the `f % 4 * 256` of a fused loop) is the same in
  /// every lane and does not force a gather.
  Access analyze_access(const BoundBuffer& buf, const std::vector<ir::Expr>& indices);
  /// A load; with `zeros_unless` (a condition the same for every lane) it
  /// reads a block of zeros instead of the buffer when the condition fails,
  /// and is null when the block is too small for the lanes' span.
  llvm::Value* emit_load(const ir::Load* l, llvm::Value* zeros_unless = nullptr);
  /// The module's block of `kZeroBytes` zero bytes (64-byte aligned).
  llvm::Value* zero_block();
  static constexpr std::int64_t kZeroBytes = 4096;
  /// Lanes a small constant stride apart, loaded as whole vectors over the
  /// elements they span and picked out with one shuffle; null when the
  /// stride is too large for that to pay.
  llvm::Value* emit_deinterleaved_load(llvm::Type* elem, const Access& access, llvm::Align align);
  /// A divisor that cannot fault in inactive lanes (they divide by 1).
  llvm::Value* safe_divisor(llvm::Value* d);
  /// An element address; not `inbounds` under a mask, where inactive lanes
  /// may compute addresses outside the buffer.
  llvm::Value* gep(llvm::Type* elem, llvm::Value* base, llvm::Value* offset);
  /// Flat row-major offset of an element as an i64 value (Horner form).
  llvm::Value* flat_offset(const BoundBuffer& buf, const std::vector<ir::Expr>& indices);

  /// Runs `emit` with only the lanes of `lanes` (and of any enclosing mask)
  /// active: loads in it become masked loads or gathers, stores masked
  /// stores or scatters.
  template <typename Emit> llvm::Value* masked(llvm::Value* lanes, Emit emit) {
    llvm::Value* saved = mask_;
    mask_ = saved ? b_.CreateAnd(saved, lanes) : lanes;
    llvm::Value* v = emit();
    mask_ = saved;
    return v;
  }

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  const Target& target_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<std::pair<std::string, llvm::Value*>> vars_;
  std::vector<BoundBuffer> buffers_;
  std::optional<VectorLoop> vector_;
  llvm::Value* mask_ = nullptr; ///< active lanes (masked select side or if), or null
  int parallel_depth_ = 0;
  int parallel_count_ = 0;
};

} // namespace kiln::codegen

#endif // KILN_LIB_CODEGEN_EMITTER_H
