#include "kiln/graph/network.h"
#include "kiln/ir/interpreter.h"

#include <fmt/format.h>

#include <map>

namespace kiln::graph {

std::vector<std::vector<double>> interpret_network(const Network& net,
                                                   const std::vector<std::vector<double>>& inputs) {
  const Graph& g = net.graph;
  if (inputs.size() != g.inputs.size())
    throw UserError(
        Error("wrong-input-count", fmt::format("the model has {} inputs; {} buffers were given",
                                               g.inputs.size(), inputs.size())));
  std::map<int, std::vector<double>> values;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    values[g.inputs[i]] = inputs[i];
  for (std::size_t k = 0; k < net.kernels.size(); ++k) {
    const GroupKernel& kernel = net.kernels[k];
    const std::vector<int> args = kernel.dag.arguments();
    std::map<std::string, std::vector<double>> bound;
    for (std::size_t a = 0; a + 1 < args.size(); ++a) {
      const TensorInfo& t = g.tensor(kernel.arguments[a]);
      const std::string& name = kernel.dag.stage(args[a]).name;
      if (t.is_constant())
        bound[name] = std::vector<double>(t.data->begin(), t.data->end());
      else
        bound[name] = values.at(g.view_base(kernel.arguments[a]));
    }
    ir::Interpreter interpreter(kernel.dag, std::move(bound));
    values[kernel.arguments.back()] = interpreter.evaluate(args.back());
  }
  std::vector<std::vector<double>> outputs;
  for (int o : g.outputs)
    outputs.push_back(values.at(g.view_base(o)));
  return outputs;
}

} // namespace kiln::graph
