#include "sketch_analysis.h"

#include "kiln/ir/expr_visitor.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::space {

namespace {

/// Variables and loads in an expression.
class Uses : public ir::ExprVisitor {
public:
  std::set<std::string> vars;
  std::vector<const ir::Load*> loads;
  bool calls = false;
  using ExprVisitor::visit;
  void visit(const ir::Var* v) override { vars.insert(v->name); }
  void visit(const ir::Load* l) override {
    loads.push_back(l);
    ExprVisitor::visit(l);
  }
  void visit(const ir::Call* c) override {
    calls = true;
    ExprVisitor::visit(c);
  }
};

/// A load of a reduction and the variables its indices use.
struct LoadUse {
  const ir::Load* load;
  std::set<std::string> vars;
};

} // namespace

/// The loads in the body of `reduce`, each with the variables of its indices.
static std::vector<LoadUse> reduction_loads(const ir::Reduce& reduce) {
  Uses u;
  u.visit(reduce.body);
  std::vector<LoadUse> out;
  for (const ir::Load* l : u.loads) {
    Uses idx;
    for (const ir::Expr& e : l->indices)
      idx.visit(e);
    out.push_back({l, std::move(idx.vars)});
  }
  return out;
}

static bool strictly_inlineable(const ir::Stage& s) {
  if (s.is_placeholder() || s.is_output || s.reduction())
    return false;
  Uses u;
  u.visit(s.body);
  return !u.calls;
}

Analysis::Analysis(const ir::ComputeDAG& dag) : dag_(dag) {
  const auto& stages = dag.stages();
  // Inlining is decided first (a stage's consumers come after it).
  for (const ir::Stage& s : stages)
    if (strictly_inlineable(s))
      inlined_.insert(s.name);
  std::map<std::string, const ir::Stage*> inline_map;
  for (const ir::Stage& s : stages) {
    ir::Stage eff = s;
    if (s.body.defined())
      eff.body = ir::inline_stages(s.body, inline_map);
    effective_.push_back(eff);
    if (inlined_.count(s.name))
      inline_map[s.name] = &(storage_[s.name] = eff);
  }
}

std::vector<int> Analysis::consumers(int index) const {
  std::vector<int> out;
  const std::string& name = dag_.stage(index).name;
  for (size_t i = 0; i < effective_.size(); ++i) {
    if (inlined_.count(effective_[i].name) || !effective_[i].body.defined())
      continue;
    Uses u;
    u.visit(effective_[i].body);
    for (const ir::Load* l : u.loads)
      if (l->tensor == name) {
        out.push_back(static_cast<int>(i));
        break;
      }
  }
  return out;
}

bool Analysis::has_data_reuse(int index) const {
  const ir::Stage& s = effective_[index];
  const ir::Reduce* r = s.reduction();
  if (!r)
    return false;
  for (const LoadUse& l : reduction_loads(*r))
    for (const ir::IterVar& a : s.axes)
      if (a.extent > 1 && !l.vars.count(a.name))
        return true;
  return false;
}

std::string Analysis::rfactor_axis(int index, std::int64_t min_extent) const {
  const ir::Stage& s = effective_[index];
  const ir::Reduce* r = s.reduction();
  if (!r || r->axes.empty() || inlined(s.name))
    return "";
  const ir::IterVar& axis = r->axes.back();
  if (axis.extent < min_extent)
    return "";
  const bool reuse = has_data_reuse(index);
  for (const LoadUse& l : reduction_loads(*r)) {
    const auto* v = l.load->indices.empty() ? nullptr : l.load->indices.back().as<ir::Var>();
    if (!v || v->name != axis.name)
      continue;
    const bool read_once = std::all_of(s.axes.begin(), s.axes.end(), [&](const ir::IterVar& a) {
      return a.extent == 1 || l.vars.count(a.name);
    });
    if (!reuse || read_once)
      return axis.name;
  }
  return "";
}

bool Analysis::rows_fusable(int output) const {
  const ir::Stage& out = dag_.stage(output);
  if (!out.is_output || out.reduction() || out.axes.size() != 2)
    return false;
  bool reduces = false;
  for (size_t i = 0; i < effective_.size(); ++i) {
    const ir::Stage& s = effective_[i];
    if (s.is_placeholder() || inlined(s.name))
      continue;
    if (s.is_output && static_cast<int>(i) != output)
      return false;
    if (s.axes.empty() || s.axes[0].extent != out.axes[0].extent)
      return false;
    reduces |= s.reduction() != nullptr;
    Uses u;
    u.visit(s.body);
    for (const ir::Load* l : u.loads) {
      int read = dag_.find_stage(l->tensor);
      if (read < 0 || dag_.stage(read).is_placeholder())
        continue;
      const auto* row = l->indices.empty() ? nullptr : l->indices[0].as<ir::Var>();
      if (!row || row->name != s.axes[0].name)
        return false;
    }
  }
  return reduces;
}

std::optional<PackableInput> Analysis::packable_input(int index) const {
  const ir::Stage& s = dag_.stage(index);
  const ir::Reduce* r = s.reduction();
  if (!r || s.axes.size() < 2)
    return std::nullopt;
  for (const LoadUse& l : reduction_loads(*r)) {
    int producer = dag_.find_stage(l.load->tensor);
    if (producer < 0 || !dag_.stage(producer).is_placeholder())
      continue;
    bool skips = std::any_of(s.axes.begin(), s.axes.end(), [&](const ir::IterVar& a) {
      return a.extent > 1 && !l.vars.count(a.name);
    });
    if (!skips || !l.vars.count(s.axes.back().name))
      continue;
    PackableInput out{l.load->tensor, {}};
    for (const ir::IterVar& a : s.axes)
      if (l.vars.count(a.name))
        out.axes.push_back(a.name);
    return out;
  }
  return std::nullopt;
}

std::optional<VectorizableWeights> Analysis::vectorizable_weights(int index) const {
  const ir::Stage& s = dag_.stage(index);
  const ir::Reduce* r = s.reduction();
  if (!r || s.axes.size() < 2)
    return std::nullopt;
  std::vector<LoadUse> loads = reduction_loads(*r);
  for (size_t i = 0; i < loads.size(); ++i) {
    int producer = dag_.find_stage(loads[i].load->tensor);
    if (producer < 0 || !dag_.stage(producer).is_placeholder() ||
        loads[i].vars.count(s.axes.back().name))
      continue;
    for (size_t a = s.axes.size() - 1; a-- > 0;) {
      const std::string& axis = s.axes[a].name;
      bool alone = true;
      for (size_t j = 0; j < loads.size(); ++j)
        alone = alone && (j == i || !loads[j].vars.count(axis));
      if (s.axes[a].extent > 1 && loads[i].vars.count(axis) && alone)
        return VectorizableWeights{loads[i].load->tensor, axis};
    }
  }
  return std::nullopt;
}

std::vector<std::string> Analysis::broadcast_axes(int index, const std::string& vector_axis) const {
  const ir::Stage& s = effective_[index];
  const ir::Reduce* r = s.reduction();
  if (!r)
    return {};
  std::vector<std::string> out;
  std::vector<LoadUse> loads = reduction_loads(*r);
  for (const ir::IterVar& a : s.axes)
    if (std::any_of(loads.begin(), loads.end(), [&](const LoadUse& l) {
          return !l.vars.count(vector_axis) && l.vars.count(a.name);
        }))
      out.push_back(a.name);
  return out;
}

bool Analysis::broadcast_only(int reader, const std::string& tensor,
                              std::string vector_axis) const {
  const ir::Stage& s = dag_.stage(reader);
  const ir::Reduce* r = s.reduction();
  if (!r || s.axes.empty())
    return false;
  if (vector_axis.empty())
    vector_axis = s.axes.back().name;
  bool read = false;
  for (const LoadUse& l : reduction_loads(*r)) {
    if (l.load->tensor != tensor)
      continue;
    if (l.vars.count(vector_axis))
      return false;
    read = true;
  }
  return read;
}

int Analysis::elementwise_consumer(int index) const {
  std::vector<int> cs = consumers(index);
  if (cs.size() != 1)
    return -1;
  const ir::Stage& c = effective_[cs[0]];
  const ir::Stage& s = dag_.stage(index);
  if (c.reduction() || c.axes.size() != s.axes.size())
    return -1;
  for (size_t d = 0; d < s.axes.size(); ++d)
    if (c.axes[d].extent != s.axes[d].extent)
      return -1;
  Uses u;
  u.visit(c.body);
  for (const ir::Load* l : u.loads) {
    if (l->tensor != s.name)
      continue;
    for (size_t d = 0; d < l->indices.size(); ++d) {
      const auto* v = l->indices[d].as<ir::Var>();
      if (!v || v->name != c.axes[d].name)
        return -1;
    }
  }
  return cs[0];
}

ir::Stage scheduled_stage(const ir::ComputeDAG& dag, const std::string& name) {
  int index = dag.find_stage(name);
  if (index >= 0)
    return dag.stage(index);
  const std::string suffix = ".cache";
  const ir::Stage& source = dag.stage(dag.find_stage(name.substr(0, name.size() - suffix.size())));
  ir::Stage copy;
  copy.name = name;
  copy.dtype = source.dtype;
  for (size_t d = 0; d < source.axes.size(); ++d)
    copy.axes.push_back({fmt::format("ax{}", d), source.axes[d].extent});
  return copy;
}

} // namespace kiln::space
