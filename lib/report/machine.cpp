// The target machine(s) the log was measured on, and the kiln that did it.
#include "sections.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

namespace kiln::report {

Section machine_section(const record::LoadedLog& log) {
  Section sec{"machine", "Target machine", ""};
  std::string& b = sec.body;
  using Key = std::tuple<std::string, std::string, std::string, int, int>;
  std::map<Key, std::size_t> count;
  std::vector<Key> order;
  std::set<std::string> versions;
  for (const record::Record& r : log.records) {
    Key k{r.target.triple, r.target.cpu, r.target.features, r.target.vector_bits, r.target.cores};
    if (count[k]++ == 0)
      order.push_back(k);
    if (!r.kiln_version.empty())
      versions.insert(r.kiln_version);
  }
  if (order.empty()) {
    b += note("The log has no records, so no machine is known.");
    return sec;
  }
  if (order.size() > 1)
    b += note("The log was measured on several machines: their times compare only within a "
              "machine.");
  std::vector<std::vector<std::string>> rows;
  for (const Key& k : order)
    rows.push_back({escape(std::get<0>(k)), escape(std::get<1>(k)), std::to_string(std::get<3>(k)),
                    std::to_string(std::get<4>(k)),
                    format_count(static_cast<long long>(count[k]))});
  b += table({"triple", "CPU", "#vector bits", "#cores", "#records"}, rows);
  for (const Key& k : order) {
    Target t;
    t.features = std::get<2>(k);
    b += fmt::format(
        "<p class=\"note\">Features of {} (enabled):</p>\n<pre class=\"wrap\">{}</pre>\n",
        escape(std::get<1>(k)), escape(t.enabled_features()));
  }
  std::string v;
  for (const std::string& s : versions)
    v += (v.empty() ? "" : ", ") + s;
  b += note(fmt::format("Measured by kiln {}.", escape(v.empty() ? "(unknown)" : v)));
  return sec;
}

} // namespace kiln::report
