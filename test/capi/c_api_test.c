/* The C API from C: parse an op, tune it into a log, load the log in a new
 * backend, pick the best record, compile, call, and check the answer against
 * a plain loop; and the errors a C caller sees. Exits non-zero on failure.
 *
 *   c_api_test LOG   (LOG: a path the test may create and remove)
 */
#include "kiln/kiln.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: [%s] %s\n", __FILE__, __LINE__, #cond, \
              kiln_last_error_id(), kiln_last_error());                                            \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* The condition is evaluated once: it is usually a call that makes a handle. */
#define REQUIRE(cond)                                                                              \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: REQUIRE(%s) failed; last error: [%s] %s\n", __FILE__, __LINE__,      \
              #cond, kiln_last_error_id(), kiln_last_error());                                     \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static const char* const kMatmul = "op matmul\n"
                                   "param M = 8\nparam N = 8\nparam K = 8\n"
                                   "input A : f32[M, K]\ninput B : f32[K, N]\n"
                                   "output C[i < M, j < N] = sum(A[i, k] * B[k, j] for k < K)\n";

static float* aligned_floats(int64_t n) {
  return (float*)aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
}

/* Runs the kernel on seeded data; returns the largest difference from a
 * plain triple loop. */
static double matmul_error(kiln_kernel* kernel, int64_t m, int64_t n, int64_t k) {
  float* a = aligned_floats(m * k);
  float* b = aligned_floats(k * n);
  float* c = aligned_floats(m * n);
  for (int64_t i = 0; i < m * k; ++i)
    a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
  for (int64_t i = 0; i < k * n; ++i)
    b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  void* args[3] = {a, b, c};
  double worst = 1e30;
  if (kiln_kernel_prepack(kernel, args) == KILN_OK && kiln_kernel_run(kernel, args) == KILN_OK) {
    worst = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t r = 0; r < k; ++r)
          sum += (double)a[i * k + r] * b[r * n + j];
        double diff = fabs(sum - c[i * n + j]);
        if (diff > worst)
          worst = diff;
      }
  }
  free(a);
  free(b);
  free(c);
  return worst;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_api_test LOG MODEL\n");
    return 2;
  }
  const char* log = argv[1];
  const char* model = argv[2];
  remove(log);
  CHECK(strlen(kiln_version()) > 0);

  /* An op with its shape set as `kiln --set` would. */
  const char* sets[] = {"M=24", "N=40", "K=36"};
  kiln_op* op = NULL;
  REQUIRE(kiln_op_parse(kMatmul, sets, 3, &op) == KILN_OK);
  CHECK(strcmp(kiln_op_name(op), "matmul") == 0);
  CHECK(strncmp(kiln_op_workload_key(op), "matmul-", 7) == 0);
  CHECK(kiln_op_flops(op) == 2.0 * 24 * 40 * 36);
  REQUIRE(kiln_op_num_args(op) == 3);
  kiln_arg_info info;
  REQUIRE(kiln_op_arg(op, 2, &info) == KILN_OK);
  CHECK(strcmp(info.name, "C") == 0 && info.kind == KILN_ARG_OUTPUT && info.dtype == KILN_F32);
  CHECK(info.rank == 2 && info.shape[0] == 24 && info.shape[1] == 40 && info.bytes == 24 * 40 * 4);
  CHECK(kiln_op_arg(op, 3, &info) == KILN_ERROR_ARGUMENT);

  /* Tune a few trials into the log. */
  kiln_backend* tuner = NULL;
  REQUIRE(kiln_backend_create(&tuner) == KILN_OK);
  kiln_tune_options options;
  kiln_tune_options_init(&options);
  options.log = log;
  options.trials = 8;
  kiln_tune_result tuned;
  REQUIRE(kiln_tune(tuner, op, &options, &tuned) == KILN_OK);
  CHECK(tuned.trials >= 8 && tuned.best_seconds > 0 && tuned.best_gflops > 0);
  kiln_backend_destroy(tuner);

  /* A later compiler run: a new backend reads the log and applies its best. */
  kiln_backend* backend = NULL;
  REQUIRE(kiln_backend_create(&backend) == KILN_OK);
  const char* logs[] = {log};
  REQUIRE(kiln_backend_load_logs(backend, logs, 1) == KILN_OK);
  CHECK(kiln_backend_num_records(backend) >= 8);
  kiln_best best;
  REQUIRE(kiln_backend_best(backend, op, &best) == KILN_OK);
  CHECK(best.match == KILN_MATCH_SAME_CPU && best.trial >= 0 && best.gflops > 0);
  CHECK(strstr(best.description, "exact CPU") != NULL);
  kiln_kernel* kernel = NULL;
  REQUIRE(kiln_kernel_compile(backend, op, &kernel) == KILN_OK);
  CHECK(strstr(kiln_kernel_source(kernel), "trial") != NULL);
  CHECK(matmul_error(kernel, 24, 40, 36) < 1e-4);
  kiln_kernel_destroy(kernel);

  /* Export the tuned kernel: object code, a header and an archive. */
  char out_dir[4096];
  snprintf(out_dir, sizeof out_dir, "%s.export", log);
  kiln_export_options export_options;
  kiln_export_options_init(&export_options);
  export_options.out_dir = out_dir;
  export_options.name = "capi_kernels";
  kiln_exported* exported = NULL;
  const kiln_op* export_ops[] = {op, op};
  REQUIRE(kiln_export(backend, export_ops, 2, &export_options, &exported) == KILN_OK);
  CHECK(kiln_exported_num_kernels(exported) == 1); /* one per distinct op */
  CHECK(strncmp(kiln_exported_symbol(exported, 0), "kiln_matmul_", 12) == 0);
  CHECK(strncmp(kiln_exported_symbol(exported, 0) + 12, kiln_op_workload_key(op) + 7, 8) == 0);
  FILE* header = fopen(kiln_exported_header(exported), "r");
  CHECK(header != NULL);
  if (header)
    fclose(header);
  CHECK(strstr(kiln_exported_archive(exported), "libcapi_kernels.a") != NULL);
  kiln_exported_destroy(exported);
  export_options.name = "not an identifier";
  CHECK(kiln_export(backend, export_ops, 1, &export_options, NULL) == KILN_ERROR_EXPORT);

  /* A whole model: its kernels (naive: the log has none of its tasks) and
   * the functions that run it. */
  snprintf(out_dir, sizeof out_dir, "%s.model-export", log);
  export_options.name = "capi_model";
  REQUIRE(kiln_export_model(backend, model, &export_options, &exported) == KILN_OK);
  CHECK(kiln_exported_num_kernels(exported) > 1);
  CHECK(strcmp(kiln_exported_model_object(exported), "capi_model_model.o") == 0);
  header = fopen(kiln_exported_header(exported), "r");
  CHECK(header != NULL);
  if (header) {
    char line[512];
    int declared = 0;
    while (fgets(line, sizeof line, header))
      declared |= strstr(line, "int capi_model_run(capi_model_model* model") != NULL;
    CHECK(declared);
    fclose(header);
  }
  kiln_exported_destroy(exported);
  CHECK(kiln_export_model(backend, "/nonexistent/model.onnx", &export_options, &exported) ==
        KILN_ERROR_IO);
  CHECK(strcmp(kiln_last_error_id(), "cannot-open-file") == 0);
  CHECK(exported == NULL);

  /* Another shape has no record: the tuned shape's best refitted to it,
   * checked and timed here, still right. */
  const char* other_sets[] = {"M=5", "N=7", "K=3"};
  kiln_op* other = NULL;
  REQUIRE(kiln_op_parse(kMatmul, other_sets, 3, &other) == KILN_OK);
  REQUIRE(kiln_backend_best(backend, other, &best) == KILN_OK);
  CHECK(best.match == KILN_MATCH_NEAREST_SHAPE && best.trial == -1 && best.seconds > 0);
  CHECK(strstr(best.description, "nearest shape: trial") != NULL);
  REQUIRE(kiln_kernel_compile(backend, other, &kernel) == KILN_OK);
  CHECK(strstr(kiln_kernel_source(kernel), "nearest shape") != NULL);
  CHECK(matmul_error(kernel, 5, 7, 3) < 1e-5);
  kiln_kernel_destroy(kernel);
  kiln_op_destroy(other);

  /* Errors are statuses with messages, never crashes. */
  kiln_op* bad = NULL;
  CHECK(kiln_op_parse("op broken\noutput C[i < 4] = A[i]\n", NULL, 0, &bad) == KILN_ERROR_PARSE);
  CHECK(bad == NULL && strlen(kiln_last_error()) > 0);
  CHECK(kiln_op_parse_file("/nonexistent/op.kop", NULL, 0, &bad) == KILN_ERROR_IO);
  CHECK(strstr(kiln_last_error(), "/nonexistent/op.kop") != NULL);
  const char* bad_set[] = {"M"};
  CHECK(kiln_op_parse(kMatmul, bad_set, 1, &bad) == KILN_ERROR_PARSE);
  const char* missing[] = {"/nonexistent/log.jsonl"};
  CHECK(kiln_backend_load_logs(backend, missing, 1) == KILN_ERROR_IO);
  CHECK(kiln_kernel_compile(NULL, op, &kernel) == KILN_ERROR_ARGUMENT);
  kiln_tune_options_init(&options);
  kiln_tune_result ignored;
  CHECK(kiln_tune(backend, op, &options, &ignored) == KILN_ERROR_ARGUMENT); /* no log */
  options.log = log;
  options.mode = "sideways";
  CHECK(kiln_tune(backend, op, &options, &ignored) == KILN_ERROR_ARGUMENT);
  CHECK(strstr(kiln_last_error(), "sideways") != NULL);
  options.mode = "online";
  options.trials = -3;
  CHECK(kiln_tune(backend, op, &options, &ignored) == KILN_ERROR_ARGUMENT);
  kiln_backend* elsewhere = NULL;
  CHECK(kiln_backend_create_for("x86_64-linux-gnu", "no-such-cpu", &elsewhere) ==
        KILN_ERROR_ARGUMENT);
  CHECK(elsewhere == NULL);
  REQUIRE(kiln_backend_create_for("aarch64-linux-gnu", "neoverse-v1", &elsewhere) == KILN_OK);
  CHECK(strcmp(kiln_backend_cpu(elsewhere), "neoverse-v1") == 0);
  CHECK(kiln_kernel_compile(elsewhere, op, &kernel) == KILN_ERROR_COMPILE);
  CHECK(strcmp(kiln_last_error_id(), "not-this-machine") == 0);
  kiln_backend_destroy(elsewhere);

  kiln_op_destroy(op);
  kiln_backend_destroy(backend);
  kiln_backend_destroy(NULL);
  remove(log);
  char best_file[4096];
  snprintf(best_file, sizeof best_file, "%s.best.json", log);
  remove(best_file);
  if (failures == 0)
    printf("c_api_test: all checks passed\n");
  return failures ? 1 : 0;
}
