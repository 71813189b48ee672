// SPDX-License-Identifier: Apache-2.0
// mlcc_status_t: the error type every fallible mlcc function returns.
// Thread-compatible: a status is owned by one thread at a time.
#ifndef MLCC_IR_BASE_STATUS_H_
#define MLCC_IR_BASE_STATUS_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Types and enums
//===----------------------------------------------------------------------===//

// Status codes. Keep the set small; see STYLE 2.3 for when each applies.
typedef enum mlcc_status_code_e {
  MLCC_STATUS_OK = 0,
  MLCC_STATUS_INVALID_ARGUMENT,    // bad flags or API misuse
  MLCC_STATUS_INVALID_MODEL,       // the input breaks ONNX or IR rules
  MLCC_STATUS_UNIMPLEMENTED,       // valid but unsupported op/opset/dtype
  MLCC_STATUS_NOT_FOUND,           // file, external blob or target missing
  MLCC_STATUS_IO,                  // read/write/rename failed
  MLCC_STATUS_RESOURCE_EXHAUSTED,  // out of memory or a configured limit hit
  MLCC_STATUS_INTERNAL,            // an mlcc bug
  MLCC_STATUS_CODE_COUNT
} mlcc_status_code_t;

// Opaque handle; NULL means OK. A non-NULL status owns heap storage and must
// be consumed by mlcc_status_free() or returned to the caller.
typedef struct mlcc_status_s* mlcc_status_t;

#if defined(__GNUC__)
#define MLCC_MUST_USE __attribute__((warn_unused_result))
#define MLCC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MLCC_MUST_USE
#define MLCC_PRINTF(f, a)
#endif

//===----------------------------------------------------------------------===//
// mlcc_status_t
//===----------------------------------------------------------------------===//

static inline mlcc_status_t mlcc_ok_status(void) { return NULL; }
static inline bool mlcc_status_is_ok(mlcc_status_t s) { return s == NULL; }

// Creates a failed status with a printf-style message. |code| must not be OK.
// If memory runs out, returns a static RESOURCE_EXHAUSTED status (still
// safe to free). Use the mlcc_make_status macro to record file:line.
MLCC_MUST_USE mlcc_status_t mlcc_status_make_at(const char* file, int line,
                                                mlcc_status_code_t code,
                                                const char* fmt, ...)
    MLCC_PRINTF(4, 5);
#define mlcc_make_status(code, ...) \
  mlcc_status_make_at(__FILE__, __LINE__, (code), __VA_ARGS__)

// Prepends context (e.g. "node #3 'conv' (Conv, opset 13)") to |status| and
// returns it. No-op on OK. Annotations render outermost-first joined by ": ".
MLCC_MUST_USE mlcc_status_t mlcc_status_annotate(mlcc_status_t status,
                                                 const char* fmt, ...)
    MLCC_PRINTF(2, 3);

// Returns |primary| if it failed (freeing |cleanup|), else |cleanup|.
MLCC_MUST_USE mlcc_status_t mlcc_status_join(mlcc_status_t primary,
                                             mlcc_status_t cleanup);

mlcc_status_code_t mlcc_status_code(mlcc_status_t status);
const char* mlcc_status_code_name(mlcc_status_code_t code);  // "INVALID_MODEL"

// The bare message without annotations (borrowed; valid until free).
const char* mlcc_status_message(mlcc_status_t status);

// Renders "<ann_outer>: <ann_inner>: error: <message> [CODE]" into a new
// malloc'ed string the caller frees. Returns NULL for OK or on OOM.
char* mlcc_status_to_string(mlcc_status_t status);

void mlcc_status_free(mlcc_status_t status);

// Maps a status to the driver's exit code: 0 ok, 1 input error
// (INVALID_MODEL, UNIMPLEMENTED, NOT_FOUND, IO, RESOURCE_EXHAUSTED: a model
// over a size limit or too large for memory), 2 usage (INVALID_ARGUMENT),
// 70 internal (an mlcc bug).
int mlcc_status_exit_code(mlcc_status_t status);

#define MLCC_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    mlcc_status_t mlcc_status_tmp_ = (expr);       \
    if (mlcc_status_tmp_ != NULL) return mlcc_status_tmp_; \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif  // MLCC_IR_BASE_STATUS_H_
