// SPDX-License-Identifier: Apache-2.0
// LLVM-C lifetime helpers: one-time target initialization, target machines,
// verification, the optimization pipeline, emission, and error text.
#include "targets/codegen/llvm_ctx.h"

#include <errno.h>
#include <sys/wait.h>
#include <sys/types.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm/Config/llvm-config.h>

static LLVMValueRef splat_const(LLVMValueRef v, unsigned lanes) {
  LLVMValueRef elems[64];
  if (lanes > 64) lanes = 64;
  for (unsigned i = 0; i < lanes; ++i) elems[i] = v;
  return LLVMConstVector(elems, lanes);
}

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void llvm_init_once(void) {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser();
  LLVMInitializeAArch64TargetInfo();
  LLVMInitializeAArch64Target();
  LLVMInitializeAArch64TargetMC();
  LLVMInitializeAArch64AsmPrinter();
  LLVMInitializeAArch64AsmParser();
  LLVMInitializeRISCVTargetInfo();
  LLVMInitializeRISCVTarget();
  LLVMInitializeRISCVTargetMC();
  LLVMInitializeRISCVAsmPrinter();
  LLVMInitializeRISCVAsmParser();
  LLVMInitializeARMTargetInfo();
  LLVMInitializeARMTarget();
  LLVMInitializeARMTargetMC();
  LLVMInitializeARMAsmPrinter();
  LLVMInitializeARMAsmParser();
}

void mlcc_llvm_init(void) { pthread_once(&llvm_once, llvm_init_once); }

const char* mlcc_codegen_llvm_version(void) { return LLVM_VERSION_STRING; }

void mlcc_buffer_deinit(mlcc_buffer_t* buffer) {
  if (buffer == NULL) return;
  free(buffer->data);
  buffer->data = NULL;
  buffer->size = 0;
}

mlcc_status_t mlcc_llvm_message_status(mlcc_status_code_t code, const char* what,
                                       char* message) {
  mlcc_status_t s = mlcc_make_status(code, "%s: %s", what, message ? message : "(no message)");
  if (message) LLVMDisposeMessage(message);
  return s;
}

static LLVMCodeGenOptLevel cg_level(int opt_level) {
  switch (opt_level) {
    case 0: return LLVMCodeGenLevelNone;
    case 1: return LLVMCodeGenLevelLess;
    case 2: return LLVMCodeGenLevelDefault;
    default: return LLVMCodeGenLevelAggressive;
  }
}

mlcc_status_t mlcc_llvm_target_machine(const mlcc_target_t* target, int opt_level,
                                       LLVMTargetMachineRef* out_tm) {
  *out_tm = NULL;
  mlcc_llvm_init();
  LLVMTargetRef t = NULL;
  char* err = NULL;
  if (LLVMGetTargetFromTriple(target->triple, &t, &err)) {
    return mlcc_llvm_message_status(MLCC_STATUS_NOT_FOUND, target->triple, err);
  }
  // Bare-metal images are linked at fixed addresses (flash, SRAM): static
  // code, no GOT; Linux libraries are PIC so they can go into a PIE.
  LLVMRelocMode reloc = mlcc_target_is_bare_metal(target) ? LLVMRelocStatic : LLVMRelocPIC;
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(t, target->triple, target->cpu, target->features,
                              cg_level(opt_level), reloc, LLVMCodeModelDefault);
  if (tm == NULL) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "cannot create a target machine for %s",
                            target->triple);
  }
  *out_tm = tm;
  return mlcc_ok_status();
}

// Compiles an empty function with |tm| in a forked child (LLVM reports some
// unsupported CPU/feature combinations with a fatal error that aborts the
// process). On failure writes LLVM's last message line into |out|.
static void probe_codegen_in_child(LLVMTargetMachineRef tm, char* out, size_t out_size) {
  int fds[2];
  if (pipe(fds) != 0) return;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("mlcc_probe", ctx);
    mlcc_llvm_set_module_target(m, tm);
    LLVMTypeRef fn_type = LLVMFunctionType(LLVMVoidTypeInContext(ctx), NULL, 0, 0);
    LLVMValueRef fn = LLVMAddFunction(m, "mlcc_probe", fn_type);
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, fn, "entry"));
    LLVMBuildRetVoid(b);
    LLVMMemoryBufferRef obj = NULL;
    char* err = NULL;
    LLVMBool failed = LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, &obj);
    _exit(failed ? 1 : 0);
  }
  close(fds[1]);
  char buf[1024];
  size_t len = 0;
  ssize_t n;
  while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
    len += (size_t)n;
    if (len == sizeof(buf) - 1) break;
  }
  close(fds[0]);
  buf[len] = '\0';
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return;
  // The last non-empty line of the child's stderr names the problem.
  char* line = buf;
  for (char* p = strtok(buf, "\n"); p != NULL; p = strtok(NULL, "\n")) line = p;
  snprintf(out, out_size, "%.400s", line[0] ? line : "LLVM cannot generate code for it");
}

mlcc_status_t mlcc_llvm_check_cpu_features(const mlcc_target_t* target) {
  mlcc_llvm_init();
  // LLVM reports unknown CPUs and features on stderr when the target
  // machine builds its subtarget description: capture that text. Nothing is
  // compiled here, because code generation for an unknown CPU can hit
  // LLVM's fatal errors (x86-64 code for a CPU without 64-bit support).
  char complaint[512] = {0};
  FILE* capture = tmpfile();
  int saved = -1;
  if (capture != NULL) {
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    if (saved >= 0) dup2(fileno(capture), STDERR_FILENO);
  }
  LLVMTargetMachineRef tm = NULL;
  mlcc_status_t status = mlcc_llvm_target_machine(target, 0, &tm);
  if (saved >= 0) {
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
  }
  if (capture != NULL) {
    rewind(capture);
    char line[512];
    while (fgets(line, sizeof(line), capture) != NULL) {
      if (strstr(line, "not a recognized") != NULL) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(complaint, sizeof(complaint), "%s", line);
        break;
      }
    }
    fclose(capture);
  }
  MLCC_RETURN_IF_ERROR(status);
  if (complaint[0] == '\0') {
    // Known names can still be a combination LLVM cannot generate code for
    // (x86-64 code for a 32-bit-only CPU such as -mcpu=i386 is an LLVM
    // fatal error, which aborts). Compile an empty function in a child
    // process and turn its death into a usage error.
    probe_codegen_in_child(tm, complaint, sizeof(complaint));
  }
  LLVMDisposeTargetMachine(tm);
  if (complaint[0] != '\0') {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "-mcpu=%s -mattr=%s for %s: %s (see `llc-16 -mtriple=%s "
                            "-mcpu=help`)", target->cpu, target->features,
                            target->triple, complaint, target->triple);
  }
  return mlcc_ok_status();
}

void mlcc_llvm_set_module_target(LLVMModuleRef module, LLVMTargetMachineRef tm) {
  char* triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(module, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  char* dls = LLVMCopyStringRepOfTargetData(dl);
  LLVMSetDataLayout(module, dls);
  LLVMDisposeMessage(dls);
  LLVMDisposeTargetData(dl);
  // RISC-V: the float ABI must match Debian's lp64d crt files and libm (and
  // on rv32 the ilp32/ilp32f multilib of the bare-metal C library); the
  // backend takes it from this module flag (which also sets the ELF e_flags).
  char* tt = LLVMGetTargetMachineTriple(tm);
  bool rv64 = strncmp(tt, "riscv64", 7) == 0, rv32 = strncmp(tt, "riscv32", 7) == 0;
  if ((rv64 || rv32) && LLVMGetModuleFlag(module, "target-abi", 10) == NULL) {
    char* feats = LLVMGetTargetMachineFeatureString(tm);
    const char* abi = strstr(feats, "+d")   ? (rv64 ? "lp64d" : "ilp32d")
                      : strstr(feats, "+f") ? (rv64 ? "lp64f" : "ilp32f")
                                            : (rv64 ? "lp64" : "ilp32");
    if (rv32) {
      // No small-data sections: LLVM would put constant pools in writable
      // .sdata, which a bare-metal image must copy to RAM at start-up.
      LLVMContextRef c0 = LLVMGetModuleContext(module);
      LLVMAddModuleFlag(module, LLVMModuleFlagBehaviorError, "SmallDataLimit", 14,
                        LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(c0), 0, 0)));
    }
    LLVMContextRef c = LLVMGetModuleContext(module);
    LLVMAddModuleFlag(module, LLVMModuleFlagBehaviorError, "target-abi", 10,
                      LLVMMDStringInContext2(c, abi, strlen(abi)));
    LLVMDisposeMessage(feats);
  }
  // Arm hard-float EABI: LLVM-C's target machines pass floats in VFP
  // registers for an "eabihf" triple but leave Tag_ABI_VFP_args out of the
  // build attributes (only clang and llc set the float ABI option that
  // emits it), so GNU ld refuses to link the objects with hard-float code.
  // A module-level directive sets the tag in the same attribute section.
  bool arm = strncmp(tt, "thumb", 5) == 0 || strncmp(tt, "arm", 3) == 0;
  if (arm && strstr(tt, "eabihf") != NULL) {
    static const char kVfpArgs[] = ".eabi_attribute 28, 1  @ Tag_ABI_VFP_args: VFP registers";
    LLVMAppendModuleInlineAsm(module, kVfpArgs, sizeof(kVfpArgs) - 1);
  }
  LLVMDisposeMessage(tt);
}

// sqrt(x) for float (or float vector) |x| without an FPU instruction or
// libm: a bit-level estimate of 1/sqrt(x) refined by four Newton steps
// (each squares the relative error: 3.4e-2, 1.8e-3, 4.7e-6, 3e-11, then
// float rounding: within 2 ulp), times x. x = +-0 and +inf give x; x < 0
// and NaN give NaN. Subnormal x (which a network's variances never are)
// converge more slowly: the result can be off by ~1e-3 relative there.
static LLVMValueRef soft_sqrt(LLVMBuilderRef b, LLVMContextRef c, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMTypeRef it = LLVMInt32TypeInContext(c);
  bool vec = LLVMGetTypeKind(ft) == LLVMVectorTypeKind;
  unsigned lanes = vec ? LLVMGetVectorSize(ft) : 1;
  LLVMTypeRef ivt = vec ? LLVMVectorType(it, lanes) : it;
  LLVMTypeRef et = vec ? LLVMGetElementType(ft) : ft;
  // Splatted constants of the float and int shapes.
#define FC(v) (vec ? splat_const(LLVMConstReal(et, (v)), lanes) : LLVMConstReal(et, (v)))
#define IC(v) (vec ? splat_const(LLVMConstInt(it, (v), 0), lanes) : LLVMConstInt(it, (v), 0))
  LLVMValueRef bits = LLVMBuildBitCast(b, x, ivt, "");
  LLVMValueRef est = LLVMBuildSub(b, IC(0x5f3759dfu), LLVMBuildLShr(b, bits, IC(1), ""), "");
  LLVMValueRef y = LLVMBuildBitCast(b, est, ft, "rsqrt0");
  LLVMValueRef half_x = LLVMBuildFMul(b, x, FC(0.5), "");
  for (int i = 0; i < 4; ++i) {
    // y = y * (1.5 - 0.5 x y^2)
    LLVMValueRef yy = LLVMBuildFMul(b, y, y, "");
    LLVMValueRef t = LLVMBuildFSub(b, FC(1.5), LLVMBuildFMul(b, half_x, yy, ""), "");
    y = LLVMBuildFMul(b, y, t, "");
  }
  LLVMValueRef r = LLVMBuildFMul(b, x, y, "sqrt");
  // Special cases: not (0 < x < inf).
  LLVMValueRef normal = LLVMBuildAnd(b, LLVMBuildFCmp(b, LLVMRealOGT, x, FC(0.0), ""),
                                     LLVMBuildFCmp(b, LLVMRealOLT, x, FC(__builtin_inf()), ""),
                                     "");
  LLVMValueRef keep_x = LLVMBuildOr(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, FC(0.0), ""),
                                    LLVMBuildFCmp(b, LLVMRealOEQ, x, FC(__builtin_inf()), ""),
                                    "");
  LLVMValueRef special = LLVMBuildSelect(b, keep_x, x, FC(__builtin_nan("")), "");
#undef FC
#undef IC
  return LLVMBuildSelect(b, normal, r, special, "");
}

void mlcc_llvm_lower_libm(LLVMModuleRef module, bool soft_float) {
  LLVMContextRef c = LLVMGetModuleContext(module);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  for (LLVMValueRef fn = LLVMGetFirstFunction(module); fn != NULL;
       fn = LLVMGetNextFunction(fn)) {
    size_t len = 0;
    const char* name = LLVMGetValueName2(fn, &len);
    bool is_max = len > 12 && strncmp(name, "llvm.maxnum.", 12) == 0;
    bool is_min = len > 12 && strncmp(name, "llvm.minnum.", 12) == 0;
    // Only float32 sqrt: double sqrt is outside what MCU code computes.
    bool is_sqrt = soft_float && len >= 13 && strncmp(name, "llvm.sqrt.", 10) == 0 &&
                   strstr(name, "f32") != NULL;
    if (!is_max && !is_min && !is_sqrt) continue;
    LLVMUseRef use;
    while ((use = LLVMGetFirstUse(fn)) != NULL) {
      LLVMValueRef call = LLVMGetUser(use);
      if (LLVMIsACallInst(call) == NULL || LLVMGetCalledValue(call) != fn) break;
      LLVMPositionBuilderBefore(b, call);
      LLVMValueRef x = LLVMGetOperand(call, 0);
      LLVMValueRef r;
      if (is_sqrt) {
        r = soft_sqrt(b, c, x);
      } else {
        // maxnum(x, y): x if x > y or y is NaN, else y (so a NaN x gives y,
        // two NaNs give NaN); minnum with <. Ties of +0/-0 may pick either,
        // as maxnum allows.
        LLVMValueRef y = LLVMGetOperand(call, 1);
        LLVMValueRef better = LLVMBuildFCmp(b, is_max ? LLVMRealOGT : LLVMRealOLT, x, y, "");
        LLVMValueRef y_nan = LLVMBuildFCmp(b, LLVMRealUNO, y, y, "");
        LLVMValueRef pick_x = LLVMBuildOr(b, better, y_nan, "");
        r = LLVMBuildSelect(b, pick_x, x, y, is_max ? "max" : "min");
      }
      LLVMReplaceAllUsesWith(call, r);
      LLVMInstructionEraseFromParent(call);
    }
  }
  LLVMDisposeBuilder(b);
}

mlcc_status_t mlcc_llvm_verify(LLVMModuleRef module, const char* what) {
  char* err = NULL;
  if (LLVMVerifyModule(module, LLVMReturnStatusAction, &err)) {
    return mlcc_llvm_message_status(MLCC_STATUS_INTERNAL, what, err);
  }
  if (err) LLVMDisposeMessage(err);
  return mlcc_ok_status();
}

mlcc_status_t mlcc_llvm_optimize(LLVMModuleRef module, LLVMTargetMachineRef tm,
                                 int opt_level) {
  const char* pipeline = opt_level >= 2   ? "default<O3>"
                         : opt_level == 1 ? "default<O1>"
                                          : "default<O0>";
  LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
  if (opt_level >= 2) {
    LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
    LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
  }
  LLVMErrorRef e = LLVMRunPasses(module, pipeline, tm, opts);
  LLVMDisposePassBuilderOptions(opts);
  if (e != NULL) {
    return mlcc_llvm_message_status(MLCC_STATUS_INTERNAL, "LLVM optimization failed",
                                    LLVMGetErrorMessage(e));
  }
  return mlcc_ok_status();
}

static mlcc_status_t copy_out(const char* data, size_t size, mlcc_buffer_t* out) {
  out->data = malloc(size ? size : 1);
  if (out->data == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory (%zu bytes)",
                            size);
  }
  memcpy(out->data, data, size);
  out->size = size;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_llvm_emit(LLVMModuleRef module, LLVMTargetMachineRef tm,
                             mlcc_output_kind_t kind, mlcc_buffer_t* out) {
  memset(out, 0, sizeof(*out));
  if (kind == MLCC_OUTPUT_LL) {
    char* text = LLVMPrintModuleToString(module);
    mlcc_status_t s = copy_out(text, strlen(text), out);
    LLVMDisposeMessage(text);
    return s;
  }
  LLVMMemoryBufferRef mb = NULL;
  char* err = NULL;
  LLVMCodeGenFileType ft = kind == MLCC_OUTPUT_ASM ? LLVMAssemblyFile : LLVMObjectFile;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, module, ft, &err, &mb)) {
    return mlcc_llvm_message_status(MLCC_STATUS_INTERNAL, "LLVM code emission failed", err);
  }
  if (err) LLVMDisposeMessage(err);
  mlcc_status_t s = copy_out(LLVMGetBufferStart(mb), LLVMGetBufferSize(mb), out);
  LLVMDisposeMemoryBuffer(mb);
  return s;
}
