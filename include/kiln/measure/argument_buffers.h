// The buffers a kernel runs on: one per argument, 64-byte aligned (the entry
// point's contract), inputs filled from a seed so that every run and every
// candidate sees the same data.
#ifndef KILN_MEASURE_ARGUMENT_BUFFERS_H
#define KILN_MEASURE_ARGUMENT_BUFFERS_H

#include "kiln/ir/compute_dag.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::measure {

class ArgumentBuffers {
public:
  /// Inputs: floats uniform in [-1, 1], integers uniform in [-8, 8].
  /// Outputs start as NaN (or a sentinel for integers), so an element a
  /// kernel forgets to write is a mismatch, never a lucky zero.
  ArgumentBuffers(const ir::ComputeDAG& dag, std::uint64_t seed);

  /// One pointer per kernel argument, inputs then outputs.
  void** pointers() { return pointers_.data(); }
  int size() const { return static_cast<int>(args_.size()); }
  /// The DAG stage of argument `i`.
  int stage_of(int i) const { return args_[i].stage; }
  std::int64_t num_elements(int i) const { return args_[i].elements; }
  /// Element `flat` of argument `i`, converted to double.
  double value(int i, std::int64_t flat) const;
  /// Every element of argument `i`, converted to double.
  std::vector<double> values(int i) const;
  /// Every input as doubles, by stage name, for the interpreter.
  std::map<std::string, std::vector<double>> inputs_as_double() const;
  /// Resets the outputs to the sentinel.
  void poison_outputs();

private:
  struct Arg {
    std::string name;
    int stage;
    ir::ScalarType type;
    std::int64_t elements;
    bool is_output;
    std::unique_ptr<std::byte, void (*)(void*)> data{nullptr, nullptr};
  };
  std::vector<Arg> args_;
  std::vector<void*> pointers_;
};

} // namespace kiln::measure

#endif
