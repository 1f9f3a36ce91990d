#include "kiln/schedule/transform_step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace kiln::schedule {

using nlohmann::json;

std::string_view annotation_name(Annotation a) {
  switch (a) {
  case Annotation::None:
    return "none";
  case Annotation::Parallel:
    return "parallel";
  case Annotation::Vectorize:
    return "vectorize";
  case Annotation::Unroll:
    return "unroll";
  }
  return "?";
}

namespace {
struct TagOf {
  std::string_view operator()(const SplitStep&) const { return "split"; }
  std::string_view operator()(const FuseStep&) const { return "fuse"; }
  std::string_view operator()(const ReorderStep&) const { return "reorder"; }
  std::string_view operator()(const ComputeAtStep&) const { return "compute_at"; }
  std::string_view operator()(const ComputeInlineStep&) const { return "compute_inline"; }
  std::string_view operator()(const ComputeRootStep&) const { return "compute_root"; }
  std::string_view operator()(const CacheWriteStep&) const { return "cache_write"; }
  std::string_view operator()(const CacheReadStep&) const { return "cache_read"; }
  std::string_view operator()(const RfactorStep&) const { return "rfactor"; }
  std::string_view operator()(const AnnotateStep& s) const {
    return s.annotation == Annotation::None ? "annotate" : annotation_name(s.annotation);
  }
  std::string_view operator()(const PragmaStep&) const { return "pragma"; }
};

struct ToJson {
  json operator()(const SplitStep& s) const {
    return {{"stage", s.stage}, {"iter", s.iter}, {"factors", s.factors}};
  }
  json operator()(const FuseStep& s) const { return {{"stage", s.stage}, {"iters", s.iters}}; }
  json operator()(const ReorderStep& s) const { return {{"stage", s.stage}, {"order", s.order}}; }
  json operator()(const ComputeAtStep& s) const {
    return {{"stage", s.stage}, {"target", s.target}, {"iter", s.target_iter}};
  }
  json operator()(const ComputeInlineStep& s) const { return {{"stage", s.stage}}; }
  json operator()(const ComputeRootStep& s) const { return {{"stage", s.stage}}; }
  json operator()(const CacheWriteStep& s) const { return {{"stage", s.stage}}; }
  json operator()(const CacheReadStep& s) const {
    return {{"stage", s.stage}, {"reader", s.reader}};
  }
  json operator()(const RfactorStep& s) const {
    return {{"stage", s.stage}, {"iter", s.iter}, {"factor", s.factor}};
  }
  json operator()(const AnnotateStep& s) const {
    json j = {{"stage", s.stage}, {"iter", s.iter}};
    if (s.annotation == Annotation::None)
      j["annotation"] = "none";
    return j;
  }
  json operator()(const PragmaStep& s) const {
    return {{"stage", s.stage}, {"auto_unroll_max_step", s.auto_unroll_max_step}};
  }
};
} // namespace

std::string_view step_tag(const Step& step) {
  return std::visit(TagOf{}, step);
}

static json to_json_object(const Step& step) {
  json body = std::visit(ToJson{}, step);
  json j = {{"step", std::string(step_tag(step))}};
  for (auto& [k, v] : body.items())
    j[k] = v;
  return j;
}

std::string step_to_json(const Step& step) {
  return to_json_object(step).dump();
}

std::string steps_to_json(const std::vector<Step>& steps) {
  json arr = json::array();
  for (const Step& s : steps)
    arr.push_back(to_json_object(s));
  return arr.dump();
}

namespace {
/// JSON integers above this do not fit in a step's signed 64-bit fields.
constexpr std::uint64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

/// Reads one step object, naming the step and field in every error.
class StepReader {
public:
  StepReader(const json& j, size_t index) : j_(j), index_(index) {}

  Step read() {
    if (!j_.is_object())
      fail(fmt::format("step {} must be a JSON object like {{\"step\": \"split\", ...}}", index_));
    tag_ = string_field("step");
    if (tag_ == "split")
      return finish(SplitStep{str("stage"), str("iter"), ints("factors")});
    if (tag_ == "fuse")
      return finish(FuseStep{str("stage"), strings("iters")});
    if (tag_ == "reorder")
      return finish(ReorderStep{str("stage"), strings("order")});
    if (tag_ == "compute_at")
      return finish(ComputeAtStep{str("stage"), str("target"), str("iter")});
    if (tag_ == "compute_inline")
      return finish(ComputeInlineStep{str("stage")});
    if (tag_ == "compute_root")
      return finish(ComputeRootStep{str("stage")});
    if (tag_ == "cache_write")
      return finish(CacheWriteStep{str("stage")});
    if (tag_ == "cache_read")
      return finish(CacheReadStep{str("stage"), str("reader")});
    if (tag_ == "rfactor")
      return finish(RfactorStep{str("stage"), str("iter"), integer("factor")});
    if (tag_ == "parallel")
      return finish(AnnotateStep{str("stage"), str("iter"), Annotation::Parallel});
    if (tag_ == "vectorize")
      return finish(AnnotateStep{str("stage"), str("iter"), Annotation::Vectorize});
    if (tag_ == "unroll")
      return finish(AnnotateStep{str("stage"), str("iter"), Annotation::Unroll});
    if (tag_ == "annotate") {
      std::string a = str("annotation");
      if (a != "none")
        fail(fmt::format("step {} (annotate): annotation must be \"none\"; use the steps "
                         "parallel, vectorize or unroll to set one",
                         index_));
      return finish(AnnotateStep{str("stage"), str("iter"), Annotation::None});
    }
    if (tag_ == "pragma")
      return finish(PragmaStep{str("stage"), integer("auto_unroll_max_step")});
    fail(fmt::format("step {}: unknown step \"{}\"; the steps are split, fuse, reorder, "
                     "compute_at, compute_inline, compute_root, cache_write, cache_read, rfactor, "
                     "parallel, "
                     "vectorize, unroll, annotate, pragma",
                     index_, tag_));
  }

private:
  [[noreturn]] void fail(std::string message) {
    throw UserError(Error("bad-schedule", std::move(message)));
  }

  const json& field(const std::string& name) {
    used_.insert(name);
    auto it = j_.find(name);
    if (it == j_.end())
      fail(fmt::format("step {} ({}) needs the field \"{}\"", index_, tag_, name));
    return *it;
  }

  std::string string_field(const std::string& name) {
    const json& v = field(name);
    if (!v.is_string())
      fail(fmt::format("step {} ({}): \"{}\" must be a string", index_, tag_, name));
    return v.get<std::string>();
  }
  std::string str(const std::string& name) { return string_field(name); }

  std::int64_t integer(const std::string& name) {
    const json& v = field(name);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > kMaxInt))
      fail(fmt::format("step {} ({}): \"{}\" must be an integer below 2^63", index_, tag_, name));
    return v.get<std::int64_t>();
  }

  std::vector<std::int64_t> ints(const std::string& name) {
    const json& v = field(name);
    bool ok = v.is_array();
    for (const json& e : v)
      ok = ok && e.is_number_integer() &&
           !(e.is_number_unsigned() && e.get<std::uint64_t>() > kMaxInt);
    if (!ok)
      fail(fmt::format("step {} ({}): \"{}\" must be a list of integers below 2^63", index_, tag_,
                       name));
    return v.get<std::vector<std::int64_t>>();
  }

  std::vector<std::string> strings(const std::string& name) {
    const json& v = field(name);
    bool ok = v.is_array();
    for (const json& e : v)
      ok = ok && e.is_string();
    if (!ok)
      fail(fmt::format("step {} ({}): \"{}\" must be a list of loop names", index_, tag_, name));
    return v.get<std::vector<std::string>>();
  }

  /// Refuses fields the step does not have (a typo must not be ignored).
  Step finish(Step step) {
    for (const auto& [k, v] : j_.items())
      if (!used_.count(k))
        fail(fmt::format("step {} ({}): unknown field \"{}\"; its fields are {}", index_, tag_, k,
                         fmt::join(used_, ", ")));
    return step;
  }

  const json& j_;
  size_t index_;
  std::string tag_;
  std::set<std::string> used_;
};

std::vector<Step> read_steps(const json& arr) {
  if (!arr.is_array())
    throw UserError(Error("bad-schedule", "the steps must be a JSON array"));
  std::vector<Step> steps;
  for (size_t i = 0; i < arr.size(); ++i)
    steps.push_back(StepReader(arr[i], i).read());
  return steps;
}
} // namespace

Expected<std::vector<Step>> steps_from_json(std::string_view text) {
  json arr = json::parse(text, nullptr, false);
  if (arr.is_discarded())
    return Error("bad-schedule", "the steps are not valid JSON");
  return catch_user_error([&] { return read_steps(arr); });
}

std::string schedule_file_text(const std::string& op_name, const std::vector<Step>& steps) {
  std::string out =
      fmt::format("{{\n  \"version\": 1,\n  \"op\": {},\n  \"steps\": [\n", json(op_name).dump());
  for (size_t i = 0; i < steps.size(); ++i)
    out += fmt::format("    {}{}\n", step_to_json(steps[i]), i + 1 < steps.size() ? "," : "");
  out += "  ]\n}\n";
  return out;
}

Expected<std::vector<Step>> parse_schedule_file(std::string_view text, std::string_view filename) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error("bad-schedule", fmt::format("{}: not a schedule file; expected a JSON object "
                                             "{{\"version\": 1, \"op\": ..., \"steps\": [...]}}",
                                             filename));
  if (!j.contains("version") || j["version"] != 1)
    return Error("bad-schedule",
                 fmt::format("{}: unsupported schedule version {}; this kiln reads version 1",
                             filename, j.contains("version") ? j["version"].dump() : "(none)"));
  if (!j.contains("steps"))
    return Error("bad-schedule", fmt::format("{}: no \"steps\" list", filename));
  auto steps = catch_user_error([&] { return read_steps(j["steps"]); });
  if (!steps)
    return Error(steps.error().id(), fmt::format("{}: {}", filename, steps.error().message()));
  return steps;
}

Expected<std::vector<Step>> read_schedule_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return Error("cannot-read", fmt::format("cannot read the schedule file '{}'", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_schedule_file(ss.str(), path);
}

} // namespace kiln::schedule
