// SPDX-License-Identifier: Apache-2.0
// Tests for driver/object_check.c: real objects built with LLVM for the three
// targets (a kernel as mlcc writes it, and forged ones that call system(),
// add a constructor, a TLS variable or another global), plus truncated and
// bit-flipped copies that must be refused without reading out of bounds.
#include "driver/object_check.h"

#include <stdlib.h>
#include <string.h>

#include <llvm-c/Comdat.h>
#include <llvm-c/Core.h>

#include "targets/codegen/codegen.h"
#include "targets/llvm/elf_writer.h"
#include "targets/llvm/llvm_ctx.h"
#include "test.h"

static const char kSym[] = "mlcc_k_0123456789abcdef01234567";

typedef enum variant_e {
  GOOD = 0,       // calls memset and expf: what kernels do
  RANGED,         // also defines kSym_r (a kernel split in ranges)
  CALLS_SYSTEM,   // calls system(): foreign code
  EXTRA_GLOBAL,   // defines another global function
  CTOR,           // llvm.global_ctors: an .init_array entry
  TLS,            // a thread-local variable
  NO_KERNEL,      // defines nothing of the expected name
  ENTRY_GOOD,     // m_run calling a kernel and reading m_weights
  ENTRY_BAD,      // m_run calling a kernel, and evil()
  COMDAT,         // the kernel in a COMDAT group
} variant_t;

static LLVMValueRef declare(LLVMModuleRef m, const char* name, LLVMTypeRef ty) {
  LLVMValueRef f = LLVMGetNamedFunction(m, name);
  return f ? f : LLVMAddFunction(m, name, ty);
}

// Builds the object for |variant| and |alias| ("x86", "aarch64", "riscv");
// |*out| is malloc'ed.
static void build(const char* alias, variant_t variant, mlcc_buffer_t* out,
                  mlcc_target_t* out_target) {
  memset(out, 0, sizeof(*out));
  mlcc_llvm_init();
  CHECK_OK(mlcc_target_resolve(alias, NULL, NULL, out_target));
  LLVMTargetMachineRef tm = NULL;
  CHECK_OK(mlcc_llvm_target_machine(out_target, 2, &tm));
  if (tm == NULL) return;
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("t", c);
  mlcc_llvm_set_module_target(m, tm);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(c, 0), f32 = LLVMFloatTypeInContext(c);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(c), i64 = LLVMInt64TypeInContext(c);
  LLVMTypeRef vt = LLVMVoidTypeInContext(c);
  LLVMTypeRef kty = LLVMFunctionType(vt, &ptr, 1, 0);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  bool entry = variant == ENTRY_GOOD || variant == ENTRY_BAD;
  const char* main_name = entry ? "m_run" : variant == NO_KERNEL ? "mlcc_k_ffffffffffffffffffffffff"
                                                                  : kSym;
  LLVMValueRef fn = LLVMAddFunction(m, main_name, kty);
  if (!entry) {
    LLVMSetLinkage(fn, LLVMWeakODRLinkage);
    LLVMSetVisibility(fn, LLVMHiddenVisibility);
  }
  if (variant == COMDAT) LLVMSetComdat(fn, LLVMGetOrInsertComdat(m, main_name));
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, fn, "entry"));
  LLVMValueRef arg = LLVMGetParam(fn, 0);
  if (entry) {
    LLVMValueRef kernel = declare(m, kSym, kty);
    LLVMValueRef weights = LLVMAddGlobal(m, LLVMArrayType(LLVMInt8TypeInContext(c), 64),
                                         "m_weights");
    LLVMSetVisibility(weights, LLVMHiddenVisibility);
    LLVMValueRef args[1] = {weights};
    LLVMBuildCall2(b, kty, kernel, args, 1, "");
    if (variant == ENTRY_BAD) LLVMBuildCall2(b, kty, declare(m, "evil", kty), &arg, 1, "");
  } else {
    // memset(arg, 0, 64); *(float*)arg = expf(*(float*)arg)
    LLVMTypeRef mty_params[3] = {ptr, i32, i64};
    LLVMTypeRef mty = LLVMFunctionType(ptr, mty_params, 3, 0);
    LLVMValueRef margs[3] = {arg, LLVMConstInt(i32, 0, 0), LLVMConstInt(i64, 64, 0)};
    LLVMValueRef ms = LLVMBuildCall2(b, mty, declare(m, "memset", mty), margs, 3, "");
    (void)ms;
    LLVMTypeRef ety = LLVMFunctionType(f32, &f32, 1, 0);
    LLVMValueRef x = LLVMBuildLoad2(b, f32, arg, "x");
    LLVMValueRef y = LLVMBuildCall2(b, ety, declare(m, "expf", ety), &x, 1, "y");
    LLVMBuildStore(b, y, arg);
    if (variant == CALLS_SYSTEM) {
      LLVMTypeRef sty = LLVMFunctionType(i32, &ptr, 1, 0);
      LLVMBuildCall2(b, sty, declare(m, "system", sty), &arg, 1, "");
    }
    if (variant == TLS) {
      LLVMValueRef g = LLVMAddGlobal(m, f32, "tls_state");
      LLVMSetInitializer(g, LLVMConstReal(f32, 1.0));
      LLVMSetLinkage(g, LLVMInternalLinkage);
      LLVMSetThreadLocal(g, 1);
      LLVMBuildStore(b, y, g);
    }
  }
  LLVMBuildRetVoid(b);
  if (variant == RANGED || variant == EXTRA_GLOBAL || variant == CTOR) {
    char name[64];
    snprintf(name, sizeof(name), "%s_r", kSym);
    LLVMValueRef g = LLVMAddFunction(m, variant == RANGED ? name : "evil",
                                     LLVMFunctionType(vt, NULL, 0, 0));
    if (variant == RANGED) LLVMSetVisibility(g, LLVMHiddenVisibility);
    if (variant == CTOR) LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, g, "entry"));
    LLVMBuildRetVoid(b);
    if (variant == CTOR) {
      LLVMTypeRef fields[3] = {i32, ptr, ptr};
      LLVMTypeRef st = LLVMStructTypeInContext(c, fields, 3, 0);
      LLVMValueRef vals[3] = {LLVMConstInt(i32, 65535, 0), g, LLVMConstNull(ptr)};
      LLVMValueRef elem = LLVMConstNamedStruct(st, vals, 3);
      LLVMValueRef ctors = LLVMAddGlobal(m, LLVMArrayType(st, 1), "llvm.global_ctors");
      LLVMSetLinkage(ctors, LLVMAppendingLinkage);
      LLVMSetInitializer(ctors, LLVMConstArray(st, &elem, 1));
    }
  }
  LLVMDisposeBuilder(b);
  CHECK_OK(mlcc_llvm_verify(m, "object_check_test"));
  CHECK_OK(mlcc_llvm_emit(m, tm, MLCC_OUTPUT_OBJECT, out));
  LLVMDisposeModule(m);
  LLVMContextDispose(c);
  LLVMDisposeTargetMachine(tm);
}

// Checks |variant| on |alias|: OK when |want| is NULL, else a rejection
// whose message contains |want|.
static void expect_check(const char* alias, variant_t variant, const char* want) {
  mlcc_buffer_t obj;
  mlcc_target_t target;
  build(alias, variant, &obj, &target);
  if (obj.data == NULL) return;
  bool entry = variant == ENTRY_GOOD || variant == ENTRY_BAD;
  mlcc_object_expect_t e;
  CHECK_OK(mlcc_object_expect_for_target(&target, entry ? MLCC_OBJECT_ENTRY : MLCC_OBJECT_KERNEL,
                                         entry ? "m" : kSym, &e));
  mlcc_status_t s = mlcc_object_check(obj.data, obj.size, &e);
  if (want == NULL) {
    if (s != NULL) fprintf(stderr, "%s variant %d: %s\n", alias, variant, mlcc_status_message(s));
    CHECK(s == NULL);
  } else {
    CHECK(s != NULL);
    if (s != NULL) {
      if (strstr(mlcc_status_message(s), want) == NULL) {
        fprintf(stderr, "%s variant %d: '%s' lacks '%s'\n", alias, variant,
                mlcc_status_message(s), want);
        CHECK(false);
      }
      CHECK_EQ_INT(mlcc_status_code(s), MLCC_STATUS_INVALID_MODEL);
    }
  }
  mlcc_status_free(s);
  mlcc_buffer_deinit(&obj);
}

// The Linux targets (ELF64) and the microcontrollers (ELF32: Arm EABI 5 and
// rv32 with and without the single-float ABI).
static const char* const kAliases[] = {"x86", "aarch64", "riscv", "cortex-m4", "cortex-m55",
                                       "rv32", "rv32f"};
#define N_ALIASES ((int)(sizeof(kAliases) / sizeof(kAliases[0])))

static void test_good_kernels(void) {
  for (int t = 0; t < N_ALIASES; ++t) {
    expect_check(kAliases[t], GOOD, NULL);
    expect_check(kAliases[t], RANGED, NULL);
    expect_check(kAliases[t], ENTRY_GOOD, NULL);
  }
}

static void test_forged_kernels(void) {
  for (int t = 0; t < N_ALIASES; ++t) {
    expect_check(kAliases[t], CALLS_SYSTEM, "'system', which is not on the allowlist");
    expect_check(kAliases[t], EXTRA_GLOBAL, "defines 'evil'");
    expect_check(kAliases[t], CTOR, "a constructor or destructor section");
    expect_check(kAliases[t], TLS, "a thread-local section");
    expect_check(kAliases[t], NO_KERNEL, "not the kernel's symbol");
    expect_check(kAliases[t], ENTRY_BAD, "'evil', which is not on the allowlist");
    expect_check(kAliases[t], COMDAT, ".group");
  }
}

// An x86 kernel checked as aarch64 or riscv; riscv with another float ABI.
static void test_machine_and_abi(void) {
  mlcc_buffer_t obj;
  mlcc_target_t x86, other;
  build("x86", GOOD, &obj, &x86);
  CHECK_OK(mlcc_target_resolve("aarch64", NULL, NULL, &other));
  mlcc_object_expect_t e;
  CHECK_OK(mlcc_object_expect_for_target(&other, MLCC_OBJECT_KERNEL, kSym, &e));
  CHECK_STATUS(mlcc_object_check(obj.data, obj.size, &e), MLCC_STATUS_INVALID_MODEL);
  mlcc_buffer_deinit(&obj);
  build("riscv", GOOD, &obj, &other);
  CHECK_OK(mlcc_object_expect_for_target(&other, MLCC_OBJECT_KERNEL, kSym, &e));
  CHECK(e.machine == MLCC_ELF_EM_RISCV && (e.flags & MLCC_ELF_EF_RISCV_FLOAT_ABI_DOUBLE));
  CHECK_OK(mlcc_object_check(obj.data, obj.size, &e));
  e.flags ^= MLCC_ELF_EF_RISCV_RVC;  // RVC is OR-ed by linkers: ignored
  CHECK_OK(mlcc_object_check(obj.data, obj.size, &e));
  e.flags = MLCC_ELF_EF_RISCV_FLOAT_ABI_SINGLE;
  mlcc_status_t s = mlcc_object_check(obj.data, obj.size, &e);
  CHECK(s != NULL && strstr(mlcc_status_message(s), "ABI flags") != NULL);
  mlcc_status_free(s);
  mlcc_buffer_deinit(&obj);
  // ELF64 where ELF32 is expected and the other way; Arm where rv32 is.
  mlcc_target_t m4, rv32;
  build("x86", GOOD, &obj, &x86);
  CHECK_OK(mlcc_target_resolve("cortex-m4", NULL, NULL, &m4));
  CHECK_OK(mlcc_object_expect_for_target(&m4, MLCC_OBJECT_KERNEL, kSym, &e));
  CHECK(e.elf_class == 1);
  s = mlcc_object_check(obj.data, obj.size, &e);
  CHECK(s != NULL && strstr(mlcc_status_message(s), "ELF32") != NULL);
  mlcc_status_free(s);
  mlcc_buffer_deinit(&obj);
  build("cortex-m4", GOOD, &obj, &m4);
  CHECK_OK(mlcc_target_resolve("rv32", NULL, NULL, &rv32));
  CHECK_OK(mlcc_object_expect_for_target(&rv32, MLCC_OBJECT_KERNEL, kSym, &e));
  CHECK_STATUS(mlcc_object_check(obj.data, obj.size, &e), MLCC_STATUS_INVALID_MODEL);
  CHECK_OK(mlcc_object_expect_for_target(&x86, MLCC_OBJECT_KERNEL, kSym, &e));
  s = mlcc_object_check(obj.data, obj.size, &e);
  CHECK(s != NULL && strstr(mlcc_status_message(s), "ELF64") != NULL);
  mlcc_status_free(s);
  mlcc_buffer_deinit(&obj);
}

// Every prefix and every single-byte corruption: OK or INVALID_MODEL, no
// out-of-bounds read (run under ASan in the sanitizer build).
static void truncated_and_flipped(const char* alias, size_t ehdr) {
  mlcc_buffer_t obj;
  mlcc_target_t target;
  build(alias, GOOD, &obj, &target);
  if (obj.data == NULL) return;
  mlcc_object_expect_t e;
  CHECK_OK(mlcc_object_expect_for_target(&target, MLCC_OBJECT_KERNEL, kSym, &e));
  for (size_t n = 0; n < obj.size; ++n) {
    uint8_t* copy = (uint8_t*)malloc(n ? n : 1);
    memcpy(copy, obj.data, n);
    mlcc_status_t s = mlcc_object_check(copy, n, &e);
    if (s == NULL) CHECK(n >= ehdr);  // the tail after the section headers may go
    mlcc_status_free(s);
    free(copy);
  }
  uint8_t* copy = (uint8_t*)malloc(obj.size);
  int accepted = 0;
  for (size_t i = 0; i < obj.size; ++i) {
    memcpy(copy, obj.data, obj.size);
    copy[i] ^= 0xA5;
    mlcc_status_t s = mlcc_object_check(copy, obj.size, &e);
    if (s == NULL) ++accepted;  // code and data bytes are not interpreted
    mlcc_status_free(s);
  }
  CHECK(accepted < (int)obj.size);
  free(copy);
  CHECK_STATUS(mlcc_object_check(NULL, 0, &e), MLCC_STATUS_INVALID_MODEL);
  CHECK_STATUS(mlcc_object_check((const uint8_t*)"\x7f" "ELF", 4, &e), MLCC_STATUS_INVALID_MODEL);
  mlcc_buffer_deinit(&obj);
}

static void test_truncated_and_flipped(void) {
  truncated_and_flipped("aarch64", 64);
  truncated_and_flipped("cortex-m4", 52);
  truncated_and_flipped("rv32", 52);
}

// The weights object written by our own ELF writer is not a kernel.
static void test_weights_object_is_not_a_kernel(void) {
  mlcc_target_t target;
  CHECK_OK(mlcc_target_resolve("x86", NULL, NULL, &target));
  uint8_t blob[16] = {1, 2, 3};
  mlcc_elf_chunk_t chunk;
  memset(&chunk, 0, sizeof(chunk));
  chunk.offset = 0;
  chunk.size = sizeof(blob);
  chunk.data = blob;
  mlcc_elf_data_object_t w;
  memset(&w, 0, sizeof(w));
  CHECK_OK(mlcc_elf_machine_for_target(&target, &w.machine, &w.flags));
  w.section_name = ".rodata.mlcc_weights";
  w.align = 16;
  w.symbol = "m_weights";
  w.size = sizeof(blob);
  w.chunks = &chunk;
  w.n_chunks = 1;
  uint8_t* data = NULL;
  size_t size = 0;
  CHECK_OK(mlcc_elf_write_buffer(&w, &data, &size));
  mlcc_object_expect_t e;
  CHECK_OK(mlcc_object_expect_for_target(&target, MLCC_OBJECT_KERNEL, kSym, &e));
  CHECK_STATUS(mlcc_object_check(data, size, &e), MLCC_STATUS_INVALID_MODEL);
  free(data);
}

static void test_allowlist(void) {
  const char* yes[] = {"memcpy", "memset", "memmove", "expf", "exp", "tanhf", "erff",
                       "sincosf", "exp10f", "log1p", "powf", "roundevenf", "__truncsfhf2",
                       "__extendhfsf2", "__multi3", "__addtf3", "__powisf2"};
  const char* no[] = {"system", "", "execve", "expff", "ex", "memcpyf", "__libc_start_main",
                      "dlopen", "fopen", "mlcc_k_0123456789abcdef01234567", "pthread_create",
                      "__stack_chk_fail", "getenv"};
  for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); ++i) {
    if (!mlcc_object_symbol_allowed(yes[i])) fprintf(stderr, "should allow %s\n", yes[i]);
    CHECK(mlcc_object_symbol_allowed(yes[i]));
  }
  for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); ++i) {
    if (mlcc_object_symbol_allowed(no[i])) fprintf(stderr, "should refuse %s\n", no[i]);
    CHECK(!mlcc_object_symbol_allowed(no[i]));
  }
}

int main(void) {
  RUN(test_allowlist);
  RUN(test_good_kernels);
  RUN(test_forged_kernels);
  RUN(test_machine_and_abi);
  RUN(test_truncated_and_flipped);
  RUN(test_weights_object_is_not_a_kernel);
  return TEST_EXIT();
}
