// SPDX-License-Identifier: Apache-2.0
// Runs the mlcc-compiled tiny model, y = Relu(x @ W + b), and compares it with
// the same computation in plain C. W and b follow the formulas that
// consumer_test.py used to write tiny.onnx; x is chosen here.
#include <math.h>
#include <stdio.h>

#include "tiny.h"

static _Alignas(TINY_WORKSPACE_ALIGN) unsigned char
    workspace[TINY_WORKSPACE_SIZE > 0 ? TINY_WORKSPACE_SIZE : 1];

int main(void) {
  float x[2][4], y[2][3];
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 4; ++i) x[r][i] = (float)(r + 1) * ((float)i - 1.5f);
  if (tiny_run(&x[0][0], &y[0][0], workspace) != 0) {
    printf("tiny: tiny_run failed\n");
    return 1;
  }
  int bad = 0;
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 3; ++j) {
      double acc = 0.5 - 0.75 * j;                           // b[j]
      for (int i = 0; i < 4; ++i) acc += x[r][i] * ((i - 2 * j) * 0.25 + 0.125);  // W[i][j]
      double want = acc > 0 ? acc : 0;
      printf("y[%d][%d] = %.6f (want %.6f)\n", r, j, y[r][j], want);
      if (!(fabs(y[r][j] - want) <= 1e-5 + 1e-4 * fabs(want))) bad = 1;
    }
  }
  printf(bad ? "tiny: WRONG\n" : "tiny: ok\n");
  return bad;
}
