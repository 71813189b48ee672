// SPDX-License-Identifier: Apache-2.0
// The bare-metal twin of ../consumer/main.c: runs the mlcc-compiled tiny
// model, y = Relu(x @ W + b), on a qemu-system board and compares it with
// the same computation in plain C (W and b from the formulas consumer_test.py
// used to write tiny.onnx); prints through semihosting, and main's status is
// qemu's exit status. No libm and no printf: the board has neither.
#include "semihost.h"
#include "tiny.h"

static _Alignas(TINY_WORKSPACE_ALIGN) unsigned char
    workspace[TINY_WORKSPACE_SIZE > 0 ? TINY_WORKSPACE_SIZE : 1];

int main(void) {
  float x[2][4], y[2][3];
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 4; ++i) x[r][i] = (float)(r + 1) * ((float)i - 1.5f);
  if (tiny_run(&x[0][0], &y[0][0], workspace) != 0) {
    semihost_write0("tiny: tiny_run failed\n");
    return 1;
  }
  int bad = 0;
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 3; ++j) {
      float acc = 0.5f - 0.75f * (float)j;  // b[j]
      for (int i = 0; i < 4; ++i) acc += x[r][i] * ((float)(i - 2 * j) * 0.25f + 0.125f);
      float want = acc > 0 ? acc : 0;
      float err = y[r][j] - want;
      if (err < 0) err = -err;
      if (!(err <= 1e-5f + 1e-4f * (want > 0 ? want : -want))) bad = 1;
    }
  }
  semihost_write0(bad ? "tiny: WRONG\n" : "tiny: ok\n");
  return bad;
}
