// The column layout of a feature row. Each group's columns are listed once,
// by field, below; a column's name is its field's name (with the group's
// prefix), so a name and its value cannot come apart. The shipped model
// reads columns by position: the order here is part of the feature version.
#include "feature_row.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

namespace kiln::model::detail {

#define KILN_COMPUTE_COLUMNS(X)                                                                    \
  X(float_mad)                                                                                     \
  X(float_addsub)                                                                                  \
  X(float_mul)                                                                                     \
  X(float_divmod)                                                                                  \
  X(float_cmp)                                                                                     \
  X(float_math)                                                                                    \
  X(float_other)                                                                                   \
  X(int_mad)                                                                                       \
  X(int_addsub)                                                                                    \
  X(int_mul)                                                                                       \
  X(int_divmod)                                                                                    \
  X(int_cmp)                                                                                       \
  X(int_other)                                                                                     \
  X(bool_op)                                                                                       \
  X(select)

#define KILN_ANNOTATION_COLUMNS(X)                                                                 \
  X(num) X(prod) X(len_inner) X(pos_inner) X(pos_middle) X(pos_outer) X(pos_none)

#define KILN_BUFFER_COLUMNS(X)                                                                     \
  X(is_read)                                                                                       \
  X(is_write)                                                                                      \
  X(is_read_write)                                                                                 \
  X(bytes)                                                                                         \
  X(unique_bytes)                                                                                  \
  X(lines)                                                                                         \
  X(unique_lines)                                                                                  \
  X(reuse_loop)                                                                                    \
  X(reuse_serial)                                                                                  \
  X(reuse_none)                                                                                    \
  X(reuse_dis_iter)                                                                                \
  X(reuse_dis_bytes)                                                                               \
  X(reuse_ct)                                                                                      \
  X(bytes_d_reuse_ct)                                                                              \
  X(unique_bytes_d_reuse_ct)                                                                       \
  X(lines_d_reuse_ct)                                                                              \
  X(unique_lines_d_reuse_ct)                                                                       \
  X(stride)

#define KILN_SCOPE_COLUMNS(X)                                                                      \
  X(alloc_local_bytes)                                                                             \
  X(alloc_heap_bytes)                                                                              \
  X(alloc_count)                                                                                   \
  X(alloc_outer_prod)                                                                              \
  X(store_arg)                                                                                     \
  X(store_heap)                                                                                    \
  X(store_local)                                                                                   \
  X(outer_loop_count)                                                                              \
  X(outer_loop_prod)                                                                               \
  X(unroll_stmts)

#define KILN_REGISTER_BLOCK_COLUMNS(X)                                                             \
  X(reg_block) X(reg_accumulators) X(reg_loads) X(reg_flops_per_load) X(reg_serial_extent)

#define KILN_HARDWARE_COLUMNS(X)                                                                   \
  X(vector_bits) X(fma_flops) X(cores) X(l1d_kib) X(l2_kib) X(l3_kib) X(vec_registers)

// visit(prefix, name, value) for each field of one group, in list order.
#define KILN_VISIT_FIELD(field) visit(prefix, #field, group.field);

template <class Visit>
static constexpr void visit_group(std::string_view prefix, const ComputeCounts& group,
                                  Visit& visit) {
  KILN_COMPUTE_COLUMNS(KILN_VISIT_FIELD)
}

template <class Visit>
static constexpr void visit_group(std::string_view prefix, const AnnotationFeatures& group,
                                  Visit& visit) {
  KILN_ANNOTATION_COLUMNS(KILN_VISIT_FIELD)
}

template <class Visit>
static constexpr void visit_group(std::string_view prefix, const BufferFeatures& group,
                                  Visit& visit) {
  KILN_BUFFER_COLUMNS(KILN_VISIT_FIELD)
}

template <class Visit>
static constexpr void visit_group(std::string_view prefix, const ScopeFeatures& group,
                                  Visit& visit) {
  KILN_SCOPE_COLUMNS(KILN_VISIT_FIELD)
}

template <class Visit>
static constexpr void visit_group(std::string_view prefix, const RegisterBlockFeatures& group,
                                  Visit& visit) {
  KILN_REGISTER_BLOCK_COLUMNS(KILN_VISIT_FIELD)
}

template <class Visit>
static constexpr void visit_group(std::string_view prefix, const HardwareFeatures& group,
                                  Visit& visit) {
  KILN_HARDWARE_COLUMNS(KILN_VISIT_FIELD)
}

#undef KILN_VISIT_FIELD

constexpr std::string_view kSlotPrefixes[] = {"b0", "b1", "b2", "b3", "b4"};
static_assert(std::size(kSlotPrefixes) == kBufferSlots);
constexpr std::string_view kPointNames[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
static_assert(std::size(kPointNames) == kIntensityPoints);

/// Calls visit(prefix, name, value) for every column of `row`, in column
/// order; the column is named prefix_name, or name when the prefix is empty.
/// The only code that knows where a value goes.
template <class Visit> static constexpr void for_each_column(const FeatureRow& row, Visit visit) {
  visit_group("", row.compute, visit);
  visit_group("vec", row.vec, visit);
  visit_group("unroll", row.unroll, visit);
  visit_group("par", row.par, visit);
  for (std::size_t b = 0; b < kBufferSlots; ++b)
    visit_group(kSlotPrefixes[b], row.buffers[b], visit);
  for (std::size_t i = 0; i < kIntensityPoints; ++i)
    visit("arith_intensity", kPointNames[i], row.arith_intensity[i]);
  visit_group("", row.scope, visit);
  visit_group("", row.reg, visit);
  visit_group("hw", row.hw, visit);
}

static constexpr std::size_t count_columns() {
  std::size_t n = 0;
  for_each_column(FeatureRow{}, [&n](std::string_view, std::string_view, double) { ++n; });
  return n;
}

constexpr std::size_t kColumnCount = count_columns();
// Every value of a row is a double: a field no list above names would make
// the row larger than its columns.
static_assert(kColumnCount * sizeof(double) == sizeof(FeatureRow),
              "every field of FeatureRow needs its column in a list above");

std::vector<float> to_columns(const FeatureRow& row) {
  std::vector<float> out;
  out.reserve(kColumnCount);
  for_each_column(row, [&out](std::string_view, std::string_view, double v) {
    out.push_back(static_cast<float>(std::log2(1.0 + std::max(0.0, v))));
  });
  return out;
}

std::vector<std::string> column_names() {
  std::vector<std::string> names;
  names.reserve(kColumnCount);
  for_each_column(FeatureRow{}, [&names](std::string_view prefix, std::string_view name, double) {
    std::string column(prefix);
    if (!column.empty())
      column += '_';
    column += name;
    names.push_back(std::move(column));
  });
  return names;
}

} // namespace kiln::model::detail
