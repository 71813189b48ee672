// SPDX-License-Identifier: Apache-2.0
#include "driver/options.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/base/checked_math.h"

typedef enum option_kind_e {
  FLAG,
  JOINED,
  JOINED_OR_SEPARATE,
  EQ_OR_SEPARATE,
} option_kind_t;

typedef struct option_info_t {
  const char* spelling;
  option_kind_t kind;
  const char* metavar;
  const char* help;
} option_info_t;

static const option_info_t kOptions[MLCC_OPT_COUNT] = {
#define MLCC_OPTION(id, spelling, kind, metavar, help) \
  [MLCC_OPT_##id] = {spelling, kind, metavar, help},
#include "driver/options.def"
#undef MLCC_OPTION
};

static const char* const kEmitNames[MLCC_EMIT_KIND_COUNT] = {
    [MLCC_EMIT_LIB] = "lib", [MLCC_EMIT_OBJ] = "obj",   [MLCC_EMIT_LL] = "ll",
    [MLCC_EMIT_ASM] = "asm", [MLCC_EMIT_IR] = "ir",     [MLCC_EMIT_DOT] = "dot",
    [MLCC_EMIT_HEADER] = "header",
};

const char* mlcc_emit_kind_name(mlcc_emit_kind_t kind) {
  return (unsigned)kind < MLCC_EMIT_KIND_COUNT ? kEmitNames[kind] : "?";
}

static mlcc_status_t usage(const char* fmt, const char* a, const char* b) {
  return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, fmt, a, b);
}

//===----------------------------------------------------------------------===//
// Did you mean
//===----------------------------------------------------------------------===//

// Levenshtein distance, capped for long strings (options are short).
static size_t edit_distance(const char* a, size_t na, const char* b, size_t nb) {
  enum { kMax = 64 };
  if (na > kMax || nb > kMax) return (size_t)-1;
  size_t row[kMax + 1];
  for (size_t j = 0; j <= nb; ++j) row[j] = j;
  for (size_t i = 1; i <= na; ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= nb; ++j) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[nb];
}

// Best match of |word| among |n| |candidates|; NULL when none is close.
static const char* nearest(const char* word, size_t word_len, const char* const* candidates,
                           size_t n) {
  const char* best = NULL;
  size_t best_d = (size_t)-1;
  for (size_t i = 0; i < n; ++i) {
    size_t d = edit_distance(word, word_len, candidates[i], strlen(candidates[i]));
    if (d < best_d) {
      best_d = d;
      best = candidates[i];
    }
  }
  size_t limit = word_len / 3;
  if (limit < 2) limit = 2;
  return best_d <= limit ? best : NULL;
}

bool mlcc_options_suggest(const char* arg, char* buf, size_t buf_size) {
  if (buf_size) buf[0] = '\0';
  // Compare the name part; keep "=value" to re-attach to the suggestion.
  const char* eq = strchr(arg, '=');
  size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
  // Spellings without their trailing '=' (JOINED "-mcpu=" -> "-mcpu").
  char names[MLCC_OPT_COUNT][32];
  const char* cands[MLCC_OPT_COUNT];
  size_t n = 0;
  for (int i = 0; i < MLCC_OPT_COUNT; ++i) {
    if (kOptions[i].help == NULL) continue;
    snprintf(names[n], sizeof(names[n]), "%s", kOptions[i].spelling);
    size_t l = strlen(names[n]);
    if (l > 1 && names[n][l - 1] == '=') names[n][l - 1] = '\0';
    cands[n] = names[n];
    ++n;
  }
  const char* best = nearest(arg, name_len, cands, n);
  if (best == NULL) return false;
  const option_info_t* info = NULL;
  for (int i = 0; i < MLCC_OPT_COUNT; ++i) {
    if (strncmp(kOptions[i].spelling, best, strlen(best)) == 0 &&
        (kOptions[i].spelling[strlen(best)] == '\0' || kOptions[i].spelling[strlen(best)] == '=')) {
      info = &kOptions[i];
      break;
    }
  }
  if (info != NULL && info->kind == JOINED && info->spelling[strlen(info->spelling) - 1] == '=') {
    snprintf(buf, buf_size, "%s%s", info->spelling, eq ? eq + 1 : info->metavar);
  } else if (eq != NULL && info != NULL && info->kind != FLAG) {
    snprintf(buf, buf_size, "%s=%s", best, eq + 1);
  } else {
    snprintf(buf, buf_size, "%s", best);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

// Parses a decimal int64 in [min, max]; false on junk or overflow.
static bool parse_i64(const char* s, int64_t min, int64_t max, int64_t* out) {
  if (s == NULL || *s < '0' || *s > '9') return false;
  errno = 0;
  char* end = NULL;
  long long v = strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < min || v > max) return false;
  *out = (int64_t)v;
  return true;
}

mlcc_status_t mlcc_options_parse_input_shape(const char* text, mlcc_arena_t* arena,
                                             mlcc_input_shape_t* out_pin) {
  memset(out_pin, 0, sizeof(*out_pin));
  // ONNX names may contain '='; the dims never do, so split at the last one.
  const char* eq = strrchr(text, '=');
  if (eq == NULL || eq == text) {
    return usage("invalid --input-shape '%s'%s: expected NAME=DIMS, e.g. images=1x3x224x224",
                 text, "");
  }
  const char* dims = eq + 1;
  if (*dims == '\0') {
    return usage("invalid --input-shape '%s'%s: no dims after '='", text, "");
  }
  mlcc_shape_t shape = {0};
  const char* p = dims;
  while (1) {
    const char* x = strchr(p, 'x');
    size_t len = x ? (size_t)(x - p) : strlen(p);
    char num[32];
    int64_t v = 0;
    if (len == 0 || len >= sizeof(num)) {
      return usage("invalid --input-shape '%s': dim '%s' is not a non-negative integer", text,
                   len == 0 ? "" : p);
    }
    memcpy(num, p, len);
    num[len] = '\0';
    if (!parse_i64(num, 0, INT64_MAX, &v)) {
      return usage("invalid --input-shape '%s': dim '%s' is not a non-negative integer", text,
                   num);
    }
    if (shape.rank >= MLCC_MAX_RANK) {
      return usage("invalid --input-shape '%s': more than %s dims", text, "8");
    }
    shape.dims[shape.rank++] = v;
    if (x == NULL) break;
    p = x + 1;
  }
  char* name = mlcc_arena_strndup(arena, text, (size_t)(eq - text));
  if (name == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  out_pin->name = name;
  out_pin->shape = shape;
  return mlcc_ok_status();
}

// Adds |item| (|size| bytes, whose const char* name is at |name_offset|) to
// the arena-owned array |*items| of |*count|, replacing an entry of the same
// name: the last --input-shape/--input-value for a name wins, like -D.
static mlcc_status_t upsert_named(mlcc_arena_t* arena, void** items, uint32_t* count,
                                  const void* item, size_t size, size_t align,
                                  size_t name_offset) {
  const char* name = *(const char* const*)((const char*)item + name_offset);
  for (uint32_t i = 0; i < *count; ++i) {
    char* slot = (char*)*items + (size_t)i * size;
    if (strcmp(*(const char* const*)(slot + name_offset), name) == 0) {
      memcpy(slot, item, size);
      return mlcc_ok_status();
    }
  }
  size_t n = (size_t)*count + 1;
  char* grown = (char*)mlcc_arena_alloc(arena, n * size, align);
  if (grown == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (*count) memcpy(grown, *items, (n - 1) * size);
  memcpy(grown + (n - 1) * size, item, size);
  *items = grown;
  *count = (uint32_t)n;
  return mlcc_ok_status();
}

static mlcc_status_t add_input_shape(mlcc_options_t* o, const char* text) {
  mlcc_input_shape_t pin;
  MLCC_RETURN_IF_ERROR(mlcc_options_parse_input_shape(text, &o->arena, &pin));
  void* items = o->input_shapes;
  MLCC_RETURN_IF_ERROR(upsert_named(&o->arena, &items, &o->n_input_shapes, &pin, sizeof(pin),
                                    _Alignof(mlcc_input_shape_t),
                                    offsetof(mlcc_input_shape_t, name)));
  o->input_shapes = (mlcc_input_shape_t*)items;
  return mlcc_ok_status();
}

enum { kMaxInputValueNumbers = 1 << 20 };

mlcc_status_t mlcc_options_parse_input_value(const char* text, mlcc_arena_t* arena,
                                             mlcc_input_value_t* out) {
  memset(out, 0, sizeof(*out));
  // ONNX names may contain '='; a list never does, a file name may.
  const char* at = strstr(text, "=@");
  const char* eq = at != NULL ? at : strrchr(text, '=');
  if (eq == NULL || eq == text) {
    return usage("invalid --input-value '%s'%s: expected NAME=V1,V2,... or NAME=@FILE", text,
                 "");
  }
  char* name = mlcc_arena_strndup(arena, text, (size_t)(eq - text));
  char* origin = mlcc_arena_strndup(arena, text, strlen(text));
  if (name == NULL || origin == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  out->name = name;
  out->origin = origin;
  if (at != NULL) {
    if (at[2] == '\0') return usage("invalid --input-value '%s'%s: no file after '@'", text, "");
    out->file = origin + (at + 2 - text);
    return mlcc_ok_status();
  }
  const char* list = eq + 1;
  if (*list == '\0') return mlcc_ok_status();  // an empty tensor
  size_t n = 1;
  for (const char* p = list; *p; ++p) n += *p == ',';
  if (n > kMaxInputValueNumbers) {
    return usage("invalid --input-value '%s'%s: more than 1048576 numbers (use @FILE)", name, "");
  }
  int64_t* ints = (int64_t*)mlcc_arena_alloc(arena, n * sizeof(int64_t), _Alignof(int64_t));
  double* reals = (double*)mlcc_arena_alloc(arena, n * sizeof(double), _Alignof(double));
  bool* is_int = (bool*)mlcc_arena_alloc(arena, n, 1);
  bool* above_int64 = (bool*)mlcc_arena_alloc(arena, n, 1);
  if (ints == NULL || reals == NULL || is_int == NULL || above_int64 == NULL) {
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  const char* p = list;
  for (size_t i = 0; i < n; ++i) {
    const char* comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[64];
    if (len == 0) return usage("invalid --input-value '%s': an item is empty%s", text, "");
    if (len >= sizeof(item)) {
      return usage("invalid --input-value '%s': an item is longer than 63 characters%s", text,
                   "");
    }
    memcpy(item, p, len);
    item[len] = '\0';
    char* end = NULL;
    errno = 0;
    long long iv = strtoll(item, &end, 10);
    bool integer_syntax = end != item && *end == '\0';
    above_int64[i] = false;
    if (integer_syntax && errno == ERANGE) {
      // Only a uint64 input can take (INT64_MAX, UINT64_MAX].
      errno = 0;
      unsigned long long uv = item[0] == '-' ? 0 : strtoull(item, &end, 10);
      if (item[0] == '-' || errno == ERANGE) {
        return usage("invalid --input-value '%s': integer '%s' does not fit in 64 bits", text,
                     item);
      }
      memcpy(&ints[i], &uv, sizeof(uv));
      reals[i] = (double)uv;
      is_int[i] = true;
      above_int64[i] = true;
    } else if (integer_syntax) {
      ints[i] = (int64_t)iv;
      reals[i] = (double)iv;
      is_int[i] = true;
    } else {
      double dv = strtod(item, &end);  // overflow gives +-inf, underflow 0 or a denormal
      if (end == item || *end != '\0') {
        return usage("invalid --input-value '%s': item '%s' is not a number", text, item);
      }
      ints[i] = 0;
      reals[i] = dv;
      is_int[i] = false;
    }
    p = comma ? comma + 1 : p + len;
  }
  out->ints = ints;
  out->reals = reals;
  out->is_int = is_int;
  out->above_int64 = above_int64;
  out->n_numbers = (uint32_t)n;
  return mlcc_ok_status();
}

static mlcc_status_t add_input_value(mlcc_options_t* o, const char* text) {
  mlcc_input_value_t bv;
  MLCC_RETURN_IF_ERROR(mlcc_options_parse_input_value(text, &o->arena, &bv));
  void* items = o->input_values;
  MLCC_RETURN_IF_ERROR(upsert_named(&o->arena, &items, &o->n_input_values, &bv, sizeof(bv),
                                    _Alignof(mlcc_input_value_t),
                                    offsetof(mlcc_input_value_t, name)));
  o->input_values = (mlcc_input_value_t*)items;
  return mlcc_ok_status();
}

static mlcc_status_t set_emit(mlcc_options_t* o, const char* value) {
  for (int k = 0; k < MLCC_EMIT_KIND_COUNT; ++k) {
    if (strcmp(value, kEmitNames[k]) == 0) {
      o->emit = (mlcc_emit_kind_t)k;
      return mlcc_ok_status();
    }
  }
  const char* near = nearest(value, strlen(value), kEmitNames, MLCC_EMIT_KIND_COUNT);
  if (near != NULL) {
    return usage("invalid value '%s' for --emit; did you mean '%s'? (expected ir, ll, asm, obj, "
                 "lib, header or dot)", value, near);
  }
  return usage("invalid value '%s' for --emit%s; expected ir, ll, asm, obj, lib, header or dot",
               value, "");
}

// Applies option |id| with |value| (NULL for flags). |arg| is the argument
// as written, for messages.
static mlcc_status_t apply(mlcc_options_t* o, mlcc_option_id_t id, const char* value,
                           const char* arg) {
  int64_t v = 0;
  switch (id) {
    case MLCC_OPT_OUTPUT:
      if (*value == '\0') return usage("empty file name in '%s'%s", arg, "");
      o->output = value;
      break;
    case MLCC_OPT_COMPILE_ONLY: o->emit = MLCC_EMIT_OBJ; break;
    case MLCC_OPT_EMIT_LLVM_TEXT: o->emit = MLCC_EMIT_LL; break;
    case MLCC_OPT_EMIT: return set_emit(o, value);
    case MLCC_OPT_NAME: o->name = value; break;
    case MLCC_OPT_WEIGHTS_SECTION: {
      // An ELF section name the assembler and linker scripts accept as is.
      size_t len = strlen(value);
      bool ok = len > 0 && len < 200;
      for (size_t i = 0; ok && i < len; ++i) {
        char ch = value[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '.' || ch == '_' || ch == '-' || ch == '$';
      }
      if (!ok) {
        return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                                "--weights-section='%s': a section name is 1-199 of "
                                "[A-Za-z0-9._$-]", value);
      }
      o->weights_section = value;
      break;
    }
    case MLCC_OPT_TARGET:
      if (*value == '\0') return usage("empty target in '%s'%s", arg, "");
      o->target = value;
      break;
    case MLCC_OPT_MCPU:
      if (*value == '\0') return usage("empty CPU name in '%s'%s", arg, "");
      o->cpu = value;
      break;
    case MLCC_OPT_MATTR: o->features = value; break;
    case MLCC_OPT_OPT_LEVEL:
      if (*value == '\0') {
        o->opt_level = 1;  // gcc/clang: -O is -O1
      } else if (parse_i64(value, 0, 3, &v)) {
        o->opt_level = (int)v;
      } else {
        return usage("invalid optimization level '%s'%s; expected -O0, -O1, -O2 or -O3", arg, "");
      }
      break;
    case MLCC_OPT_INPUT_SHAPE: return add_input_shape(o, value);
    case MLCC_OPT_INPUT_VALUE: return add_input_value(o, value);
    case MLCC_OPT_MD:
    case MLCC_OPT_MMD: o->write_depfile = true; break;
    case MLCC_OPT_MT:
    case MLCC_OPT_MQ: {
      if (*value == '\0') return usage("empty target in '%s'%s", arg, "");
      mlcc_dep_target_t* grown = (mlcc_dep_target_t*)mlcc_arena_alloc(
          &o->arena, (o->n_dep_targets + 1) * sizeof(*grown), _Alignof(mlcc_dep_target_t));
      if (grown == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
      if (o->n_dep_targets) memcpy(grown, o->dep_targets, o->n_dep_targets * sizeof(*grown));
      grown[o->n_dep_targets].text = value;
      grown[o->n_dep_targets].quote = id == MLCC_OPT_MQ;
      o->dep_targets = grown;
      o->n_dep_targets++;
      break;
    }
    case MLCC_OPT_MP: o->dep_phony = true; break;
    case MLCC_OPT_MF:
      if (*value == '\0') return usage("empty file name in '%s'%s", arg, "");
      o->depfile = value;
      o->write_depfile = true;
      break;
    case MLCC_OPT_JOBS:
      if (!parse_i64(value, 1, 4096, &v)) {
        return usage("invalid value '%s' in '%s'; expected a job count from 1 to 4096", value,
                     arg);
      }
      o->jobs = (int)v;
      break;
    case MLCC_OPT_PASSES: o->passes = value; break;
    case MLCC_OPT_PRINT_AFTER_ALL: o->print_after_all = true; break;
    case MLCC_OPT_VERIFY_EACH: o->verify_each = true; break;
    case MLCC_OPT_TIME_REPORT: o->time_report = true; break;
    case MLCC_OPT_WINOGRAD: o->no_winograd = false; o->winograd_given = true; break;
    case MLCC_OPT_NO_WINOGRAD: o->no_winograd = true; o->winograd_given = true; break;
    case MLCC_OPT_PROFILE: o->profile = true; break;
    case MLCC_OPT_DOT_ALL_CONSTANTS: o->dot_all_constants = true; break;
    case MLCC_OPT_CACHE_DIR: o->cache_dir = value; break;
    case MLCC_OPT_DESCRIBE:
      if (*value == '\0') return usage("empty file name in '%s'%s", arg, "");
      o->describe = value;
      break;
    case MLCC_OPT_NO_CACHE: o->no_cache = true; break;
    case MLCC_OPT_CACHE_STATS: o->cache_stats = true; break;
    case MLCC_OPT_CACHE_CLEAR: o->cache_clear = true; break;
    case MLCC_OPT_PRINT_STATS: o->print_stats = true; break;
    case MLCC_OPT_ZERO_STATS:
    case MLCC_OPT_ZERO_STATS_LONG: o->zero_stats = true; break;
    case MLCC_OPT_CLEANUP:
    case MLCC_OPT_CACHE_TRIM: o->cache_cleanup = true; break;
    case MLCC_OPT_SHOW_CONFIG: o->show_config = true; break;
    case MLCC_OPT_SET_CONFIG:
      if (o->n_set_config == MLCC_OPTIONS_MAX_SET_CONFIG) {
        return usage("too many --set-config options in '%s'%s (at most 16)", arg, "");
      }
      o->set_config[o->n_set_config++] = value;  // validated by the driver (driver/cache.h)
      break;
    case MLCC_OPT_CACHE_MAX_SIZE:
      if (*value == '\0') return usage("empty size in '%s'%s", arg, "");
      o->cache_max_size = value;  // validated by the driver (driver/cache.h)
      break;
    case MLCC_OPT_REMOTE_CACHE:
      if (*value == '\0') return usage("empty URL in '%s'%s", arg, "");
      o->remote_cache = value;
      break;
    case MLCC_OPT_REMOTE_CACHE_RO: o->remote_cache_readonly = true; break;
    case MLCC_OPT_REMOTE_CACHE_KEY:
      if (*value == '\0') return usage("empty file name in '%s'%s", arg, "");
      o->remote_cache_key = value;
      break;
    case MLCC_OPT_TUNE: o->tune = true; break;
    case MLCC_OPT_TUNE_TRIALS:
      if (!parse_i64(value, 1, 10000, &v)) {
        return usage("invalid value '%s' in '%s'; expected a trial count from 1 to 10000", value,
                     arg);
      }
      o->tune_trials = (int)v;
      break;
    case MLCC_OPT_TUNE_TIME:
      if (!parse_i64(value, 1, 86400, &v)) {
        return usage("invalid value '%s' in '%s'; expected whole seconds from 1 to 86400", value,
                     arg);
      }
      o->tune_time = (double)v;
      break;
    case MLCC_OPT_TUNE_RUNNER:
      if (*value == '\0') return usage("empty command in '%s'%s", arg, "");
      o->tune_runner = value;
      break;
    case MLCC_OPT_TUNING_RECORDS:
      if (*value == '\0') return usage("empty file name in '%s'%s", arg, "");
      o->tuning_records = value;
      break;
    case MLCC_OPT_NO_TUNING_RECORDS: o->no_tuning_records = true; break;
    case MLCC_OPT_REMOTE_TUNING_RECORDS: o->remote_tuning_records = true; break;
    case MLCC_OPT_DEBUG:
      if (strcmp(value, "explain-cache") != 0) {
        return usage("invalid value '%s' in '%s'; expected '-d explain-cache'", value, arg);
      }
      o->explain_cache = true;
      break;
    case MLCC_OPT_HASH_HASH_HASH: o->print_jobs_only = true; break;
    case MLCC_OPT_VERBOSE: o->verbose = true; break;
    case MLCC_OPT_VERSION: o->version = true; break;
    case MLCC_OPT_HELP: o->help = true; break;
    case MLCC_OPT_PRINT_TARGETS: o->print_targets = true; break;
    case MLCC_OPT_COUNT: break;
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

// Finds the option for |arg|. On a match sets |*out_id| and |*out_value|
// (NULL: the value is the next argument, for the separate forms; "" or the
// glued text otherwise; unused for FLAG).
static bool match(const char* arg, mlcc_option_id_t* out_id, const char** out_value,
                  bool* out_needs_next) {
  *out_needs_next = false;
  *out_value = NULL;
  // Exact spellings first (flags, and separate forms of value options).
  for (int i = 0; i < MLCC_OPT_COUNT; ++i) {
    if (strcmp(arg, kOptions[i].spelling) != 0) continue;
    *out_id = (mlcc_option_id_t)i;
    switch (kOptions[i].kind) {
      case FLAG: break;
      case JOINED: *out_value = ""; break;
      case JOINED_OR_SEPARATE:
      case EQ_OR_SEPARATE: *out_needs_next = true; break;
    }
    return true;
  }
  // Then the longest prefix among valued options.
  int best = -1;
  size_t best_len = 0;
  for (int i = 0; i < MLCC_OPT_COUNT; ++i) {
    const option_info_t* o = &kOptions[i];
    size_t l = strlen(o->spelling);
    if (o->kind == FLAG || strncmp(arg, o->spelling, l) != 0) continue;
    if (o->kind == EQ_OR_SEPARATE && arg[l] != '=') continue;
    if (l > best_len) {
      best = i;
      best_len = l;
    }
  }
  if (best < 0) return false;
  *out_id = (mlcc_option_id_t)best;
  *out_value = arg + best_len + (kOptions[best].kind == EQ_OR_SEPARATE ? 1 : 0);
  return true;
}

static int default_jobs(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) return 1;
  return n > 4096 ? 4096 : (int)n;
}

mlcc_status_t mlcc_options_parse(int argc, char** argv, mlcc_options_t* out_options) {
  mlcc_options_t* o = out_options;
  memset(o, 0, sizeof(*o));
  mlcc_arena_init(&o->arena);
  o->opt_level = 2;
  o->jobs = default_jobs();
  bool only_inputs = false;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (arg == NULL) break;
    if (!only_inputs && strcmp(arg, "--") == 0) {
      only_inputs = true;
      continue;
    }
    if (only_inputs || arg[0] != '-' || arg[1] == '\0') {
      if (strcmp(arg, "-") == 0) {
        return usage("reading the model from standard input ('%s') is not supported%s", arg, "");
      }
      if (o->input != NULL) {
        return usage("expected one input model, got '%s' and '%s'", o->input, arg);
      }
      o->input = arg;
      continue;
    }
    mlcc_option_id_t id;
    const char* value;
    bool needs_next;
    if (!match(arg, &id, &value, &needs_next)) {
      char suggestion[128];
      if (mlcc_options_suggest(arg, suggestion, sizeof(suggestion))) {
        return usage("unknown option '%s'; did you mean '%s'?", arg, suggestion);
      }
      return usage("unknown option '%s'%s", arg, "");
    }
    if (needs_next) {
      if (i + 1 >= argc || argv[i + 1] == NULL) {
        return usage("missing argument to '%s' (expected %s)", arg, kOptions[id].metavar);
      }
      value = argv[++i];
    }
    MLCC_RETURN_IF_ERROR(apply(o, id, value, arg));
  }
  return mlcc_ok_status();
}

void mlcc_options_deinit(mlcc_options_t* options) {
  mlcc_arena_deinit(&options->arena);
  options->input_shapes = NULL;
  options->n_input_shapes = 0;
  options->input_values = NULL;
  options->n_input_values = 0;
}

bool mlcc_options_info_only(const mlcc_options_t* o) {
  // gcc: -v without an input prints the version.
  return o->help || o->version || o->print_targets || (o->verbose && o->input == NULL) ||
         ((o->cache_stats || o->cache_clear || o->print_stats || o->zero_stats ||
           o->cache_cleanup || o->show_config || o->n_set_config != 0) &&
          o->input == NULL);
}

void mlcc_options_print_help(FILE* out) {
  fprintf(out,
          "OVERVIEW: mlcc, an ahead-of-time compiler for ONNX models\n\n"
          "USAGE: mlcc [options] model.onnx\n\n"
          "Produces libNAME.a and NAME.h (no runtime; weights baked in).\n\n"
          "OPTIONS:\n");
  for (int i = 0; i < MLCC_OPT_COUNT; ++i) {
    const option_info_t* o = &kOptions[i];
    if (o->help == NULL) continue;
    char left[64];
    switch (o->kind) {
      case FLAG: snprintf(left, sizeof(left), "%s", o->spelling); break;
      case JOINED: snprintf(left, sizeof(left), "%s%s", o->spelling, o->metavar); break;
      case JOINED_OR_SEPARATE:
        snprintf(left, sizeof(left), "%s %s", o->spelling, o->metavar);
        break;
      case EQ_OR_SEPARATE:
        snprintf(left, sizeof(left), "%s=%s", o->spelling, o->metavar);
        break;
    }
    if (i == MLCC_OPT_OPT_LEVEL) snprintf(left, sizeof(left), "-O0 .. -O3");
    fprintf(out, "  %-24s %s\n", left, o->help);
  }
  fprintf(out,
          "\nExit status: 0 ok, 1 the model is wrong or unsupported, 2 usage error, "
          "70 internal error.\n");
}
