// Errors by kind: how many trials failed and why, per run, with an example
// message of each kind. Errors never stop tuning (docs/design.md), so they are
// counted here rather than reported when they happen.
#include "sections.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace kiln::report {

namespace {

constexpr std::array kKinds = {record::MeasureError::InvalidSchedule,
                               record::MeasureError::CompileError,
                               record::MeasureError::RuntimeCrash, record::MeasureError::Timeout,
                               record::MeasureError::WrongAnswer};

const char* meaning(record::MeasureError e) {
  switch (e) {
  case record::MeasureError::InvalidSchedule:
    return "a step could not apply";
  case record::MeasureError::CompileError:
    return "lowering, LLVM or linking failed";
  case record::MeasureError::RuntimeCrash:
    return "the kernel crashed or its worker died";
  case record::MeasureError::Timeout:
    return "the kernel ran past the time limit";
  case record::MeasureError::WrongAnswer:
    return "the output differed from the reference";
  case record::MeasureError::None:
    break;
  }
  return "";
}

} // namespace

Section errors_section(const LogView& view, const ReportOptions&) {
  Section sec{"errors", "Errors by kind", ""};
  std::string& b = sec.body;
  if (view.records == 0) {
    b += note("The log has no trials.");
    return sec;
  }
  // Counts per run label (across tasks, first-appearance order) and kind.
  std::vector<const RunView*> runs;
  std::vector<std::size_t> trials;
  std::vector<std::array<std::size_t, kKinds.size()>> per_run;
  std::array<std::size_t, kKinds.size()> total{};
  std::array<std::string, kKinds.size()> example;
  std::size_t unmeasured = 0;
  for (const TaskView& task : view.tasks)
    for (const RunView& run : task.runs) {
      std::size_t at = 0;
      while (at < runs.size() && runs[at]->label != run.label)
        ++at;
      if (at == runs.size()) {
        runs.push_back(&run);
        trials.push_back(0);
        per_run.emplace_back();
      }
      trials[at] += run.records.size();
      for (const record::Record* r : run.records) {
        if (r->result.error == record::MeasureError::None) {
          unmeasured += r->result.ok() ? 0 : 1;
          continue;
        }
        std::size_t k = std::find(kKinds.begin(), kKinds.end(), r->result.error) - kKinds.begin();
        if (k == kKinds.size())
          continue; // a kind this report does not know yet
        ++total[k];
        ++per_run[at][k];
        if (example[k].empty())
          example[k] = r->result.message;
      }
    }
  auto share = [](std::size_t n, std::size_t of) {
    return of ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(n) / static_cast<double>(of))
              : std::string("–");
  };
  b += fmt::format(
      "<p>{} of {} trials failed ({}).</p>\n", format_count(static_cast<long long>(view.errors)),
      format_count(static_cast<long long>(view.records)), share(view.errors, view.records));
  if (unmeasured > 0)
    b += note(fmt::format("{} records carry no time and no error: picks that were not measured "
                          "(offline tuning without verification).",
                          format_count(static_cast<long long>(unmeasured))));
  if (view.errors == 0) {
    b += note("Every trial ran and matched the reference.");
    return sec;
  }

  // What each kind means, with an example, for the kinds that occurred.
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < kKinds.size(); ++k)
    if (total[k] > 0)
      rows.push_back(
          {fmt::format("<code>{}</code>", record::error_name(kKinds[k])), meaning(kKinds[k]),
           format_count(static_cast<long long>(total[k])), share(total[k], view.records),
           example[k].empty() ? "" : fmt::format("<code>{}</code>", escape(example[k]))});
  b += table({"kind", "meaning", "#trials", "#share of trials", "example message"}, rows);

  // Per run: runs as rows, so any number of runs fits.
  if (runs.size() > 1) {
    std::vector<std::string> headers = {"run", "#trials", "#failed"};
    for (record::MeasureError e : kKinds)
      headers.push_back("#" + std::string(record::error_name(e)));
    std::vector<std::vector<std::string>> run_rows;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      std::size_t failed = 0;
      for (std::size_t n : per_run[r])
        failed += n;
      std::vector<std::string> row = {run_cell(*runs[r]),
                                      format_count(static_cast<long long>(trials[r])),
                                      format_count(static_cast<long long>(failed))};
      for (std::size_t n : per_run[r])
        row.push_back(n ? format_count(static_cast<long long>(n)) : "");
      run_rows.push_back(std::move(row));
    }
    b += table(headers, run_rows);
  }

  std::vector<std::string> names;
  for (auto it = kKinds.rbegin(); it != kKinds.rend(); ++it)
    names.emplace_back(record::error_name(*it));
  SvgChart chart("errors-chart", "Failed trials by kind", linear_axis("failed trials"),
                 ordinal_axis("", names), 640, 86 + 30 * static_cast<int>(names.size()));
  for (std::size_t k = 0; k < kKinds.size(); ++k) {
    double y = static_cast<double>(kKinds.size() - 1 - k);
    chart.rect(0, static_cast<double>(total[k]), y - 0.32, y + 0.32, "#D55E00",
               fmt::format("{}: {}", record::error_name(kKinds[k]),
                           format_count(static_cast<long long>(total[k]))));
  }
  b += chart.render();
  return sec;
}

} // namespace kiln::report
