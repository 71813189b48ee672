// SPDX-License-Identifier: Apache-2.0
// Runs the mlcc-compiled example detector (ml_model_library :detector) for the configured
// target: the call succeeds and every output is a sigmoid in (0,1). It prints a checksum
// and 4 sampled outputs; run.sh compares those across host, aarch64 and riscv64 (and the
// tiny test is the one checked against an independent numpy reference).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "detector.h"

enum { kIn = 1 * 3 * 128 * 128, kOut = 1 * 768 * 9 };
static float input[kIn];
static float output[kOut];
static _Alignas(DETECTOR_WORKSPACE_ALIGN) unsigned char workspace[DETECTOR_WORKSPACE_SIZE > 0 ? DETECTOR_WORKSPACE_SIZE : 1];

int main(void) {
  for (int i = 0; i < kIn; ++i) input[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
  memset(output, 0xff, sizeof(output));
  if (detector_run(input, output, workspace) != 0) {
    fprintf(stderr, "detector_run failed\n");
    return 1;
  }
  double sum = 0;
  for (int i = 0; i < kOut; ++i) {
    if (!(output[i] > 0.0f && output[i] < 1.0f)) {
      fprintf(stderr, "output[%d] = %g is not in (0,1)\n", i, output[i]);
      return 1;
    }
    sum += output[i];
  }
  printf("detector: checksum %.6f samples %.7f %.7f %.7f %.7f\n", sum, output[0], output[1000],
         output[4321], output[kOut - 1]);
  return 0;
}
