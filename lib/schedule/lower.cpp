#include "kiln/schedule/lower.h"

#include "auto_unroll.h"
#include "nest_builder.h"
#include "simplify.h"
#include "unroll_loops.h"
#include "vector_layout.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace kiln::schedule {

using ir::Expr;

/// KILN_DEBUG as a number (0 when unset or not a number).
static int debug_level() {
  const char* text = std::getenv("KILN_DEBUG");
  return text ? std::atoi(text) : 0;
}

namespace {

/// Shows the nest after each pass of lower(): to LowerOptions::trace, and
/// with KILN_DEBUG >= 2 on stderr. Costs nothing when neither is on, as
/// lower() runs for every program the cost model scores.
class PassLog {
public:
  PassLog(const LowerOptions& options, const std::string& func)
      : trace_(options.trace), func_(func) {
    static const int level = debug_level();
    print_ = level >= 2;
  }

  /// The nest `pass` made, passed on. On stderr a pass that changed
  /// nothing (its result is its input node) prints no nest.
  Stmt operator()(std::string_view pass, Stmt nest) {
    if (print_)
      print(pass, nest);
    if (trace_)
      trace_(pass, nest);
    return nest;
  }

private:
  void print(std::string_view pass, const Stmt& nest) {
    if (last_.defined() && nest.same_as(last_))
      fmt::print(stderr, "kiln: lowering {} after {}: unchanged\n", func_, pass);
    else
      fmt::print(stderr, "kiln: lowering {} after {}:\n{}\n", func_, pass, to_string(nest, 1));
    last_ = nest;
  }

  const std::function<void(std::string_view, const Stmt&)>& trace_;
  const std::string& func_;
  bool print_ = false;
  Stmt last_; ///< the nest printed last
};

} // namespace

LoweredFunc lower(const State& state, const LowerOptions& options) {
  const ir::ComputeDAG& dag = state.dag();
  LoweredFunc func;
  func.name = kernel_name(dag);
  for (int index : dag.arguments())
    func.args.push_back(stage_buffer(dag.stage(index), BufferScope::Argument));
  PassLog log(options, func.name);

  BuiltNest built = build_nest(state);
  // The prepack nest goes through the same passes, unlogged: the kernel's
  // nest is what the trace shows (dump --stage loopnest shows both).
  Stmt nest = log("build_nest", built.body);
  Stmt prepack = built.prepack;
  nest = log("mark_auto_unroll", mark_auto_unroll(nest, built.auto_unroll_steps));
  if (prepack.defined())
    prepack = mark_auto_unroll(prepack, built.auto_unroll_steps);
  // One layout for both nests: the prepack function writes the packed
  // buffers in the order the kernel's vector loops read them.
  VectorLayout layout({nest, prepack}, built.packed);
  nest = log("vector_dims_innermost", layout.apply(nest));
  prepack = layout.apply(prepack);
  for (const Buffer& b : built.packed)
    func.args.push_back(layout.apply(b));
  if (options.expand_unrolled) {
    // The builder made its statements simplified; unrolling puts constants
    // into the copies, which simplify folds.
    nest = log("unroll_loops", unroll_loops(nest));
    nest = log("simplify", simplify(nest));
    if (prepack.defined())
      prepack = simplify(unroll_loops(prepack));
  }
  func.body = nest;
  func.prepack = prepack;
  return func;
}

LoweredFunc lower_naive(const ir::ComputeDAG& dag) {
  return lower(State(dag));
}

std::string kernel_name(const ir::ComputeDAG& dag) {
  std::string name = "kiln_";
  for (char c : dag.name())
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

Buffer stage_buffer(const ir::Stage& stage, BufferScope scope) {
  return Buffer{stage.name, stage.dtype, stage.shape(), scope};
}

Expr reduce_identity(ir::ReduceOp op, ir::ScalarType type) {
  if (op == ir::ReduceOp::Sum)
    return ir::is_float(type) ? ir::FloatImm::make(0.0, type) : ir::IntImm::make(0, type);
  bool is_max = op == ir::ReduceOp::Max;
  if (ir::is_float(type))
    return ir::FloatImm::make(is_max ? -std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::infinity(),
                              type);
  if (type == ir::ScalarType::I32)
    return ir::IntImm::make(is_max ? std::numeric_limits<std::int32_t>::min()
                                   : std::numeric_limits<std::int32_t>::max(),
                            type);
  return ir::IntImm::make(is_max ? std::numeric_limits<std::int64_t>::min()
                                 : std::numeric_limits<std::int64_t>::max(),
                          type);
}

Expr reduce_combine(ir::ReduceOp op, Expr acc, Expr value) {
  switch (op) {
  case ir::ReduceOp::Sum:
    return acc + value;
  case ir::ReduceOp::Max:
    return ir::max(acc, value);
  case ir::ReduceOp::Min:
    return ir::min(acc, value);
  }
  return acc;
}

} // namespace kiln::schedule
