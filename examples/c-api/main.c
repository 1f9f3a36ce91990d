/* kiln's C API from a plain C program built with pkg-config:
 *
 *   cc main.c $(pkg-config --cflags --libs --static kiln) -o kiln-c-example
 *   ./kiln-c-example [LOG...]
 *
 * Parses a matmul, applies the history best of the logs (if any), compiles
 * the kernel into the process, calls it and checks it against a plain loop.
 */
#include <kiln/kiln.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char* const kOp = "op matmul\n"
                               "param M = 48\nparam N = 64\nparam K = 40\n"
                               "input A : f32[M, K]\ninput B : f32[K, N]\n"
                               "output C[i < M, j < N] = sum(A[i, k] * B[k, j] for k < K)\n";

static int fail(const char* what) {
  fprintf(stderr, "%s: [%s] %s\n", what, kiln_last_error_id(), kiln_last_error());
  return 1;
}

int main(int argc, char** argv) {
  kiln_backend* backend = NULL;
  kiln_op* op = NULL;
  kiln_kernel* kernel = NULL;
  if (kiln_backend_create(&backend) != KILN_OK)
    return fail("kiln_backend_create");
  if (argc > 1 && kiln_backend_load_logs(backend, (const char* const*)(argv + 1),
                                         (size_t)(argc - 1)) != KILN_OK)
    return fail("kiln_backend_load_logs");
  if (kiln_op_parse(kOp, NULL, 0, &op) != KILN_OK)
    return fail("kiln_op_parse");
  if (kiln_kernel_compile(backend, op, &kernel) != KILN_OK)
    return fail("kiln_kernel_compile");
  printf("%s (%s on %s): %s\n", kiln_op_name(op), kiln_op_workload_key(op),
         kiln_backend_cpu(backend), kiln_kernel_source(kernel));

  const int m = 48, n = 64, k = 40;
  float* a = aligned_alloc(64, sizeof(float) * m * k);
  float* b = aligned_alloc(64, sizeof(float) * k * n);
  float* c = aligned_alloc(64, sizeof(float) * m * n);
  for (int i = 0; i < m * k; ++i)
    a[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < k * n; ++i)
    b[i] = (float)(i % 5) * 0.5f;
  void* args[] = {a, b, c};
  if (kiln_kernel_prepack(kernel, args) != KILN_OK || kiln_kernel_run(kernel, args) != KILN_OK)
    return fail("kiln_kernel_run");
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int r = 0; r < k; ++r)
        sum += (double)a[i * k + r] * b[r * n + j];
      worst = fmax(worst, fabs(sum - c[i * n + j]));
    }
  printf("max error %.3g against a plain loop\n", worst);
  free(a);
  free(b);
  free(c);
  kiln_kernel_destroy(kernel);
  kiln_op_destroy(op);
  kiln_backend_destroy(backend);
  return worst < 1e-3 ? 0 : 1;
}
