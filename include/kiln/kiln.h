/* kiln's C API: describe an op, tune it, pick the best record of a set of
 * tuning logs, compile it into a kernel callable in this process, and export
 * tuned kernels as object code. For C programs and other languages' FFIs
 * (docs/library.md).
 *
 * Conventions:
 * - Every object is an opaque handle made by a *_create / *_parse /
 *   *_compile function and released by its *_destroy function (which
 *   accepts NULL).
 * - A function that can fail returns a kiln_status; on failure
 *   kiln_last_error() is the message (as the kiln tool prints it) and
 *   kiln_last_error_id() its id, until the next call on the same thread.
 *   Nothing is thrown across this API.
 * - Option structs start with their size: fill them with the *_init
 *   function, then set what you need, so a program built against this
 *   header keeps working with a later library.
 * - Strings returned by the library belong to the handle they came from
 *   and live as long as it does, unless said otherwise.
 * - A backend and everything made from it are used from one thread at a
 *   time; different backends may be used from different threads.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_C_API_VERSION 1

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_ARGUMENT = 1, /* a NULL handle, a bad option value */
  KILN_ERROR_PARSE = 2,    /* the op text or a --set style override */
  KILN_ERROR_IO = 3,       /* a file cannot be read or written */
  KILN_ERROR_TUNE = 4,     /* tuning failed (e.g. the reference failed) */
  KILN_ERROR_COMPILE = 5,  /* lowering, LLVM or loading failed */
  KILN_ERROR_EXPORT = 6,   /* export failed (no record for the target, ...) */
  KILN_ERROR_INTERNAL = 99 /* a bug in kiln: please report the message */
} kiln_status;

/* The message and the id (e.g. "parse-error") of the last failed call on
 * this thread; "" when none failed. Valid until the next call. */
const char* kiln_last_error(void);
const char* kiln_last_error_id(void);

/* "major.minor.patch" of the library. */
const char* kiln_version(void);

/* Threads used by parallel kernels (default: every core); n < 1 restores
 * the default. Not while a kernel runs. */
void kiln_set_num_threads(int n);

/* Where kiln is installed (its data and its worker executable are found
 * under it). Needed only by a program linking a static libkiln that was
 * installed to another prefix than it was configured with, to tune (the
 * shipped cost model) or measure (the worker); the CMake package defines
 * KILN_PACKAGE_PREFIX for it: kiln_set_install_prefix(KILN_PACKAGE_PREFIX);
 * with pkg-config, `pkg-config --variable=prefix kiln` is the prefix. */
void kiln_set_install_prefix(const char* prefix);

/* ---- backends: the target, the loaded logs, the JIT ------------------ */

typedef struct kiln_backend kiln_backend;

/* A backend for the machine this process runs on. */
kiln_status kiln_backend_create(kiln_backend** out);
/* A backend for another machine ("aarch64-linux-gnu", "neoverse-v1"): it
 * picks records and exports for that CPU; it cannot compile kernels to
 * call here. */
kiln_status kiln_backend_create_for(const char* triple, const char* cpu, kiln_backend** out);
void kiln_backend_destroy(kiln_backend* backend);

/* The target's CPU name, e.g. "znver5". */
const char* kiln_backend_cpu(const kiln_backend* backend);

/* Adds the records of tuning logs (JSON lines). Damaged lines are skipped
 * and counted as warnings; only an unreadable file fails. */
kiln_status kiln_backend_load_logs(kiln_backend* backend, const char* const* paths, size_t count);
size_t kiln_backend_num_records(const kiln_backend* backend);
size_t kiln_backend_num_warnings(const kiln_backend* backend);
const char* kiln_backend_warning(const kiln_backend* backend, size_t index);

/* ---- ops ------------------------------------------------------------- */

typedef struct kiln_op kiln_op;

/* Parses op-language text (docs/op-language.md). `overrides` are
 * "NAME=VALUE" parameter settings, as `kiln --set` takes them (may be
 * NULL when count is 0). */
kiln_status kiln_op_parse(const char* text, const char* const* overrides, size_t count,
                          kiln_op** out);
kiln_status kiln_op_parse_file(const char* path, const char* const* overrides, size_t count,
                               kiln_op** out);
void kiln_op_destroy(kiln_op* op);

const char* kiln_op_name(const kiln_op* op);
/* The task's key in tuning logs, e.g. "matmul-8abae7e68beeeca9". */
const char* kiln_op_workload_key(const kiln_op* op);
double kiln_op_flops(const kiln_op* op);

typedef enum kiln_arg_kind {
  KILN_ARG_INPUT = 0,
  KILN_ARG_CONST_INPUT = 1, /* the same values every call: packed by prepack */
  KILN_ARG_OUTPUT = 2
} kiln_arg_kind;

typedef enum kiln_dtype {
  KILN_BOOL = 0,
  KILN_I32 = 1,
  KILN_I64 = 2,
  KILN_F32 = 3,
  KILN_F64 = 4
} kiln_dtype;

#define KILN_MAX_RANK 8

typedef struct kiln_arg_info {
  const char* name;
  kiln_arg_kind kind;
  kiln_dtype dtype;
  int rank;
  int64_t shape[KILN_MAX_RANK];
  int64_t num_elements;
  size_t bytes;
} kiln_arg_info;

/* The kernel's arguments, in call order: inputs in declaration order, then
 * outputs (docs/kernel-abi.md). Buffers are dense, row-major and 64-byte
 * aligned. */
int kiln_op_num_args(const kiln_op* op);
kiln_status kiln_op_arg(const kiln_op* op, int index, kiln_arg_info* out);

/* ---- apply history best ---------------------------------------------- */

typedef enum kiln_match {
  KILN_MATCH_NONE = 0, /* no valid record: the naive schedule */
  KILN_MATCH_SAME_CPU = 1,
  KILN_MATCH_SAME_FAMILY = 2, /* same architecture and vector width */
  KILN_MATCH_ANY_CPU = 3,
  /* no record of this shape: the best of the nearest tuned shape of the op,
   * its tile sizes refitted, checked and timed on this machine */
  KILN_MATCH_NEAREST_SHAPE = 4
} kiln_match;

typedef struct kiln_best {
  kiln_match match;
  int64_t trial;  /* the record's trial in its run; -1 without one */
  double seconds; /* its median time where it was measured; -1 without */
  double gflops;  /* 0 without a record */
  /* "trial 412 of online/evolutionary/seed=1, 81.30 GFLOPS on znver5 (exact
   * CPU)" or "no record of ...: the naive schedule"; valid until the next
   * kiln_backend_best on this backend. */
  const char* description;
} kiln_best;

/* The best valid record of the op among the loaded logs for the backend's
 * target: the same CPU, else the same family, else any CPU; for a shape
 * with no record, on a backend of this machine, the nearest tuned shape of
 * the op (refitted, checked and timed here once; the call may take
 * seconds). */
kiln_status kiln_backend_best(kiln_backend* backend, const kiln_op* op, kiln_best* out);

/* ---- tuning ----------------------------------------------------------- */

typedef struct kiln_tune_options {
  size_t size;                /* sizeof(kiln_tune_options), set by init */
  const char* log;            /* the tuning log (appended); required */
  const char* mode;           /* "online" (default), "offline", "hybrid" */
  int trials;                 /* measurement budget; default 200 */
  uint64_t seed;              /* default 1 */
  double time_budget_seconds; /* 0: none */
  int early_stop;             /* trials without a better one; 0: off */
  int resume;                 /* continue from the log's records */
  int isolate;                /* measure in a worker process; default 1 */
  const char* model_file;     /* a trained cost model, or NULL */
  int verbose;                /* print a line per round to stderr */
} kiln_tune_options;

void kiln_tune_options_init(kiln_tune_options* options);

typedef struct kiln_tune_result {
  int64_t trials;
  double best_seconds; /* -1 when no trial was valid */
  double best_gflops;
  double naive_seconds; /* -1 when the naive schedule was not timed */
} kiln_tune_result;

/* Tunes the op on this machine; its records are added to the backend's,
 * so that kiln_kernel_compile uses them. */
kiln_status kiln_tune(kiln_backend* backend, const kiln_op* op, const kiln_tune_options* options,
                      kiln_tune_result* out);

/* ---- kernels in this process ------------------------------------------ */

typedef struct kiln_kernel kiln_kernel;

/* Compiles the op with the backend's best record for it (or the naive
 * schedule; kiln_kernel_source says which). The kernel must be destroyed
 * before its backend. */
kiln_status kiln_kernel_compile(kiln_backend* backend, const kiln_op* op, kiln_kernel** out);
void kiln_kernel_destroy(kiln_kernel* kernel);
const char* kiln_kernel_source(const kiln_kernel* kernel);

/* `args`: one pointer per argument (kiln_op_arg order). prepack packs the
 * constant inputs once: call it before the first run and whenever a
 * constant input changes. */
kiln_status kiln_kernel_prepack(kiln_kernel* kernel, void* const* args);
kiln_status kiln_kernel_run(kiln_kernel* kernel, void* const* args);

/* ---- export: tuned kernels as object code ----------------------------- */

typedef struct kiln_export_options {
  size_t size;          /* sizeof(kiln_export_options), set by init */
  const char* out_dir;  /* the folder written (created); required */
  const char* name;     /* libNAME.a and NAME.h; a C identifier; default "kiln_kernels" */
  int shared;           /* also libNAME.so (this machine's targets only) */
  int allow_any_target; /* a backend for another CPU may take records of any CPU */
} kiln_export_options;

void kiln_export_options_init(kiln_export_options* options);

typedef struct kiln_exported kiln_exported;

/* Compiles each op with the backend's best record for its target (naive
 * without one) and writes one object per kernel, NAME.h and libNAME.a
 * (docs/library.md, "Export"). `out` (may be NULL) describes what was
 * written. */
kiln_status kiln_export(kiln_backend* backend, const kiln_op* const* ops, size_t count,
                        const kiln_export_options* options, kiln_exported** out);
/* Loads an ONNX model and exports every task of it as kiln_export does,
 * plus NAME_model.o with NAME_create, NAME_run and NAME_destroy, which run
 * the whole model (docs/library.md, "A whole model"). A model that cannot
 * be read or is not supported is KILN_ERROR_IO or KILN_ERROR_PARSE. */
kiln_status kiln_export_model(kiln_backend* backend, const char* model_path,
                              const kiln_export_options* options, kiln_exported** out);
void kiln_exported_destroy(kiln_exported* exported);
size_t kiln_exported_num_kernels(const kiln_exported* exported);
/* The kernels' entry points, kiln_<op>_<8 hex digits>: one per distinct op, in the
 * order of `ops`. */
const char* kiln_exported_symbol(const kiln_exported* exported, size_t index);
const char* kiln_exported_header(const kiln_exported* exported);
const char* kiln_exported_archive(const kiln_exported* exported);
/* What a program linking the archive adds, e.g. "-lpthread -lm". */
const char* kiln_exported_link_flags(const kiln_exported* exported);
/* The file name of NAME_model.o in the export's folder, for a model export
 * (kiln_export_model); "" otherwise. */
const char* kiln_exported_model_object(const kiln_exported* exported);

#ifdef __cplusplus
}
#endif

#endif /* KILN_KILN_H */
