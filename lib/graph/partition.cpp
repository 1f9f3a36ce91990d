#include "kiln/graph/partition.h"

#include "kiln/support/error.h"

#include <set>

namespace kiln::graph {

namespace {

class Partitioner {
public:
  explicit Partitioner(const Graph& graph)
      : graph_(graph), group_of_(graph.nodes.size(), -1), consumers_(graph.tensors.size()) {
    for (std::size_t n = 0; n < graph.nodes.size(); ++n)
      for (int t : graph.nodes[n].inputs)
        if (consumers_[static_cast<std::size_t>(t)].empty() ||
            consumers_[static_cast<std::size_t>(t)].back() != static_cast<int>(n))
          consumers_[static_cast<std::size_t>(t)].push_back(static_cast<int>(n));
  }

  std::vector<Group> run() {
    for (std::size_t n = 0; n < graph_.nodes.size(); ++n) {
      const Node& node = graph_.nodes[n];
      if (is_view(node.kind))
        continue; // claimed by the node that reads through it, or left a view
      if (!is_anchor(node.kind) && join_producer(static_cast<int>(n)))
        continue;
      Group g;
      g.nodes.push_back(static_cast<int>(n));
      g.anchor = is_anchor(node.kind) ? static_cast<int>(n) : -1;
      g.output = node.output;
      group_of_[n] = static_cast<int>(groups_.size());
      groups_.push_back(std::move(g));
    }
    merge_diamonds();
    return in_dependency_order();
  }

private:
  /// Read by exactly one node and not a graph output: a value a group may
  /// keep to itself.
  bool private_to(int tensor, int reader) const {
    const auto& c = consumers_[static_cast<std::size_t>(tensor)];
    return c.size() == 1 && c.front() == reader && !graph_.is_graph_output(tensor);
  }

  /// Adds node `n` to the group whose result one of its inputs is, through
  /// reshapes read by nothing else.
  bool join_producer(int n) {
    const Node& node = graph_.nodes[static_cast<std::size_t>(n)];
    for (int t : node.inputs) {
      std::vector<int> views;
      int reader = n;
      int tensor = t;
      bool ok = true;
      int p = graph_.producer(tensor);
      while (ok && p >= 0 && is_view(graph_.nodes[static_cast<std::size_t>(p)].kind)) {
        ok = private_to(tensor, reader);
        views.push_back(p);
        reader = p;
        tensor = graph_.nodes[static_cast<std::size_t>(p)].inputs.front();
        p = graph_.producer(tensor);
      }
      if (!ok || p < 0 || !private_to(tensor, reader))
        continue;
      const int g = group_of_[static_cast<std::size_t>(p)];
      KILN_ASSERT(g >= 0 && groups_[static_cast<std::size_t>(g)].output == tensor,
                  "a tensor read by one node outside its group is the group's result");
      Group& group = groups_[static_cast<std::size_t>(g)];
      for (auto v = views.rbegin(); v != views.rend(); ++v) {
        group.nodes.push_back(*v);
        group_of_[static_cast<std::size_t>(*v)] = g;
      }
      group.nodes.push_back(n);
      group.output = node.output;
      group_of_[static_cast<std::size_t>(n)] = g;
      return true;
    }
    return false;
  }

  /// A group of elementwise nodes that reads nothing but one other group's
  /// result, which nothing else reads, joins that group: gelu's
  /// x * 0.5 * (1 + erf(x / sqrt 2)) reads x twice, so its nodes could not
  /// join one at a time.
  void merge_diamonds() {
    for (std::size_t e = 0; e < groups_.size(); ++e) {
      Group& elementwise = groups_[e];
      if (elementwise.anchor >= 0 || elementwise.nodes.empty())
        continue;
      std::set<int> members(elementwise.nodes.begin(), elementwise.nodes.end());
      int source = -1;
      bool single = true;
      for (int n : elementwise.nodes)
        for (int t : graph_.nodes[static_cast<std::size_t>(n)].inputs) {
          const int p = graph_.producer(t);
          if (graph_.tensor(t).is_constant() || members.count(p))
            continue;
          single = single && (source < 0 || source == t);
          source = t;
        }
      const int p = source < 0 ? -1 : graph_.producer(source);
      if (!single || p < 0 || is_view(graph_.nodes[static_cast<std::size_t>(p)].kind) ||
          graph_.is_graph_output(source))
        continue;
      bool all_inside = true;
      for (int c : consumers_[static_cast<std::size_t>(source)])
        all_inside = all_inside && members.count(c);
      const int g = group_of_[static_cast<std::size_t>(p)];
      if (!all_inside || g == static_cast<int>(e) ||
          groups_[static_cast<std::size_t>(g)].output != source)
        continue;
      Group& target = groups_[static_cast<std::size_t>(g)];
      for (int n : elementwise.nodes) {
        target.nodes.push_back(n);
        group_of_[static_cast<std::size_t>(n)] = g;
      }
      target.output = elementwise.output;
      elementwise.nodes.clear();
    }
    std::vector<Group> kept;
    std::vector<int> renumber(groups_.size(), -1);
    for (std::size_t g = 0; g < groups_.size(); ++g)
      if (!groups_[g].nodes.empty()) {
        renumber[g] = static_cast<int>(kept.size());
        kept.push_back(std::move(groups_[g]));
      }
    for (int& g : group_of_)
      if (g >= 0)
        g = renumber[static_cast<std::size_t>(g)];
    groups_ = std::move(kept);
  }

  /// A node that joined a group may read a group made after it (a residual
  /// add): order the groups so that each runs after those it reads.
  std::vector<Group> in_dependency_order() {
    const std::size_t n = groups_.size();
    std::vector<std::vector<bool>> reads(n, std::vector<bool>(n, false));
    for (std::size_t g = 0; g < n; ++g)
      for (int node : groups_[g].nodes)
        for (int t : graph_.nodes[static_cast<std::size_t>(node)].inputs) {
          int p = graph_.producer(graph_.view_base(t));
          int h = p < 0 ? -1 : group_of_[static_cast<std::size_t>(p)];
          if (h >= 0 && static_cast<std::size_t>(h) != g)
            reads[g][static_cast<std::size_t>(h)] = true;
        }
    std::vector<Group> ordered;
    std::vector<bool> done(n, false);
    while (ordered.size() < n) {
      bool progressed = false;
      for (std::size_t g = 0; g < n; ++g) {
        if (done[g])
          continue;
        bool ready = true;
        for (std::size_t h = 0; h < n && ready; ++h)
          ready = !reads[g][h] || done[h];
        if (!ready)
          continue;
        done[g] = true;
        ordered.push_back(groups_[g]);
        progressed = true;
        break;
      }
      KILN_ASSERT(progressed, "fused groups of a DAG cannot read each other in a cycle");
    }
    return ordered;
  }

  const Graph& graph_;
  std::vector<int> group_of_;
  std::vector<std::vector<int>> consumers_;
  std::vector<Group> groups_;
};

} // namespace

std::vector<Group> partition(const Graph& graph) {
  return Partitioner(graph).run();
}

} // namespace kiln::graph
