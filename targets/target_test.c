// SPDX-License-Identifier: Apache-2.0
// Tests for target resolution (targets/target.c).
#include "targets/target.h"

#include <stdio.h>
#include <string.h>

#include "test.h"

static void test_aliases(void) {
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve("x86", NULL, NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_X86_64);
  CHECK_STREQ(t.triple, "x86_64-linux-gnu");
  CHECK_STREQ(t.cpu, "x86-64-v3");
  CHECK_STREQ(t.alias, "x86");
  CHECK_EQ_INT(t.vector_bytes, 32);

  CHECK_OK(mlcc_target_resolve("aarch64", NULL, NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_AARCH64);
  CHECK_STREQ(t.triple, "aarch64-linux-gnu");
  CHECK_STREQ(t.features, "+neon");
  CHECK_EQ_INT(t.vector_bytes, 16);

  CHECK_OK(mlcc_target_resolve("riscv", NULL, NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_RISCV64);
  CHECK_STREQ(t.cpu, "generic-rv64");
  CHECK_STREQ(t.features, "+m,+a,+f,+d,+c");
  CHECK_EQ_INT(t.vector_bytes, 16);

  // -mattr=+v adds RVV to the defaults and widens the vector preference.
  CHECK_OK(mlcc_target_resolve("riscv", NULL, "+v", &t));
  CHECK_STREQ(t.features, "+m,+a,+f,+d,+c,+v");
  CHECK_EQ_INT(t.vector_bytes, 32);
}

static void test_triples(void) {
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve("aarch64-unknown-linux-gnu", NULL, NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_AARCH64);
  CHECK_STREQ(t.triple, "aarch64-unknown-linux-gnu");
  CHECK_STREQ(t.alias, "aarch64");
  CHECK_OK(mlcc_target_resolve("riscv64-linux-gnu", "sifive-u74", NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_RISCV64);
  CHECK_STREQ(t.cpu, "sifive-u74");
  CHECK_OK(mlcc_target_resolve("x86_64-pc-linux-gnu", "skylake-avx512", NULL, &t));
  CHECK_EQ_INT(t.vector_bytes, 64);
  CHECK_OK(mlcc_target_resolve("x86", NULL, "+avx512f", &t));
  CHECK_EQ_INT(t.vector_bytes, 64);
  CHECK_STREQ(t.features, "+avx512f");
}

static void test_bad_target(void) {
  mlcc_target_t t;
  CHECK_STATUS(mlcc_target_resolve("sparc", NULL, NULL, &t), MLCC_STATUS_NOT_FOUND);
  CHECK_STATUS(mlcc_target_resolve("mips64-linux-gnu", NULL, NULL, &t),
               MLCC_STATUS_NOT_FOUND);
  // A non-Linux triple of a supported arch is refused (we emit Linux ELF).
  CHECK_STATUS(mlcc_target_resolve("aarch64-apple-darwin", NULL, NULL, &t),
               MLCC_STATUS_NOT_FOUND);
  // The bare arch names its Linux triple.
  CHECK_OK(mlcc_target_resolve("x86_64", NULL, NULL, &t));
  CHECK_STREQ(t.triple, "x86_64-linux-gnu");
  CHECK_OK(mlcc_target_resolve("riscv64", NULL, NULL, &t));
  CHECK_STREQ(t.triple, "riscv64-linux-gnu");
  // -mattr merges into the defaults: no duplicates, a "-x" turns one off.
  CHECK_OK(mlcc_target_resolve("riscv", NULL, "+m,+v,-c", &t));
  CHECK_STREQ(t.features, "+m,+a,+f,+d,-c,+v");
  // Unknown CPUs and features are usage errors, not LLVM warnings.
  CHECK_STATUS(mlcc_target_resolve("x86", "nonsense", NULL, &t),
               MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_STATUS(mlcc_target_resolve("riscv", NULL, "+bogus", &t),
               MLCC_STATUS_INVALID_ARGUMENT);
  CHECK_OK(mlcc_target_resolve("aarch64", "cortex-a72", NULL, &t));
  // A real CPU LLVM cannot target in 64-bit mode: a usage error, not an abort.
  mlcc_status_t s32 = mlcc_target_resolve("x86", "i386", NULL, &t);
  CHECK(mlcc_status_code(s32) == MLCC_STATUS_INVALID_ARGUMENT &&
        strstr(mlcc_status_message(s32), "64-bit") != NULL);
  mlcc_status_free(s32);
  // The message lists the aliases.
  mlcc_status_t s = mlcc_target_resolve("sparc", NULL, NULL, &t);
  CHECK(s != NULL && strstr(mlcc_status_message(s), "aarch64") != NULL);
  mlcc_status_free(s);
}

// The microcontroller rows: bare metal, their FPUs, -mcpu/-mattr as
// elsewhere, and the FPU deciding whether long sums may use double.
static void test_microcontrollers(void) {
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve("cortex-m4", NULL, NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_CORTEX_M4);
  CHECK_STREQ(t.triple, "thumbv7em-none-eabihf");
  CHECK(mlcc_target_is_bare_metal(&t));
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_SINGLE);
  CHECK(!mlcc_target_wide_sums(&t));
  CHECK_EQ_INT(t.vector_bytes, 4);  // no float SIMD: the scalar kernels
  // cortex-m7's FPv5-D16 has double precision; -fpregs removes the FPU.
  CHECK_OK(mlcc_target_resolve("cortex-m4", "cortex-m7", NULL, &t));
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_DOUBLE);
  CHECK_OK(mlcc_target_resolve("cortex-m4", "cortex-m7", "-fp64", &t));
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_SINGLE);
  CHECK_OK(mlcc_target_resolve("cortex-m4", "cortex-m3", NULL, &t));
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_NONE);
  CHECK_OK(mlcc_target_resolve("cortex-m55", NULL, NULL, &t));
  CHECK_STREQ(t.triple, "thumbv8.1m.main-none-eabihf");
  CHECK_STREQ(t.features, "+mve.fp,+fp-armv8d16");
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_DOUBLE);
  CHECK_EQ_INT(t.vector_bytes, 16);  // Helium
  CHECK_OK(mlcc_target_resolve("cortex-m55", NULL, "-fpregs", &t));
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_NONE);
  CHECK_OK(mlcc_target_resolve("rv32", NULL, NULL, &t));
  CHECK_STREQ(t.triple, "riscv32-unknown-elf");
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_NONE);
  CHECK_OK(mlcc_target_resolve("rv32f", NULL, NULL, &t));
  CHECK_EQ_INT(t.arch, MLCC_ARCH_RV32F);
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_SINGLE);
  CHECK_OK(mlcc_target_resolve("rv32", NULL, "+f,+d", &t));
  CHECK_EQ_INT(mlcc_target_fpu(&t), MLCC_FPU_DOUBLE);
  // Triples: other M-profile cores resolve like cortex-m4; no Linux triple.
  CHECK_OK(mlcc_target_resolve("thumbv8m.main-none-eabihf", "cortex-m33", NULL, &t));
  CHECK_STREQ(t.triple, "thumbv8m.main-none-eabihf");
  CHECK(mlcc_target_is_bare_metal(&t));
  CHECK_OK(mlcc_target_resolve("riscv32-unknown-elf", NULL, NULL, &t));
  CHECK_STREQ(t.alias, "rv32");
  CHECK_STATUS(mlcc_target_resolve("riscv32-linux-gnu", NULL, NULL, &t),
               MLCC_STATUS_NOT_FOUND);
  CHECK_STATUS(mlcc_target_resolve("cortex-m4", "nonsense-m9", NULL, &t),
               MLCC_STATUS_INVALID_ARGUMENT);
  // The Linux targets have double precision and are not bare metal.
  CHECK_OK(mlcc_target_resolve("riscv", NULL, NULL, &t));
  CHECK(!mlcc_target_is_bare_metal(&t));
  CHECK(mlcc_target_wide_sums(&t));
}

static void test_host_and_native(void) {
  mlcc_target_t t;
  CHECK_OK(mlcc_target_resolve(NULL, NULL, NULL, &t));
  CHECK(t.triple[0] != '\0');
  mlcc_target_t t2;
  CHECK_OK(mlcc_target_resolve("", NULL, NULL, &t2));
  CHECK_STREQ(t.triple, t2.triple);
#if defined(__x86_64__)
  CHECK_EQ_INT(t.arch, MLCC_ARCH_X86_64);
  CHECK_OK(mlcc_target_resolve("x86", "native", NULL, &t));
  CHECK(t.cpu[0] != '\0');
  // Host features are what matter: the feature string is non-empty and
  // mentions SSE2, which every x86-64 has.
  CHECK(strstr(t.features, "+sse2") != NULL);
  CHECK(t.vector_bytes == 32 || t.vector_bytes == 64);
  // native for a foreign arch is a usage error.
  CHECK_STATUS(mlcc_target_resolve("aarch64", "native", NULL, &t),
               MLCC_STATUS_INVALID_ARGUMENT);
#endif
}

static void test_print_all(void) {
  char buf[1024] = {0};
  FILE* f = fmemopen(buf, sizeof(buf) - 1, "w");
  CHECK(f != NULL);
  if (f == NULL) return;
  mlcc_target_print_all(f);
  fclose(f);
  CHECK(strstr(buf, "x86_64-linux-gnu") != NULL);
  CHECK(strstr(buf, "aarch64-linux-gnu") != NULL);
  CHECK(strstr(buf, "riscv64-linux-gnu") != NULL);
  CHECK(strstr(buf, "thumbv7em-none-eabihf") != NULL);
  CHECK(strstr(buf, "riscv32-unknown-elf") != NULL);
}

int main(void) {
  RUN(test_aliases);
  RUN(test_triples);
  RUN(test_bad_target);
  RUN(test_microcontrollers);
  RUN(test_host_and_native);
  RUN(test_print_all);
  return TEST_EXIT();
}
