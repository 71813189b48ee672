// SPDX-License-Identifier: Apache-2.0
// LLVM-C lifetime helpers: one-time target initialization, target machines,
// verification, the optimization pipeline, emission, and error text.
#include "targets/llvm/llvm_ctx.h"

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

// Float constant |v| in |ft|'s shape (scalar or splatted vector).
static LLVMValueRef fconst_like(LLVMTypeRef ft, double v) {
  if (LLVMGetTypeKind(ft) == LLVMVectorTypeKind) {
    return splat_const(LLVMConstReal(LLVMGetElementType(ft), v), LLVMGetVectorSize(ft));
  }
  return LLVMConstReal(ft, v);
}

// Float32 rounding without libm (floorf, ceilf, truncf, roundf, roundevenf,
// rintf, nearbyintf): values with |x| >= 2^23 (and NaN, inf) are integers
// already and pass through; below, trunc is an int conversion, round-to-
// nearest-even is (|x| + 2^23) - 2^23 in the default rounding mode, and the
// sign of x (so -0.4 gives -0) is copied back. |kind|: 'f' floor, 'c' ceil,
// 't' trunc, 'r' round (half away from zero), 'e' even (roundeven, rint,
// nearbyint).
static LLVMValueRef soft_round(LLVMBuilderRef b, LLVMModuleRef m, LLVMValueRef x, char kind) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  bool vec = LLVMGetTypeKind(ft) == LLVMVectorTypeKind;
  LLVMContextRef c = LLVMGetModuleContext(m);
  LLVMTypeRef it = LLVMInt32TypeInContext(c);
  LLVMTypeRef ivt = vec ? LLVMVectorType(it, LLVMGetVectorSize(ft)) : it;
  char name[64];
  snprintf(name, sizeof(name), vec ? "llvm.fabs.v%uf32" : "llvm.fabs.f32",
           vec ? LLVMGetVectorSize(ft) : 0);
  LLVMTypeRef fty1 = LLVMFunctionType(ft, &ft, 1, 0);
  LLVMValueRef fabs_fn = LLVMGetNamedFunction(m, name);
  if (fabs_fn == NULL) fabs_fn = LLVMAddFunction(m, name, fty1);
  snprintf(name, sizeof(name), vec ? "llvm.copysign.v%uf32" : "llvm.copysign.f32",
           vec ? LLVMGetVectorSize(ft) : 0);
  LLVMTypeRef two[2] = {ft, ft};
  LLVMTypeRef fty2 = LLVMFunctionType(ft, two, 2, 0);
  LLVMValueRef copysign_fn = LLVMGetNamedFunction(m, name);
  if (copysign_fn == NULL) copysign_fn = LLVMAddFunction(m, name, fty2);
  LLVMValueRef ax = LLVMBuildCall2(b, fty1, fabs_fn, &x, 1, "");
  LLVMValueRef small = LLVMBuildFCmp(b, LLVMRealOLT, ax, fconst_like(ft, 8388608.0), "");
  LLVMValueRef r;
  if (kind == 'e') {
    LLVMValueRef big = fconst_like(ft, 8388608.0);
    r = LLVMBuildFSub(b, LLVMBuildFAdd(b, ax, big, ""), big, "");
  } else {
    LLVMValueRef t = LLVMBuildSIToFP(b, LLVMBuildFPToSI(b, x, ivt, ""), ft, "");
    if (kind == 'f') {
      LLVMValueRef gt = LLVMBuildFCmp(b, LLVMRealOGT, t, x, "");
      t = LLVMBuildSelect(b, gt, LLVMBuildFSub(b, t, fconst_like(ft, 1.0), ""), t, "");
    } else if (kind == 'c') {
      LLVMValueRef lt = LLVMBuildFCmp(b, LLVMRealOLT, t, x, "");
      t = LLVMBuildSelect(b, lt, LLVMBuildFAdd(b, t, fconst_like(ft, 1.0), ""), t, "");
    } else if (kind == 'r') {
      // x - t is exact here; a half or more moves one away from zero.
      LLVMValueRef d = LLVMBuildFSub(b, x, t, "");
      LLVMValueRef ad = LLVMBuildCall2(b, fty1, fabs_fn, &d, 1, "");
      LLVMValueRef one[2] = {fconst_like(ft, 1.0), x};
      LLVMValueRef step = LLVMBuildCall2(b, fty2, copysign_fn, one, 2, "");
      LLVMValueRef half = LLVMBuildFCmp(b, LLVMRealOGE, ad, fconst_like(ft, 0.5), "");
      t = LLVMBuildSelect(b, half, LLVMBuildFAdd(b, t, step, ""), t, "");
    }
    r = t;
  }
  LLVMValueRef args[2] = {r, x};
  r = LLVMBuildCall2(b, fty2, copysign_fn, args, 2, "");
  return LLVMBuildSelect(b, small, r, x, "round");
}

// The libm function an intrinsic or frem stands for ("expf" for
// llvm.exp.f32), or NULL.
static const char* libm_name(const char* intrinsic, bool f32) {
  static const struct {
    const char* intr;
    const char* f32;
    const char* f64;
  } kMap[] = {
      {"llvm.exp.", "expf", "exp"},       {"llvm.exp2.", "exp2f", "exp2"},
      {"llvm.log.", "logf", "log"},       {"llvm.log2.", "log2f", "log2"},
      {"llvm.log10.", "log10f", "log10"}, {"llvm.pow.", "powf", "pow"},
      {"llvm.sin.", "sinf", "sin"},       {"llvm.cos.", "cosf", "cos"},
  };
  for (size_t i = 0; i < sizeof(kMap) / sizeof(kMap[0]); ++i) {
    if (strncmp(intrinsic, kMap[i].intr, strlen(kMap[i].intr)) == 0) {
      return f32 ? kMap[i].f32 : kMap[i].f64;
    }
  }
  return NULL;
}

// |name|(args) on scalars, or lane by lane on vectors: an explicit call the
// caller's calling-convention fix-up sees (mlcc_llvm_lower_libm).
static LLVMValueRef call_libm(LLVMBuilderRef b, LLVMModuleRef m, const char* name,
                              LLVMValueRef* args, unsigned n) {
  LLVMTypeRef t = LLVMTypeOf(args[0]);
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMTypeRef et = vec ? LLVMGetElementType(t) : t;
  LLVMTypeRef params[2] = {et, et};
  LLVMTypeRef fty = LLVMFunctionType(et, params, n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(m, name);
  if (fn == NULL) fn = LLVMAddFunction(m, name, fty);
  if (!vec) return LLVMBuildCall2(b, fty, fn, args, n, "");
  LLVMContextRef c = LLVMGetModuleContext(m);
  LLVMValueRef r = LLVMGetUndef(t);
  for (unsigned i = 0; i < LLVMGetVectorSize(t); ++i) {
    LLVMValueRef idx = LLVMConstInt(LLVMInt32TypeInContext(c), i, 0);
    LLVMValueRef lane[2];
    for (unsigned a = 0; a < n; ++a) lane[a] = LLVMBuildExtractElement(b, args[a], idx, "");
    r = LLVMBuildInsertElement(b, r, LLVMBuildCall2(b, fty, fn, lane, n, ""), idx, "");
  }
  return r;
}

static bool is_f32_based(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  return LLVMGetTypeKind(t) == LLVMFloatTypeKind;
}

static bool is_float_based(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  return LLVMGetTypeKind(t) == LLVMFloatTypeKind || LLVMGetTypeKind(t) == LLVMDoubleTypeKind;
}

// The libm function of a double rounding or sqrt intrinsic ("floor" for
// llvm.floor.f64), which targets without double-precision hardware lower to
// a library call anyway: made explicit so the Arm fix-up below sees it.
static const char* libm_name_f64(const char* intrinsic) {
  static const char* const kNames[] = {"sqrt", "floor", "ceil", "trunc", "round",
                                       "roundeven", "rint", "nearbyint"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    size_t n = strlen(kNames[i]);
    if (strncmp(intrinsic + 5, kNames[i], n) == 0 && intrinsic[5 + n] == '.') return kNames[i];
  }
  return NULL;
}

// Integer constant |v| in the i32 shape of |t| (scalar or vector).
static LLVMValueRef iconst_like(LLVMTypeRef t, uint32_t v) {
  LLVMContextRef c = LLVMGetTypeContext(t);
  LLVMValueRef k = LLVMConstInt(LLVMInt32TypeInContext(c), v, 0);
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind ? splat_const(k, LLVMGetVectorSize(t)) : k;
}

static LLVMTypeRef same_shape(LLVMTypeRef like, LLVMTypeRef elem) {
  return LLVMGetTypeKind(like) == LLVMVectorTypeKind ? LLVMVectorType(elem, LLVMGetVectorSize(like))
                                                     : elem;
}

// float32 -> float16 bits, round to nearest even, without libgcc's
// __truncsfhf2: |x| >= 65520 (and inf) gives inf, NaN a quiet NaN; below
// 2^-14 the subnormal half is the float sum |x| + 0.5 read in units of its
// ulp 2^-24 (the float addition does the rounding); otherwise the exponent
// is rebiased and the 13 dropped mantissa bits rounded to even.
static LLVMValueRef soft_f32_to_f16(LLVMBuilderRef b, LLVMValueRef x, LLVMTypeRef half_t) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMContextRef c = LLVMGetTypeContext(ft);
  LLVMTypeRef it = same_shape(ft, LLVMInt32TypeInContext(c));
  LLVMValueRef u = LLVMBuildBitCast(b, x, it, "");
  LLVMValueRef sign = LLVMBuildAnd(b, u, iconst_like(it, 0x80000000u), "");
  LLVMValueRef a = LLVMBuildXor(b, u, sign, "");
  LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, a, iconst_like(it, 0x477FF000u), "");
  LLVMValueRef nan = LLVMBuildICmp(b, LLVMIntUGT, a, iconst_like(it, 0x7F800000u), "");
  LLVMValueRef r_big = LLVMBuildSelect(b, nan, iconst_like(it, 0x7E00u), iconst_like(it, 0x7C00u), "");
  LLVMValueRef small = LLVMBuildICmp(b, LLVMIntULT, a, iconst_like(it, 0x38800000u), "");
  LLVMValueRef f = LLVMBuildFAdd(b, LLVMBuildBitCast(b, a, ft, ""), fconst_like(ft, 0.5), "");
  LLVMValueRef r_small = LLVMBuildSub(b, LLVMBuildBitCast(b, f, it, ""), iconst_like(it, 0x3F000000u), "");
  LLVMValueRef odd = LLVMBuildAnd(b, LLVMBuildLShr(b, a, iconst_like(it, 13), ""), iconst_like(it, 1), "");
  LLVMValueRef t = LLVMBuildAdd(b, a, iconst_like(it, 0xC8000FFFu), "");  // -112 << 23, + 0xFFF
  LLVMValueRef r_norm = LLVMBuildLShr(b, LLVMBuildAdd(b, t, odd, ""), iconst_like(it, 13), "");
  LLVMValueRef r = LLVMBuildSelect(b, big, r_big, LLVMBuildSelect(b, small, r_small, r_norm, ""), "");
  r = LLVMBuildOr(b, r, LLVMBuildLShr(b, sign, iconst_like(it, 16), ""), "");
  LLVMTypeRef i16t = same_shape(ft, LLVMInt16TypeInContext(c));
  return LLVMBuildBitCast(b, LLVMBuildTrunc(b, r, i16t, ""), half_t, "f2h");
}

// float16 -> float32 (exact), without libgcc's __extendhfsf2: the bits move
// into place with the exponent rebiased; inf/NaN get the float exponent,
// zero and subnormals are renormalized by a float subtraction of 2^-14.
static LLVMValueRef soft_f16_to_f32(LLVMBuilderRef b, LLVMValueRef h, LLVMTypeRef float_t) {
  LLVMContextRef c = LLVMGetTypeContext(float_t);
  LLVMTypeRef i16t = same_shape(float_t, LLVMInt16TypeInContext(c));
  LLVMTypeRef it = same_shape(float_t, LLVMInt32TypeInContext(c));
  LLVMValueRef hb = LLVMBuildZExt(b, LLVMBuildBitCast(b, h, i16t, ""), it, "");
  LLVMValueRef sign = LLVMBuildShl(b, LLVMBuildAnd(b, hb, iconst_like(it, 0x8000u), ""),
                                   iconst_like(it, 16), "");
  LLVMValueRef o = LLVMBuildShl(b, LLVMBuildAnd(b, hb, iconst_like(it, 0x7FFFu), ""),
                                iconst_like(it, 13), "");
  LLVMValueRef e = LLVMBuildAnd(b, o, iconst_like(it, 0x0F800000u), "");
  o = LLVMBuildAdd(b, o, iconst_like(it, 0x38000000u), "");
  LLVMValueRef is_special = LLVMBuildICmp(b, LLVMIntEQ, e, iconst_like(it, 0x0F800000u), "");
  LLVMValueRef o_special = LLVMBuildAdd(b, o, iconst_like(it, 0x38000000u), "");
  LLVMValueRef is_small = LLVMBuildICmp(b, LLVMIntEQ, e, iconst_like(it, 0), "");
  LLVMValueRef fs = LLVMBuildBitCast(b, LLVMBuildAdd(b, o, iconst_like(it, 0x00800000u), ""),
                                     float_t, "");
  fs = LLVMBuildFSub(b, fs, fconst_like(float_t, 6.103515625e-05), "");  // 2^-14
  LLVMValueRef o_small = LLVMBuildBitCast(b, fs, it, "");
  o = LLVMBuildSelect(b, is_special, o_special, LLVMBuildSelect(b, is_small, o_small, o, ""), "");
  return LLVMBuildBitCast(b, LLVMBuildOr(b, o, sign, ""), float_t, "h2f");
}

static bool is_half_based(LLVMTypeRef t) {
  if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
  return LLVMGetTypeKind(t) == LLVMHalfTypeKind;
}

void mlcc_llvm_lower_libm(LLVMModuleRef module, mlcc_fpu_t fpu, bool arm_hard_float,
                          bool soft_half) {
  bool soft_float = fpu == MLCC_FPU_NONE;
  LLVMContextRef c = LLVMGetModuleContext(module);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  // frem: the backend would call fmodf/fmod itself (see the Arm note below);
  // float16 conversions without Zfh would call libgcc's __extendhfsf2 and
  // __truncsfhf2, which Debian's GCC 12 does not have for RISC-V.
  for (LLVMValueRef fn = LLVMGetFirstFunction(module); fn != NULL;
       fn = LLVMGetNextFunction(fn)) {
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb != NULL;
         bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef inst = LLVMGetFirstInstruction(bb);
      while (inst != NULL) {
        LLVMValueRef next = LLVMGetNextInstruction(inst);
        LLVMOpcode op = LLVMGetInstructionOpcode(inst);
        if (soft_half && (op == LLVMFPExt || op == LLVMFPTrunc)) {
          LLVMValueRef src = LLVMGetOperand(inst, 0);
          LLVMTypeRef from = LLVMTypeOf(src), to = LLVMTypeOf(inst);
          LLVMValueRef r = NULL;
          LLVMPositionBuilderBefore(b, inst);
          if (op == LLVMFPExt && is_half_based(from) && is_f32_based(to)) {
            r = soft_f16_to_f32(b, src, to);
          } else if (op == LLVMFPTrunc && is_f32_based(from) && is_half_based(to)) {
            r = soft_f32_to_f16(b, src, to);
          }
          if (r != NULL) {
            LLVMReplaceAllUsesWith(inst, r);
            LLVMInstructionEraseFromParent(inst);
          }
        } else if (op == LLVMFRem) {
          LLVMPositionBuilderBefore(b, inst);
          LLVMValueRef args[2] = {LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1)};
          bool f32 = is_f32_based(LLVMTypeOf(args[0]));
          LLVMValueRef r = call_libm(b, module, f32 ? "fmodf" : "fmod", args, 2);
          LLVMReplaceAllUsesWith(inst, r);
          LLVMInstructionEraseFromParent(inst);
        }
        inst = next;
      }
    }
  }
  for (LLVMValueRef fn = LLVMGetFirstFunction(module); fn != NULL;
       fn = LLVMGetNextFunction(fn)) {
    size_t len = 0;
    const char* name = LLVMGetValueName2(fn, &len);
    if (len < 6 || strncmp(name, "llvm.", 5) != 0) continue;
    bool is_max = strncmp(name, "llvm.maxnum.", 12) == 0;
    bool is_min = strncmp(name, "llvm.minnum.", 12) == 0;
    bool f32 = strstr(name, "f32") != NULL;
    // Only float32 sqrt: double sqrt is outside what MCU code computes.
    bool is_sqrt = soft_float && f32 && strncmp(name, "llvm.sqrt.", 10) == 0;
    char round_kind = 0;
    if (f32) {
      if (strncmp(name, "llvm.floor.", 11) == 0) round_kind = 'f';
      if (strncmp(name, "llvm.ceil.", 10) == 0) round_kind = 'c';
      if (strncmp(name, "llvm.trunc.", 11) == 0) round_kind = 't';
      if (strncmp(name, "llvm.round.", 11) == 0) round_kind = 'r';
      if (strncmp(name, "llvm.roundeven.", 15) == 0 || strncmp(name, "llvm.rint.", 10) == 0 ||
          strncmp(name, "llvm.nearbyint.", 15) == 0) {
        round_kind = 'e';
      }
    }
    const char* libm = libm_name(name, f32);
    if (libm == NULL && fpu != MLCC_FPU_DOUBLE && strstr(name, "f64") != NULL) {
      libm = libm_name_f64(name);
    }
    if (!is_max && !is_min && !is_sqrt && round_kind == 0 && libm == NULL) continue;
    LLVMUseRef use;
    while ((use = LLVMGetFirstUse(fn)) != NULL) {
      LLVMValueRef call = LLVMGetUser(use);
      if (LLVMIsACallInst(call) == NULL || LLVMGetCalledValue(call) != fn) break;
      LLVMPositionBuilderBefore(b, call);
      LLVMValueRef x = LLVMGetOperand(call, 0);
      LLVMValueRef r;
      if (is_sqrt) {
        r = soft_sqrt(b, c, x);
      } else if (round_kind != 0) {
        r = soft_round(b, module, x, round_kind);
      } else if (libm != NULL) {
        LLVMValueRef args[2] = {x, LLVMGetNumArgOperands(call) > 1 ? LLVMGetOperand(call, 1)
                                                                   : NULL};
        r = call_libm(b, module, libm, args, LLVMGetNumArgOperands(call) > 1 ? 2 : 1);
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
  // Arm hard-float EABI: LLVM-C's target machines leave the float ABI option
  // at its default, under which calls pass floats in core registers (base
  // AAPCS) while the hard-float C library expects them in VFP registers.
  // Every call of an external C function (libm; not an intrinsic, not mlcc's
  // own kernels) gets the VFP variant explicitly, on both sides.
  if (arm_hard_float) {
    for (LLVMValueRef fn = LLVMGetFirstFunction(module); fn != NULL;
         fn = LLVMGetNextFunction(fn)) {
      size_t len = 0;
      const char* name = LLVMGetValueName2(fn, &len);
      if (!LLVMIsDeclaration(fn) || strncmp(name, "llvm.", 5) == 0 ||
          strncmp(name, "mlcc_", 5) == 0) {
        continue;
      }
      LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
      bool has_float = is_float_based(LLVMGetReturnType(fty));
      unsigned np = LLVMCountParamTypes(fty);
      LLVMTypeRef params[8];
      if (np <= 8) {
        LLVMGetParamTypes(fty, params);
        for (unsigned i = 0; i < np; ++i) has_float = has_float || is_float_based(params[i]);
      }
      if (!has_float) continue;
      LLVMSetFunctionCallConv(fn, LLVMARMAAPCSVFPCallConv);
      for (LLVMUseRef u = LLVMGetFirstUse(fn); u != NULL; u = LLVMGetNextUse(u)) {
        LLVMValueRef call = LLVMGetUser(u);
        if (LLVMIsACallInst(call) != NULL && LLVMGetCalledValue(call) == fn) {
          LLVMSetInstructionCallConv(call, LLVMARMAAPCSVFPCallConv);
        }
      }
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
