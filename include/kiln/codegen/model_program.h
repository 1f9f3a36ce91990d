// A whole network as one C-callable program around exported kernels: the
// weights as read-only data, NAME_create (allocate the activations and
// packed buffers, run every prepack), NAME_run (call the kernels in order)
// and NAME_destroy, compiled to an object file for a target. Written for
// `kiln export --model` (docs/library.md, "A whole model"); it knows
// nothing of graphs: the caller lays out the buffers.
#ifndef KILN_CODEGEN_MODEL_PROGRAM_H
#define KILN_CODEGEN_MODEL_PROGRAM_H

#include "kiln/support/error.h"
#include "kiln/support/target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen {

/// What one argument pointer of a kernel call points at.
struct ProgramPointer {
  /// State: the block NAME_create allocates (activations, packed buffers);
  /// Weights: the program's constant data; Input, Output: the caller's.
  enum Kind : std::uint8_t { State, Weights, Input, Output } kind = State;
  std::int64_t offset = 0; ///< bytes into the state block or the weights
  int index = 0;           ///< which input or output
};

/// One kernel call: a `void(void**)` wrapper and its arguments.
struct ProgramCall {
  std::string kernel;  ///< the kernel's packed wrapper (`<symbol>_packed`)
  std::string prepack; ///< its prepack wrapper, or empty: NAME_create calls it once
  std::vector<ProgramPointer> args;
};

/// After the calls, bytes copied into an output no call writes.
struct ProgramCopy {
  ProgramPointer from;
  int output = 0;
  std::int64_t bytes = 0;
};

struct ModelProgram {
  std::string name;          ///< a C identifier: the functions' prefix
  std::vector<char> weights; ///< each constant at a 64-byte aligned offset
  std::int64_t state_bytes = 0;
  std::vector<std::int64_t> input_bytes, output_bytes;
  std::vector<ProgramCall> calls; ///< in the order they run
  std::vector<ProgramCopy> copies;
};

/// The object file defining, for program name NAME,
///   void* NAME_create(void);   // NULL when memory is short
///   int NAME_run(void* model, const float* const* inputs, float* const* outputs);
///   void NAME_destroy(void* model);
/// NAME_run returns 0, or 1 when the model, an array or a buffer is NULL
/// or a buffer is not 64-byte aligned (then nothing is called). The kernels' symbols, the C
/// library's aligned_alloc and free are left undefined for the linker.
Expected<std::vector<char>> compile_model_program(const ModelProgram& program,
                                                  const Target& target);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_MODEL_PROGRAM_H
