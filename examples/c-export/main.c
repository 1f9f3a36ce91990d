/* A C program that links kernels exported by `kiln export`: two shapes of
 * matmul and a conv, with only the generated header and archive.
 *
 *   kiln tune ops/matmul_64.kop --trials 16 --log tuned.jsonl    (each op)
 *   kiln export tuned.jsonl --ops examples/c-export/ops -o out --name kernels
 *   cc -std=c11 main.c -Iout out/libkernels.a -lpthread -lm -o app && ./app
 *
 * Symbols are kiln_<op>_<first 8 hex digits of the workload key>: they stay
 * the same as long as the op files do. Each kernel is checked against the
 * op's definition computed with plain loops in double precision.
 */
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* matmul_64.kop, matmul_48x80x36.kop, conv2d_16x14x14_32.kop */
#define MATMUL_64 kiln_matmul_05f03fcd
#define MATMUL_48x80x36 kiln_matmul_eac0bf45
#define CONV kiln_conv2d_nchw_c9e2b856

#define CAT(a, b) CAT_(a, b)
#define CAT_(a, b) a##b

static float* aligned_floats(int64_t n) {
  float* p = aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

static void fill(float* p, int64_t n, int seed) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = (float)((i * 7 + seed * 13) % 17) / 17.0f - 0.5f;
}

/* Calls a kernel through its void(void**) entry: the packed buffers (a
 * schedule that packs the conv's weights has them) are allocated with the
 * header's sizes and filled by prepack first. */
typedef void (*packed_fn)(void**);

static void call_with_packed(void** args, int n_io, int num_packed, const int64_t* bytes,
                             packed_fn kernel, packed_fn prepack) {
  for (int i = 0; i < num_packed; ++i)
    args[n_io + i] = kiln_rt_alloc(bytes[i]);
  if (prepack)
    prepack(args);
  kernel(args);
  for (int i = 0; i < num_packed; ++i)
    kiln_rt_free(args[n_io + i]);
}

/* The packed-buffer facts of one kernel, from its header's macros. */
#ifdef KILN_CONV2D_NCHW_C9E2B856_NUM_PACKED
static const int64_t conv_packed_bytes[] = {
    KILN_CONV2D_NCHW_C9E2B856_PACKED0_BYTES,
#if KILN_CONV2D_NCHW_C9E2B856_NUM_PACKED > 1
    KILN_CONV2D_NCHW_C9E2B856_PACKED1_BYTES,
#endif
#if KILN_CONV2D_NCHW_C9E2B856_NUM_PACKED > 2
#error "more packed buffers than this example handles"
#endif
};
#define CONV_NUM_PACKED KILN_CONV2D_NCHW_C9E2B856_NUM_PACKED
#define CONV_PREPACK kiln_conv2d_nchw_c9e2b856_prepack_packed
#else
static const int64_t conv_packed_bytes[] = {0};
#define CONV_NUM_PACKED 0
#define CONV_PREPACK NULL
#endif

static double check_matmul(packed_fn kernel, int m, int n, int k) {
  float* a = aligned_floats(m * k);
  float* b = aligned_floats(k * n);
  float* c = aligned_floats(m * n);
  fill(a, m * k, 1);
  fill(b, k * n, 2);
  void* args[] = {a, b, c};
  kernel(args); /* matmul has no constant input: nothing to pack */
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int r = 0; r < k; ++r)
        sum += (double)a[i * k + r] * b[r * n + j];
      worst = fmax(worst, fabs(sum - c[i * n + j]));
    }
  free(a);
  free(b);
  free(c);
  return worst;
}

static double check_conv(void) {
  enum { C = 16, H = 14, W = 14, K = 32, R = 3, S = 3, PAD = 1 };
  float* data = aligned_floats(C * H * W);
  float* weights = aligned_floats(K * C * R * S);
  float* out = aligned_floats(K * H * W);
  fill(data, C * H * W, 3);
  fill(weights, K * C * R * S, 4);
  void* args[16] = {data, weights, out};
  call_with_packed(args, 3, CONV_NUM_PACKED, conv_packed_bytes, CAT(CONV, _packed), CONV_PREPACK);
  double worst = 0;
  for (int k = 0; k < K; ++k)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        double sum = 0;
        for (int c = 0; c < C; ++c)
          for (int ry = 0; ry < R; ++ry)
            for (int rx = 0; rx < S; ++rx) {
              int iy = y + ry - PAD, ix = x + rx - PAD;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                sum +=
                    (double)data[(c * H + iy) * W + ix] * weights[((k * C + c) * R + ry) * S + rx];
            }
        worst = fmax(worst, fabs(sum - out[(k * H + y) * W + x]));
      }
  free(data);
  free(weights);
  free(out);
  return worst;
}

int main(void) {
  double e1 = check_matmul(CAT(MATMUL_64, _packed), 64, 64, 64);
  double e2 = check_matmul(CAT(MATMUL_48x80x36, _packed), 48, 80, 36);
  double e3 = check_conv();
  printf("matmul 64x64x64: max error %.3g\n", e1);
  printf("matmul 48x80x36: max error %.3g\n", e2);
  printf("conv2d 16x14x14 -> 32, 3x3: max error %.3g (%d packed buffers)\n", e3, CONV_NUM_PACKED);
  int ok = e1 < 1e-3 && e2 < 1e-3 && e3 < 1e-3;
  printf(ok ? "all kernels match\n" : "MISMATCH\n");
  return ok ? 0 : 1;
}
