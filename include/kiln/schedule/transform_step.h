// Transform steps: the plain-data edits a schedule is made of. A State is a
// compute DAG plus an ordered list of steps; replaying the list on the DAG
// gives the same State, and the list is what records and schedule files
// store (docs/schedule-format.md).
//
// Adding a step:
//  1. declare its struct here (stages and iterators are named, as printed by
//     `kiln dump --stage loopnest`), and add it to `Step`;
//  2. validate and apply it in State::apply (state.cpp): refuse with an Error
//     that says why, never produce wrong code;
//  3. give it a JSON tag in transform_step.cpp (to_json / from_json);
//  4. add it to the round-trip and property tests and to the docs.
#ifndef KILN_SCHEDULE_TRANSFORM_STEP_H
#define KILN_SCHEDULE_TRANSFORM_STEP_H

#include "kiln/support/error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::schedule {

/// Splits `iter` into factors.size() + 1 loops: the outer one of extent
/// ceil(extent / product(factors)), then one per factor, outer to inner. A
/// product that does not divide the extent leaves a tail, guarded so the
/// answer stays right. New iterators: `<iter>.0`, `<iter>.1`, …
struct SplitStep {
  std::string stage, iter;
  std::vector<std::int64_t> factors;
  bool operator==(const SplitStep&) const = default;
};

/// Fuses adjacent iterators (outer to inner) into one named `a@b@…`.
struct FuseStep {
  std::string stage;
  std::vector<std::string> iters;
  bool operator==(const FuseStep&) const = default;
};

/// Puts the stage's loops in this order (a permutation of all of them).
struct ReorderStep {
  std::string stage;
  std::vector<std::string> order;
  bool operator==(const ReorderStep&) const = default;
};

/// Computes the stage inside loop `target_iter` of its consumer `target`,
/// only the region that one iteration of that loop reads.
struct ComputeAtStep {
  std::string stage, target, target_iter;
  bool operator==(const ComputeAtStep&) const = default;
};

/// Substitutes the stage's expression into its consumers (no buffer).
struct ComputeInlineStep {
  std::string stage;
  bool operator==(const ComputeInlineStep&) const = default;
};

/// Undoes compute_at / compute_inline: the stage gets its own root loops.
struct ComputeRootStep {
  std::string stage;
  bool operator==(const ComputeRootStep&) const = default;
};

/// Adds a stage `<stage>.local` that computes the stage's values into a local
/// buffer; the stage itself becomes a copy out of it. Compute the new stage at
/// a tile loop of the copy to get a register tile.
struct CacheWriteStep {
  std::string stage;
  bool operator==(const CacheWriteStep&) const = default;
};

/// Adds a stage `<stage>.cache` that copies the stage's values; `reader`
/// reads the copy instead. Compute it at a loop of the reader to copy only
/// the block that loop uses (packing).
struct CacheReadStep {
  std::string stage, reader;
  bool operator==(const CacheReadStep&) const = default;
};

/// Factors a reduction (TVM's rfactor): reduction axis `iter` (extent K) of
/// the reduction stage S becomes `<iter>.o` < ceil(K / factor) in a new
/// stage `<S>.rf`, which has S's axes and one more, `<iter>.r` < factor:
///   S.rf[…, r] = reduce(body at iter = o * factor + r, over o and the
///   other reduction axes), out-of-range points contributing the identity;
///   S[…] = reduce(S.rf[…, r] over r).
/// Each `r` is a partial result of its own: vectorize `<iter>.r` in S.rf for
/// one accumulator per lane (the lanes combined at the end by S), or run it
/// in parallel when S has too little parallelism of its own. Comes before
/// S's loops are transformed.
struct RfactorStep {
  std::string stage, iter;
  std::int64_t factor = 0;
  bool operator==(const RfactorStep&) const = default;
};

enum class Annotation : std::uint8_t { None, Parallel, Vectorize, Unroll };

/// Marks a loop parallel, vectorized or unrolled (or clears the mark).
struct AnnotateStep {
  std::string stage, iter;
  Annotation annotation = Annotation::None;
  bool operator==(const AnnotateStep&) const = default;
};

/// `auto_unroll_max_step`: unroll the stage's inner loops whose total number
/// of iterations is at most `value` (0 turns it off).
struct PragmaStep {
  std::string stage;
  std::int64_t auto_unroll_max_step = 0;
  bool operator==(const PragmaStep&) const = default;
};

/// New kinds go at the end: a step's index is part of its program's key.
using Step = std::variant<SplitStep, FuseStep, ReorderStep, ComputeAtStep, ComputeInlineStep,
                          ComputeRootStep, CacheWriteStep, CacheReadStep, AnnotateStep, PragmaStep,
                          RfactorStep>;

/// The step's tag in JSON: "split", "fuse", …, "rfactor", "parallel", "vectorize",
/// "unroll", "annotate" (for None), "pragma".
std::string_view step_tag(const Step& step);
std::string_view annotation_name(Annotation a);

/// One step as a JSON object text, e.g.
/// {"step":"split","stage":"C","iter":"i","factors":[8,4]}.
std::string step_to_json(const Step& step);
/// A list of steps as a JSON array text.
std::string steps_to_json(const std::vector<Step>& steps);
/// Parses a JSON array of steps; errors name the step index and the field.
Expected<std::vector<Step>> steps_from_json(std::string_view text);

/// A schedule file: {"version": 1, "op": NAME, "steps": [...]}.
std::string schedule_file_text(const std::string& op_name, const std::vector<Step>& steps);
Expected<std::vector<Step>> parse_schedule_file(std::string_view text, std::string_view filename);
Expected<std::vector<Step>> read_schedule_file(const std::string& path);

} // namespace kiln::schedule

#endif
