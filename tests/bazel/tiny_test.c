// SPDX-License-Identifier: Apache-2.0
// Runs the mlcc-compiled tiny model (ml_model_library :tiny) and compares its output with
// the numpy reference from make_tiny.py: max|y - ref| <= atol + rtol*|ref| (DESIGN §4).
// Built and run by Bazel for the host, and under --config=aarch64|riscv64 through qemu.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tiny.h"
#include "tiny_ref.h"

static _Alignas(TINY_WORKSPACE_ALIGN) unsigned char workspace[TINY_WORKSPACE_SIZE > 0 ? TINY_WORKSPACE_SIZE : 1];

int main(void) {
  float y[5];
  memset(y, 0xff, sizeof(y));  // NaN: an output the library does not write fails the test
  if (tiny_run(kTinyInput, y, workspace) != 0) {
    fprintf(stderr, "tiny_run failed\n");
    return 1;
  }
  const double rtol = 1e-4, atol = 1e-5;
  int bad = 0;
  double worst = 0;
  for (int i = 0; i < 5; ++i) {
    double err = fabs((double)y[i] - (double)kTinyExpected[i]);
    if (!(err <= atol + rtol * fabs((double)kTinyExpected[i]))) {
      fprintf(stderr, "y[%d] = %.9g, expected %.9g\n", i, y[i], kTinyExpected[i]);
      ++bad;
    }
    if (err > worst || err != err) worst = err;
  }
  printf("tiny: %d/5 outputs match the numpy reference (max abs error %.3g)\n", 5 - bad, worst);
  return bad ? 1 : 0;
}
