// SPDX-License-Identifier: Apache-2.0
// Target resolution from targets.def: aliases, triples, host, CPU/features.
#include "targets/target.h"

#include <stdio.h>
#include <string.h>

#include <llvm-c/TargetMachine.h>

#include "targets/llvm/llvm_ctx.h"

typedef struct target_row_t {
  mlcc_arch_t arch;
  const char* alias;
  const char* triple;
  const char* cpu;
  const char* features;
  int32_t vector_bytes;
  const char* arch_prefix;  // first component of triples for this arch
} target_row_t;

static const target_row_t target_rows[] = {
#define MLCC_TARGET(id, alias, triple, cpu, features, vec_bytes) \
  {MLCC_ARCH_##id, alias, triple, cpu, features, vec_bytes, NULL},
#include "targets/targets.def"
#undef MLCC_TARGET
};

// The arch component of a triple for each row ("x86_64" for x86).
static const char* arch_prefix(const target_row_t* row) {
  switch (row->arch) {
    case MLCC_ARCH_X86_64: return "x86_64";
    case MLCC_ARCH_AARCH64: return "aarch64";
    case MLCC_ARCH_RISCV64: return "riscv64";
    case MLCC_ARCH_CORTEX_M4: return "thumbv7em";
    case MLCC_ARCH_CORTEX_M55: return "thumbv8.1m.main";
    case MLCC_ARCH_RV32:
    case MLCC_ARCH_RV32F: return "riscv32";
    default: return "";
  }
}

static bool row_is_bare_metal(const target_row_t* row) {
  switch (row->arch) {
    case MLCC_ARCH_CORTEX_M4:
    case MLCC_ARCH_CORTEX_M55:
    case MLCC_ARCH_RV32:
    case MLCC_ARCH_RV32F: return true;
    default: return false;
  }
}

static void copy_str(char* dst, size_t cap, const char* src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

// True if the comma-separated LLVM feature string |features| enables |feat|
// (e.g. "avx512f" matches "+avx512f"); the last mention wins.
static bool has_feature(const char* features, const char* feat) {
  bool on = false;
  size_t n = strlen(feat);
  const char* p = features;
  while (p && *p) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n + 1 && strncmp(p + 1, feat, n) == 0) on = (p[0] == '+');
    p = comma ? comma + 1 : NULL;
  }
  return on;
}

static bool cpu_has_avx512(const char* cpu) {
  static const char* const avx512_cpus[] = {
      "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client",
      "icelake-server", "tigerlake", "sapphirerapids", "rocketlake", "znver4",
      "x86-64-v4", "knl", "knm", "graniterapids", "emeraldrapids"};
  for (size_t i = 0; i < sizeof(avx512_cpus) / sizeof(avx512_cpus[0]); ++i) {
    if (strcmp(cpu, avx512_cpus[i]) == 0) return true;
  }
  return false;
}

static int32_t vector_bytes_for(const mlcc_target_t* t) {
  switch (t->arch) {
    case MLCC_ARCH_X86_64:
      if (has_feature(t->features, "avx512f")) return 64;
      if (strstr(t->features, "-avx512f") == NULL && cpu_has_avx512(t->cpu)) return 64;
      return 32;
    case MLCC_ARCH_AARCH64: return 16;
    case MLCC_ARCH_RISCV64: return has_feature(t->features, "v") ? 32 : 16;
    // Microcontrollers: Helium's 128-bit Q registers on cortex-m55 (and a
    // cortex-m4 row core given +mve.fp); otherwise no float SIMD, and 4 bytes
    // (one float register) picks the emitters' scalar kernels. Planning for
    // 16-byte vectors there unrolls them into scalar code 4-8x larger with
    // tile panels of 28 KiB on the stack (ic_resnet8), for about the same
    // instruction count (rv32f: kws 9.5 vs 10.3, ic 42.1 vs 40.9 million).
    case MLCC_ARCH_CORTEX_M55:
    case MLCC_ARCH_CORTEX_M4:
      return has_feature(t->features, "mve.fp") || has_feature(t->features, "mve") ? 16 : 4;
    case MLCC_ARCH_RV32:
    case MLCC_ARCH_RV32F: return has_feature(t->features, "v") ? 16 : 4;
    default: return 16;
  }
}

bool mlcc_target_is_bare_metal(const mlcc_target_t* target) {
  switch (target->arch) {
    case MLCC_ARCH_CORTEX_M4:
    case MLCC_ARCH_CORTEX_M55:
    case MLCC_ARCH_RV32:
    case MLCC_ARCH_RV32F: return true;
    default: return false;
  }
}

// True if |features| mentions |feat| at all (+feat or -feat).
static bool mentions_feature(const char* features, const char* feat) {
  size_t n = strlen(feat);
  const char* p = features;
  while (p && *p) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == n + 1 && strncmp(p + 1, feat, n) == 0) return true;
    p = comma ? comma + 1 : NULL;
  }
  return false;
}

// Arm FPU from the LLVM feature names (ARM.td) the feature string enables:
// the most capable one; false if it enables none.
static bool arm_fpu_from_features(const char* features, mlcc_fpu_t* out) {
  static const struct {
    const char* name;
    mlcc_fpu_t fpu;
  } kArmFpus[] = {
      {"vfp2sp", MLCC_FPU_SINGLE},       {"vfp3d16sp", MLCC_FPU_SINGLE},
      {"vfp3sp", MLCC_FPU_SINGLE},       {"vfp4d16sp", MLCC_FPU_SINGLE},
      {"vfp4sp", MLCC_FPU_SINGLE},       {"fp-armv8d16sp", MLCC_FPU_SINGLE},
      {"fp-armv8sp", MLCC_FPU_SINGLE},   {"mve.fp", MLCC_FPU_SINGLE},
      {"vfp2", MLCC_FPU_DOUBLE},         {"vfp3", MLCC_FPU_DOUBLE},
      {"vfp3d16", MLCC_FPU_DOUBLE},      {"vfp4", MLCC_FPU_DOUBLE},
      {"vfp4d16", MLCC_FPU_DOUBLE},      {"fp-armv8", MLCC_FPU_DOUBLE},
      {"fp-armv8d16", MLCC_FPU_DOUBLE},  {"fp64", MLCC_FPU_DOUBLE},
  };
  bool found = false;
  mlcc_fpu_t best = MLCC_FPU_NONE;
  for (size_t i = 0; i < sizeof(kArmFpus) / sizeof(kArmFpus[0]); ++i) {
    if (has_feature(features, kArmFpus[i].name)) {
      found = true;
      if (kArmFpus[i].fpu > best) best = kArmFpus[i].fpu;
    }
  }
  *out = best;
  return found;
}

// Turning the FP registers or double precision off wins over the rest.
static mlcc_fpu_t arm_fpu_cap(const char* features, mlcc_fpu_t fpu) {
  if (has_feature(features, "soft-float") ||
      (mentions_feature(features, "fpregs") && !has_feature(features, "fpregs"))) {
    return MLCC_FPU_NONE;
  }
  if (fpu == MLCC_FPU_DOUBLE && mentions_feature(features, "fp64") &&
      !has_feature(features, "fp64")) {
    return MLCC_FPU_SINGLE;
  }
  return fpu;
}

mlcc_fpu_t mlcc_target_fpu(const mlcc_target_t* target) {
  switch (target->arch) {
    case MLCC_ARCH_RV32:
    case MLCC_ARCH_RV32F:
      return has_feature(target->features, "d")   ? MLCC_FPU_DOUBLE
             : has_feature(target->features, "f") ? MLCC_FPU_SINGLE
                                                  : MLCC_FPU_NONE;
    case MLCC_ARCH_CORTEX_M4:
    case MLCC_ARCH_CORTEX_M55: {
      mlcc_fpu_t fpu = MLCC_FPU_NONE;
      if (!arm_fpu_from_features(target->features, &fpu)) {
        // The CPU's own FPU (LLVM's ARM.td processor definitions).
        static const char* const sp[] = {"cortex-m4", "cortex-m33", "cortex-m35p"};
        static const char* const dp[] = {"cortex-m7", "cortex-m55", "cortex-m85"};
        for (size_t i = 0; i < sizeof(sp) / sizeof(sp[0]); ++i) {
          if (strcmp(target->cpu, sp[i]) == 0) fpu = MLCC_FPU_SINGLE;
        }
        for (size_t i = 0; i < sizeof(dp) / sizeof(dp[0]); ++i) {
          if (strcmp(target->cpu, dp[i]) == 0) fpu = MLCC_FPU_DOUBLE;
        }
      }
      return arm_fpu_cap(target->features, fpu);
    }
    default: return MLCC_FPU_DOUBLE;
  }
}

bool mlcc_target_wide_sums(const mlcc_target_t* target) {
  return mlcc_target_fpu(target) == MLCC_FPU_DOUBLE;
}

static const target_row_t* find_alias(const char* name) {
  for (size_t i = 0; i < sizeof(target_rows) / sizeof(target_rows[0]); ++i) {
    if (strcmp(target_rows[i].alias, name) == 0) return &target_rows[i];
    if (strcmp(target_rows[i].triple, name) == 0) return &target_rows[i];
    // The bare architecture ("x86_64", "riscv64") means its Linux triple.
    if (strcmp(arch_prefix(&target_rows[i]), name) == 0) return &target_rows[i];
  }
  return NULL;
}

// Merges the comma-separated LLVM feature list |extra| into |features|
// (capacity |cap|): an entry for a feature already present (+x or -x)
// replaces it in place, new ones are appended, so "-mattr=+d" on rv64gc is
// not duplicated and "-mattr=-c" turns a default off. False if out of room.
static bool merge_features(char* features, size_t cap, const char* extra) {
  const char* p = extra;
  while (p != NULL && *p != '\0') {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len > 1 && (p[0] == '+' || p[0] == '-')) {
      // Find the same feature name in |features|.
      char* q = features;
      bool replaced = false;
      while (*q != '\0') {
        char* qc = strchr(q, ',');
        size_t qlen = qc ? (size_t)(qc - q) : strlen(q);
        if (qlen == len && strncmp(q + 1, p + 1, len - 1) == 0) {
          q[0] = p[0];
          replaced = true;
          break;
        }
        q = qc ? qc + 1 : q + qlen;
      }
      if (!replaced) {
        size_t have = strlen(features);
        if (have + len + 2 > cap) return false;
        if (have) features[have++] = ',';
        memcpy(features + have, p, len);
        features[have + len] = '\0';
      }
    } else if (len > 0) {
      // Not +name/-name: append verbatim and let the LLVM check judge it.
      size_t have = strlen(features);
      if (have + len + 2 > cap) return false;
      if (have) features[have++] = ',';
      memcpy(features + have, p, len);
      features[have + len] = '\0';
    }
    p = comma ? comma + 1 : NULL;
  }
  return true;
}

// Row whose arch matches the first component of |triple|, or NULL.
static const target_row_t* find_by_triple(const char* triple) {
  const char* dash = strchr(triple, '-');
  if (dash == NULL) return NULL;
  size_t len = (size_t)(dash - triple);
  for (size_t i = 0; i < sizeof(target_rows) / sizeof(target_rows[0]); ++i) {
    const char* pre = arch_prefix(&target_rows[i]);
    if (strlen(pre) == len && strncmp(triple, pre, len) == 0) return &target_rows[i];
  }
  // Common spellings of the same arch.
  if ((len == 5 && strncmp(triple, "arm64", 5) == 0)) return find_alias("aarch64");
  if ((len == 5 && strncmp(triple, "amd64", 5) == 0)) return find_alias("x86");
  // Other M-profile Arm triples (thumbv6m, thumbv7m, thumbv8m.main, ...)
  // resolve like cortex-m4 with the user's triple; -mcpu picks the core.
  if (len > 6 && strncmp(triple, "thumbv", 6) == 0) return find_alias("cortex-m4");
  return NULL;
}

mlcc_status_t mlcc_target_resolve(const char* name, const char* cpu,
                                  const char* features, mlcc_target_t* out_target) {
  memset(out_target, 0, sizeof(*out_target));
  const target_row_t* row = NULL;
  char triple[64] = {0};
  bool host = name == NULL || name[0] == '\0';
  if (host) {
    mlcc_llvm_init();
    char* def = LLVMGetDefaultTargetTriple();
    char* norm = LLVMNormalizeTargetTriple(def);
    LLVMDisposeMessage(def);
    row = find_by_triple(norm);
    if (row == NULL) {
      mlcc_status_t s = mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                                         "host triple '%s' is not a supported target "
                                         "(use --target=x86|aarch64|riscv)", norm);
      LLVMDisposeMessage(norm);
      return s;
    }
    LLVMDisposeMessage(norm);
    // Our table's triple spells the Debian multiarch names the toolchains use.
    copy_str(triple, sizeof(triple), row->triple);
  } else {
    row = find_alias(name);
    if (row != NULL) {
      copy_str(triple, sizeof(triple), row->triple);
    } else {
      row = find_by_triple(name);
      if (row != NULL && row_is_bare_metal(row)) {
        if (strstr(name, "-linux") != NULL) {
          return mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                                  "target '%s': mlcc generates bare-metal code for this "
                                  "architecture (e.g. %s), not Linux", name, row->triple);
        }
      } else if (row != NULL && strstr(name, "-linux") == NULL) {
        return mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                                "target '%s' is not a Linux triple; mlcc generates ELF "
                                "objects for Linux (e.g. %s)", name, row->triple);
      }
      if (row == NULL || strlen(name) >= sizeof(triple)) {
        return mlcc_make_status(MLCC_STATUS_NOT_FOUND,
                                "unknown target '%s' (known: x86, aarch64, riscv, "
                                "cortex-m4, cortex-m55, rv32, rv32f, or a triple starting "
                                "with x86_64-, aarch64-, riscv64-, thumbv, riscv32-)",
                                name);
      }
      copy_str(triple, sizeof(triple), name);
    }
  }
  out_target->arch = row->arch;
  copy_str(out_target->alias, sizeof(out_target->alias), row->alias);
  copy_str(out_target->triple, sizeof(out_target->triple), triple);
  copy_str(out_target->cpu, sizeof(out_target->cpu), row->cpu);
  copy_str(out_target->features, sizeof(out_target->features), row->features);
  if (cpu != NULL && cpu[0] != '\0') {
    if (strcmp(cpu, "native") == 0) {
      // Only meaningful when the target is the host's arch.
      mlcc_llvm_init();
      char* def = LLVMGetDefaultTargetTriple();
      const target_row_t* host_row = find_by_triple(def);
      LLVMDisposeMessage(def);
      if (host_row == NULL || host_row->arch != row->arch) {
        return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                                "-mcpu=native needs the host's architecture, but the "
                                "target is %s", out_target->triple);
      }
      char* hcpu = LLVMGetHostCPUName();
      char* hfeat = LLVMGetHostCPUFeatures();
      copy_str(out_target->cpu, sizeof(out_target->cpu), hcpu);
      if (strlen(hfeat) >= sizeof(out_target->features)) {
        // Keep only the enabled features; disabled ones are the default.
        size_t w = 0;
        const char* p = hfeat;
        while (p && *p) {
          const char* comma = strchr(p, ',');
          size_t len = comma ? (size_t)(comma - p) : strlen(p);
          if (p[0] == '+' && w + len + 2 < sizeof(out_target->features)) {
            if (w) out_target->features[w++] = ',';
            memcpy(out_target->features + w, p, len);
            w += len;
          }
          p = comma ? comma + 1 : NULL;
        }
        out_target->features[w] = '\0';
      } else {
        copy_str(out_target->features, sizeof(out_target->features), hfeat);
      }
      LLVMDisposeMessage(hcpu);
      LLVMDisposeMessage(hfeat);
    } else {
      if (strlen(cpu) >= sizeof(out_target->cpu)) {
        return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "-mcpu value too long");
      }
      copy_str(out_target->cpu, sizeof(out_target->cpu), cpu);
    }
  }
  if (features != NULL &&
      !merge_features(out_target->features, sizeof(out_target->features), features)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "-mattr value too long");
  }
  // Only what the user chose can be unknown to LLVM: check it, so a typo is
  // a usage error instead of hundreds of LLVM warnings and a generic build.
  bool user_cpu = cpu != NULL && cpu[0] != '\0' && strcmp(cpu, "native") != 0;
  if (user_cpu || (features != NULL && features[0] != '\0')) {
    MLCC_RETURN_IF_ERROR(mlcc_llvm_check_cpu_features(out_target));
  }
  out_target->vector_bytes = vector_bytes_for(out_target);
  return mlcc_ok_status();
}

void mlcc_target_print_all(void* out) {
  FILE* f = out;
  for (size_t i = 0; i < sizeof(target_rows) / sizeof(target_rows[0]); ++i) {
    const target_row_t* r = &target_rows[i];
    fprintf(f, "  %-10s %-27s %-13s %s\n", r->alias, r->triple, r->cpu,
            r->features[0] ? r->features : "-");
  }
}
