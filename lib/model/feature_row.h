// Private to model: one row of features as named groups of named values, and
// the one place that lays a row out in columns and names the columns
// (feature_row.cpp). docs/features.md gives the meaning and formula of every
// value; the field names are the column names.
#ifndef KILN_LIB_MODEL_FEATURE_ROW_H
#define KILN_LIB_MODEL_FEATURE_ROW_H

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace kiln::model::detail {

/// The buffer slots of a row: the statement's buffers, most lines first.
inline constexpr std::size_t kBufferSlots = 5;
/// The points of the arithmetic-intensity curve.
inline constexpr std::size_t kIntensityPoints = 10;

/// Operations of the statement over the whole run. A multiply feeding an add
/// or subtract of the same class is one multiply-add.
struct ComputeCounts {
  double float_mad = 0;
  double float_addsub = 0;
  double float_mul = 0;
  double float_divmod = 0;
  double float_cmp = 0;   ///< comparisons, min, max
  double float_math = 0;  ///< exp, log, sqrt
  double float_other = 0; ///< abs, casts to float
  double int_mad = 0;
  double int_addsub = 0;
  double int_mul = 0;
  double int_divmod = 0;
  double int_cmp = 0;
  double int_other = 0; ///< casts to integer
  double bool_op = 0;
  double select = 0;
};

/// The loops of one annotation (vectorized, unrolled or parallel) in the
/// statement's chain of loops.
struct AnnotationFeatures {
  double num = 0;       ///< how many
  double prod = 0;      ///< product of their extents, 0 when none
  double len_inner = 0; ///< extent of the innermost one
  // Where the innermost one is, one-hot.
  double pos_inner = 0;  ///< the innermost loop of the chain
  double pos_middle = 0; ///< neither innermost nor outermost
  double pos_outer = 0;  ///< the outermost (and not the innermost)
  double pos_none = 0;   ///< there is none
};

/// The accesses of the statement to one buffer.
struct BufferFeatures {
  // Kind of access, one-hot.
  double is_read = 0;
  double is_write = 0;
  double is_read_write = 0;
  double bytes = 0;        ///< accessed over the run
  double unique_bytes = 0; ///< distinct bytes
  double lines = 0;        ///< cache lines brought in over the run
  double unique_lines = 0; ///< distinct lines
  // Reuse type, one-hot.
  double reuse_loop = 0;   ///< some loop does not move the access
  double reuse_serial = 0; ///< another statement in a shared loop touches the buffer
  double reuse_none = 0;
  double reuse_dis_iter = 0;  ///< iterations between reuses
  double reuse_dis_bytes = 0; ///< bytes touched between reuses
  double reuse_ct = 0;        ///< number of reuses
  // The four sizes above divided by max(1, reuse_ct).
  double bytes_d_reuse_ct = 0;
  double unique_bytes_d_reuse_ct = 0;
  double lines_d_reuse_ct = 0;
  double unique_lines_d_reuse_ct = 0;
  double stride = 0; ///< in elements, of the innermost loop of the chain
};

/// Allocations around the statement, the buffer it stores to, and its loops.
struct ScopeFeatures {
  double alloc_local_bytes = 0; ///< local (stack, register) buffers around it
  double alloc_heap_bytes = 0;  ///< heap buffers around it
  double alloc_count = 0;
  double alloc_outer_prod = 0; ///< iterations of the loops outside the innermost allocation
  // What the stored buffer is, one-hot.
  double store_arg = 0;
  double store_heap = 0;
  double store_local = 0;
  double outer_loop_count = 0; ///< loops of the chain
  double outer_loop_prod = 0;  ///< executions of the statement
  double unroll_stmts = 0;     ///< copies unrolling makes of it (1 when none)
};

/// The register block: the innermost run of unrolled and vectorized loops,
/// which becomes straight-line vector code, and the serial loop around it.
struct RegisterBlockFeatures {
  double reg_block = 0;          ///< statement instances in the block
  double reg_accumulators = 0;   ///< distinct elements it stores
  double reg_loads = 0;          ///< distinct elements it loads from other buffers
  double reg_flops_per_load = 0; ///< its FLOPs per such load
  double reg_serial_extent = 0;  ///< extent of the loop just outside it, 0 when none
};

/// The features of one statement, uncompressed. The column of a value and
/// its name come from to_columns() and column_names() alone.
/// The machine (kiln/model/hardware.h), and how the statement's innermost
/// vector loop compares with its registers: the same in every row of a
/// program.
struct HardwareFeatures {
  double vector_bits = 0;
  double fma_flops = 0;
  double cores = 0;
  double l1d_kib = 0;
  double l2_kib = 0;
  double l3_kib = 0;
  /// vec_len_inner / f32 lanes of a register: 1 fills one register, 0.5
  /// half of one, 4 four.
  double vec_registers = 0;
};

struct FeatureRow {
  ComputeCounts compute;
  AnnotationFeatures vec, unroll, par;
  std::array<BufferFeatures, kBufferSlots> buffers; ///< unused slots stay 0
  /// FLOPs per byte of distinct data as the nest grows from the statement
  /// outwards (all 0 without float arithmetic).
  std::array<double, kIntensityPoints> arith_intensity{};
  ScopeFeatures scope;
  RegisterBlockFeatures reg;
  HardwareFeatures hw;
};

/// The row in column order, each value x compressed to log2(1 + max(0, x)).
std::vector<float> to_columns(const FeatureRow& row);

/// The name of every column, in column order.
std::vector<std::string> column_names();

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_FEATURE_ROW_H
