// The search space explored: the measured configs of a task placed by two of
// their decisions, coloured by the throughput they reached, the best marked.
//
// Without the search space at hand (the report reads logs only), the
// decisions come from the record: `config.point` for sketch configs
// ([sketch, tile factors…, parallel…, unroll…], Config::point) or the knob
// choices of a template. Points of different sketches do not share
// coordinates, so the chart shows the sketch (or template) with the most
// records, placed by the two decisions whose values rank most closely with
// throughput (|Spearman ρ|): the ones that mattered. With fewer than three
// timed configs, the two that vary most (in log2) are used instead.
#include "sections.h"
#include "stats.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace kiln::report {

namespace {

constexpr std::size_t kMaxCategories = 40; ///< distinct values drawn as bands; more: a linear axis

struct Group {
  std::string title;
  std::vector<std::string> names;             ///< one per decision
  std::vector<const record::Record*> records; ///< log order
};

std::int64_t decision(const record::Record& r, std::size_t i) {
  // Template records carry their knobs (and the same numbers as a point).
  return r.config.knobs.empty() ? r.config.point[i + 1] : r.config.knobs[i].second;
}

/// The largest group of records that share a sketch (or a template).
std::optional<Group> largest_group(const TaskView& task) {
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const record::Record* r : task.records) {
    std::string key;
    Group g;
    if (!r->config.knobs.empty()) {
      key = "template " + r->config.template_name;
      g.title = fmt::format("template {}", r->config.template_name);
      for (const auto& [name, choice] : r->config.knobs) {
        key += "/" + name;
        g.names.push_back(name);
      }
    } else if (!r->config.point.empty()) {
      const auto& p = r->config.point;
      key = fmt::format("sketch {} / {}", p[0], p.size());
      g.title = fmt::format("sketch {}", p[0]);
      for (std::size_t i = 1; i < p.size(); ++i)
        g.names.push_back(fmt::format("point[{}]", i));
    } else {
      continue; // the naive schedule: no decisions
    }
    auto [it, added] = groups.emplace(key, std::move(g));
    if (added)
      order.push_back(key);
    it->second.records.push_back(r);
  }
  if (order.empty())
    return std::nullopt;
  const std::string* best = &order.front();
  for (const std::string& k : order)
    if (groups[k].records.size() > groups[*best].records.size())
      best = &k;
  return std::move(groups[*best]);
}

struct Choice {
  std::size_t index;
  double score; ///< |ρ| with throughput, or the log2 variance
};

/// The decisions that vary, most important first; `by_rho` says how.
std::vector<Choice> rank_decisions(const Group& g, bool& by_rho) {
  std::vector<const record::Record*> timed;
  for (const record::Record* r : g.records)
    if (r->result.ok())
      timed.push_back(r);
  by_rho = timed.size() >= 3;
  std::vector<double> speed;
  for (const record::Record* r : timed)
    speed.push_back(r->gflops());
  std::vector<Choice> out;
  for (std::size_t i = 0; i < g.names.size(); ++i) {
    std::set<std::int64_t> distinct;
    for (const record::Record* r : g.records)
      distinct.insert(decision(*r, i));
    if (distinct.size() < 2)
      continue;
    double score = 0;
    if (by_rho) {
      std::vector<double> v;
      for (const record::Record* r : timed)
        v.push_back(static_cast<double>(decision(*r, i)));
      double rho = spearman(v, speed);
      score = std::isfinite(rho) ? std::abs(rho) : 0;
    } else {
      double sum = 0, sum2 = 0, n = static_cast<double>(g.records.size());
      for (const record::Record* r : g.records) {
        double l = std::log2(1 + std::abs(static_cast<double>(decision(*r, i))));
        sum += l;
        sum2 += l * l;
      }
      score = sum2 / n - (sum / n) * (sum / n);
    }
    out.push_back({i, score});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Choice& a, const Choice& b) { return a.score > b.score; });
  return out;
}

/// Maps one decision's values to chart coordinates: bands of the sorted
/// distinct values (jittered inside the band) when there are few, else the
/// values themselves.
struct Placement {
  Axis axis;
  std::map<std::int64_t, double> band;
  double at(std::int64_t v, double jitter) const {
    if (band.empty())
      return static_cast<double>(v);
    return band.at(v) + (jitter - 0.5) * 0.7;
  }
};

Placement place(const Group& g, std::size_t i) {
  std::set<std::int64_t> distinct;
  for (const record::Record* r : g.records)
    distinct.insert(decision(*r, i));
  std::string label = fmt::format("{} (value of the decision)", g.names[i]);
  Placement p;
  if (distinct.size() > kMaxCategories) {
    p.axis = *distinct.begin() > 0 ? log_axis(label) : linear_axis(label, false);
    return p;
  }
  std::vector<std::string> categories;
  for (std::int64_t v : distinct) {
    p.band[v] = static_cast<double>(categories.size());
    categories.push_back(std::to_string(v));
  }
  p.axis = ordinal_axis(label, std::move(categories));
  return p;
}

std::string space_chart(const std::string& id, const TaskView& task, const Group& g,
                        const std::vector<Choice>& choices, const ReportOptions& options,
                        std::string& notes) {
  const Placement px = place(g, choices[0].index);
  std::optional<Placement> py;
  if (choices.size() > 1)
    py = place(g, choices[1].index);
  double best = task.best ? task.best->gflops() : 0;
  Axis y = py ? py->axis : linear_axis("GFLOPS");
  SvgChart chart(id, fmt::format("Measured configs of {}", g.title), px.axis, y, 760, 460);

  struct Placed {
    const record::Record* r;
    double x, y;
    double gflops; ///< once: Record::gflops() takes a median
  };
  std::vector<Placed> timed, failed;
  const record::Record* group_best = nullptr;
  for (std::size_t k = 0; k < g.records.size(); ++k) {
    const record::Record* r = g.records[k];
    double x = px.at(decision(*r, choices[0].index), unit_hash(2 * k));
    double g = r->gflops();
    double yy = py ? py->at(decision(*r, choices[1].index), unit_hash(2 * k + 1)) : g;
    if (r->result.ok()) {
      timed.push_back({r, x, yy, g});
      if (!group_best || g > group_best->gflops())
        group_best = r;
    } else if (r->result.error != record::MeasureError::None) {
      failed.push_back({r, x, yy, 0});
    }
  }
  auto tip = [&](const record::Record* r) {
    std::string s = fmt::format("trial {} · {}", r->trial, r->run);
    s += r->result.ok() ? fmt::format(" · {} GFLOPS", format_number(r->gflops()))
                        : fmt::format(" · {}", record::error_name(r->result.error));
    s += fmt::format(" · {}={}", g.names[choices[0].index], decision(*r, choices[0].index));
    if (py)
      s += fmt::format(", {}={}", g.names[choices[1].index], decision(*r, choices[1].index));
    return s;
  };

  std::vector<Marker> crosses;
  std::vector<std::size_t> shown_failed = spread(failed.size(), options.max_points / 4);
  for (std::size_t i : shown_failed)
    crosses.push_back({failed[i].x, py ? failed[i].y : 0, "", tip(failed[i].r), 3});
  if (!crosses.empty())
    chart.markers("error (no time)", "#8c959f", std::move(crosses), Shape::Cross);

  std::vector<std::size_t> shown = spread(timed.size(), options.max_points);
  // Slowest first, so the fast ones are drawn on top.
  std::stable_sort(shown.begin(), shown.end(),
                   [&](std::size_t a, std::size_t b) { return timed[a].gflops < timed[b].gflops; });
  std::vector<Marker> dots;
  for (std::size_t i : shown)
    dots.push_back({timed[i].x, timed[i].y, viridis(best > 0 ? timed[i].gflops / best : 0),
                    tip(timed[i].r), 3.5});
  if (!dots.empty())
    chart.markers("measured config (colour: GFLOPS)", viridis(0.55), std::move(dots));
  for (const Placed& p : timed)
    if (p.r == group_best) {
      chart.markers(fmt::format("best: {} GFLOPS", format_number(p.r->gflops())), viridis(1),
                    {{p.x, p.y, "", "best · " + tip(p.r), 10}}, Shape::Star);
      break;
    }
  if (best > 0)
    chart.colour_bar("GFLOPS", 0, best);

  if (shown.size() < timed.size())
    notes += sampled_note(shown.size(), timed.size(), "timed configs");
  if (shown_failed.size() < failed.size())
    notes += sampled_note(shown_failed.size(), failed.size(), "failed configs");
  return chart.render();
}

} // namespace

Section search_space_section(const LogView& view, const ReportOptions& options) {
  Section sec{"search-space", "The search space explored", ""};
  std::string& b = sec.body;
  b += note("Each dot is a measured config, placed by two of its decisions (Config::point: "
            "[sketch, tile factors…, parallel…, unroll…], or a template's knob choices) and "
            "coloured by its throughput; the star is the best. Dots inside one band share the "
            "value; their spread inside it only keeps them apart.");
  bool drew = false;
  for (std::size_t t = 0; t < view.tasks.size() && t < kMaxTaskCharts; ++t) {
    const TaskView& task = view.tasks[t];
    std::optional<Group> g = largest_group(task);
    if (!g)
      continue;
    b += task_heading(view, task);
    drew = true;
    bool by_rho = false;
    std::vector<Choice> choices = rank_decisions(*g, by_rho);
    if (choices.empty()) {
      b += note(fmt::format("All {} measured configs of {} take the same decisions.",
                            format_count(static_cast<long long>(g->records.size())),
                            escape(g->title)));
      continue;
    }
    std::string why;
    if (choices.size() == 1)
      why = fmt::format("Only {} varies among the {} measured configs of {}; the other axis is "
                        "their throughput.",
                        g->names[choices[0].index],
                        format_count(static_cast<long long>(g->records.size())), g->title);
    else if (by_rho)
      why = fmt::format("Placed by {} and {}: of the {} decisions of {} that vary, the two whose "
                        "values rank most closely with throughput (|Spearman ρ| {:.2f} and "
                        "{:.2f}).",
                        g->names[choices[0].index], g->names[choices[1].index], choices.size(),
                        g->title, choices[0].score, choices[1].score);
    else
      why = fmt::format("Placed by {} and {}: too few timed configs to rank the decisions, so "
                        "the two of {} that vary most (in log2).",
                        g->names[choices[0].index], g->names[choices[1].index], g->title);
    std::size_t others = task.records.size() - g->records.size();
    if (others > 0)
      why += fmt::format(" {} configs of other sketches or templates (and the naive schedule) "
                         "are not drawn.",
                         format_count(static_cast<long long>(others)));
    b += "<p>" + escape(why) + "</p>\n";
    std::string notes;
    b += space_chart(fmt::format("space-{}", t), task, *g, choices, options, notes);
    b += notes;
  }
  if (!drew)
    b += note("No measured config carries search-space decisions (<code>config.point</code> or "
              "template knobs): nothing to place.");
  b += more_tasks_note(view);
  return sec;
}

} // namespace kiln::report
