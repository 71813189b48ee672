// SPDX-License-Identifier: Apache-2.0
// Keyword spotting with the MLPerf Tiny DS-CNN (kws_dscnn of
// ../shared/models/tiny): one portable C program for the whole fleet. It
// reads input_0.bin (the 1x1x49x10 MFCC block, raw float32) and ref_0.bin
// (the 12 reference softmax scores) from the working directory, calls
// kws_run once, compares every score with the reference (|got - ref| <=
// 1e-5 + 1e-4 |ref|, the project's float32 rule), prints the scores and the
// top class, and writes the scores to output_<KWS_TAG>.bin for the
// cross-target check (compare.py). Exit status: 0 match, 1 mismatch, 2 a
// missing or short file, 3 kws_run failed.
//
// Hosted (Linux: x86-64 natively, aarch64 and riscv64 under qemu-user) it
// uses stdio; with -DKWS_BARE_METAL (a microcontroller under qemu-system) it
// uses the board's semihosting calls (tests/mcu/semihost.h): file I/O on the
// host's working directory, and main's status becomes qemu's exit status.
#include <stddef.h>
#include <stdint.h>

#include "kws.h"

// KWS_TAG: the target's alias as a bare token (-DKWS_TAG=cortex-m4), named
// in the output file and the top-class line.
#ifndef KWS_TAG
#define KWS_TAG host
#endif
#define KWS_STR2(x) #x
#define KWS_STR(x) KWS_STR2(x)
#define KWS_TAG_STR KWS_STR(KWS_TAG)

enum { kIn = 1 * 1 * 49 * 10, kOut = 12 };

static _Alignas(KWS_WORKSPACE_ALIGN) unsigned char
    workspace[KWS_WORKSPACE_SIZE > 0 ? KWS_WORKSPACE_SIZE : 1];
static float input[kIn], output[kOut], ref[kOut];

#ifdef KWS_BARE_METAL
#include "semihost.h"

static void put(const char* text) { semihost_write0(text); }

// Reads exactly |size| bytes of file |name|; 0 on success.
static int read_exact(const char* name, void* data, size_t size) {
  int h = semihost_open(name, "rb");
  if (h < 0) return -1;
  long len = semihost_flen(h);
  long left = len == (long)size ? semihost_read(h, data, size) : -1;
  semihost_close(h);
  return left == 0 ? 0 : -1;  // SYS_READ returns the bytes not read
}

static int write_all(const char* name, const void* data, size_t size) {
  int h = semihost_open(name, "wb");
  if (h < 0) return -1;
  long left = semihost_write(h, data, size);
  semihost_close(h);
  return left == 0 ? 0 : -1;
}
#else
#include <stdio.h>

static void put(const char* text) { fputs(text, stdout); }

static int read_exact(const char* name, void* data, size_t size) {
  FILE* f = fopen(name, "rb");
  if (f == NULL) return -1;
  size_t got = fread(data, 1, size, f);
  int extra = fgetc(f);
  fclose(f);
  return got == size && extra == EOF ? 0 : -1;
}

static int write_all(const char* name, const void* data, size_t size) {
  FILE* f = fopen(name, "wb");
  if (f == NULL) return -1;
  size_t put_n = fwrite(data, 1, size, f);
  return fclose(f) == 0 && put_n == size ? 0 : -1;
}
#endif

// |v| (below 4294) with six decimals (no printf: a bare-metal board may have
// none).
static void put_fixed6(float v) {
  char buf[32];
  int n = 0;
  if (v < 0) {
    buf[n++] = '-';
    v = -v;
  }
  uint32_t micro = (uint32_t)(v * 1e6f + 0.5f);  // float only: no soft-double helpers
  uint32_t whole = micro / 1000000u, frac = micro % 1000000u;
  char digits[24];
  int d = 0;
  do {
    digits[d++] = (char)('0' + whole % 10);
    whole /= 10;
  } while (whole != 0);
  while (d > 0) buf[n++] = digits[--d];
  buf[n++] = '.';
  for (uint32_t div = 100000u; div != 0; div /= 10) buf[n++] = (char)('0' + (frac / div) % 10);
  buf[n] = '\0';
  put(buf);
}

static void put_int(int v) {
  char buf[12];
  int n = 0;
  do {
    buf[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < 11);
  char out[12];
  for (int i = 0; i < n; ++i) out[i] = buf[n - 1 - i];
  out[n] = '\0';
  put(out);
}

int main(void) {
  if (read_exact("input_0.bin", input, sizeof(input)) != 0 ||
      read_exact("ref_0.bin", ref, sizeof(ref)) != 0) {
    put("kws: cannot read input_0.bin (1960 bytes) and ref_0.bin (48 bytes)\n");
    return 2;
  }
  if (kws_run(input, output, workspace) != 0) {
    put("kws: kws_run failed\n");
    return 3;
  }
  int top = 0, bad = 0;
  for (int k = 0; k < kOut; ++k) {
    float err = output[k] - ref[k], mag = ref[k] < 0 ? -ref[k] : ref[k];
    if (err < 0) err = -err;
    int ok = err <= 1e-5f + 1e-4f * mag;
    if (!ok) bad = 1;
    if (output[k] > output[top]) top = k;
    put("kws: score ");
    put_int(k);
    put(" ");
    put_fixed6(output[k]);
    put(ok ? "\n" : "  <- differs from the reference\n");
  }
  put("kws: top class ");
  put_int(top);
  put(" (" KWS_TAG_STR ")\n");
  if (write_all("output_" KWS_TAG_STR ".bin", output, sizeof(output)) != 0) {
    put("kws: cannot write output_" KWS_TAG_STR ".bin\n");
    return 2;
  }
  put(bad ? "kws: WRONG\n" : "kws: ok, all 12 scores match the reference\n");
  return bad;
}
