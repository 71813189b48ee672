// SPDX-License-Identifier: Apache-2.0
// The identity of this mlcc build, fixed when mlcc is built: the git commit and
// the codegen hash. `mlcc --version` prints both; the kernel cache keys its
// entries by the codegen hash (driver/cache.h, mlcc_cache_store_key), so two
// builds of one commit share kernels and any change to the code generator's
// sources gives new keys.
//
// The codegen hash is SHA-256 (64 lowercase hex digits) over:
//   - the sources hash of scripts/codegen_id.sh, computed by the build (CMake on
//     every build, Bazel in a genrule) over every .c/.h/.def/.proto of ir/,
//     passes/ and targets/ except tests, fuzzers and benchmarks: contents and
//     relative names in byte order, never absolute paths or times;
//   - mlcc's version and the LLVM version mlcc was compiled against;
//   - the C compiler and the settings of it that can change the values mlcc
//     computes while emitting code: compiler name and version, host
//     architecture, fast-math and finite-math, IEC 559 conformance, FLT_EVAL
//     method, signalling NaNs, fast FMA (with the optimization level, which
//     decides FMA contraction where FMA is fast), and the flags the build passes
//     as EXTRA_FLAGS (CMake: -ffp-contract=, -frounding-math, ... found in
//     CMAKE_C_FLAGS and the build type's flags).
// Not included: sanitizers, debug info, include paths, the build folder, the
// commit itself (a commit that only touches docs, driver/ or tests keeps the
// hash).
//
// Thread-safe; all strings are static and never freed.
#ifndef MLCC_DRIVER_BUILD_ID_H_
#define MLCC_DRIVER_BUILD_ID_H_

#ifdef __cplusplus
extern "C" {
#endif

// The git commit mlcc was built from: 40 lowercase hex digits, or "unknown"
// (built outside a git checkout, by Bazel, which does not stamp, or in a
// program other than the mlcc executable: driver/build_commit.c).
const char* mlcc_build_commit(void);

// The codegen hash described above: 64 lowercase hex digits.
const char* mlcc_build_codegen_hash(void);

// The compiler settings that went into the codegen hash, as one line of text
// (for `mlcc --version -v` and for diagnosing two builds that do not share).
const char* mlcc_build_codegen_flags(void);

#ifdef __cplusplus
}
#endif

#endif  // MLCC_DRIVER_BUILD_ID_H_
