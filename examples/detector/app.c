// SPDX-License-Identifier: Apache-2.0
// Example: runs the mlcc-compiled detector on a deterministic synthetic image
// and prints the five highest-scoring boxes and the latency.
//
// The library comes from `mlcc detector.onnx -o libdetector.a`; it needs only
// libc/libm. Output layout [1,768,9]: for each of 3 anchors x 16x16 cells,
// (x, y, w, h, objectness, 4 class scores), all passed through a sigmoid.
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detector.h"

enum { kSize = 128, kGrid = 16, kAnchors = 3, kAttrs = 9, kClasses = 4, kTop = 5 };

static float input[1 * 3 * kSize * kSize];
static float output[1 * kAnchors * kGrid * kGrid * kAttrs];
// The workspace the library needs, aligned as its header says.
static _Alignas(DETECTOR_WORKSPACE_ALIGN) unsigned char
    workspace[DETECTOR_WORKSPACE_SIZE > 0 ? DETECTOR_WORKSPACE_SIZE : 1];

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// A gray gradient with two bright rectangles, normalized to about N(0,1).
static void make_image(void) {
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < kSize; ++y) {
      for (int x = 0; x < kSize; ++x) {
        float v = (float)(x + y) / (2.0f * kSize);
        if (x >= 20 && x < 60 && y >= 30 && y < 90) v = c == 0 ? 1.0f : 0.2f;
        if (x >= 80 && x < 120 && y >= 70 && y < 110) v = c == 2 ? 1.0f : 0.3f;
        input[(c * kSize + y) * kSize + x] = (v - 0.45f) / 0.25f;
      }
    }
  }
}

typedef struct box_t {
  float score, x, y, w, h;
  int cls, index;
} box_t;

static int by_score(const void* a, const void* b) {
  const box_t* p = a;
  const box_t* q = b;
  if (p->score != q->score) return p->score < q->score ? 1 : -1;
  return p->index - q->index;
}

int main(int argc, char** argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 20;
  if (runs < 1) runs = 1;
  make_image();
  if (detector_run(input, output, workspace) != 0) {
    fprintf(stderr, "detector_run failed\n");
    return 1;
  }
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    double t0 = now_ms();
    detector_run(input, output, workspace);
    double t = now_ms() - t0;
    if (t < best) best = t;
  }
  static box_t boxes[kAnchors * kGrid * kGrid];
  int n = 0;
  for (int a = 0; a < kAnchors; ++a) {
    for (int gy = 0; gy < kGrid; ++gy) {
      for (int gx = 0; gx < kGrid; ++gx) {
        int i = (a * kGrid + gy) * kGrid + gx;
        const float* p = &output[i * kAttrs];
        int cls = 0;
        for (int c = 1; c < kClasses; ++c)
          if (p[5 + c] > p[5 + cls]) cls = c;
        box_t* b = &boxes[n++];
        b->score = p[4] * p[5 + cls];
        b->cls = cls;
        b->index = i;
        b->x = (gx + p[0]) * (kSize / kGrid);
        b->y = (gy + p[1]) * (kSize / kGrid);
        b->w = p[2] * 4.0f * (kSize / kGrid) * (a + 1);
        b->h = p[3] * 4.0f * (kSize / kGrid) * (a + 1);
      }
    }
  }
  qsort(boxes, (size_t)n, sizeof(boxes[0]), by_score);
  printf("detector: %d boxes, workspace %d bytes\n", n, (int)DETECTOR_WORKSPACE_SIZE);
  for (int i = 0; i < kTop; ++i) {
    printf("  #%d box %3d class %d score %.4f  center (%6.2f, %6.2f) size %6.2f x %6.2f\n",
           i + 1, boxes[i].index, boxes[i].cls, boxes[i].score, boxes[i].x, boxes[i].y,
           boxes[i].w, boxes[i].h);
  }
  printf("latency: %.3f ms (best of %d)\n", best, runs);
  return 0;
}
