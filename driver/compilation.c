// SPDX-License-Identifier: Apache-2.0
#include "driver/compilation.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver/archive.h"
#include "driver/cache.h"
#include "driver/describe.h"
#include "driver/cleanup.h"
#include "driver/depfile.h"
#include "driver/fsutil.h"
#include "driver/header.h"
#include "driver/jobs.h"
#include "driver/kernel_pool.h"
#include "driver/object_check.h"
#include "driver/objsize.h"
#include "driver/remote_cache.h"
#include "driver/remote_sign.h"
#include "driver/strbuf.h"
#include "driver/tune.h"
#include "driver/tune_run.h"
#include "ir/graph.h"
#include "ir/onnx/onnx_import.h"
#include "ir/print.h"
#include "ir/verify.h"
#include "passes/pass.h"
#include "passes/plan_memory.h"
#include "targets/codegen/codegen.h"
#include "targets/codegen/stack.h"
#include "targets/target.h"

#ifndef MLCC_VERSION
#define MLCC_VERSION "0.1.0"
#endif

enum {
  kMaxDeps = 1024,                      // external data files reported by the importer
  kMaxPasses = MLCC_PASS_COUNT * 2 + 64,
  kMaxStaged = 4,                       // output, header, description, depfile
};

struct mlcc_compilation_t {
  const mlcc_options_t* options;  // borrowed
  FILE* diag;                     // borrowed: -v and -### output
  mlcc_arena_t arena;             // jobs and strings
  char name[256];                 // C symbol prefix
  const char* input;
  const char* output;             // "-" means standard output
  const char* header_path;        // LIB, OBJ: <dir of output>/NAME.h (NULL for -o /dev/null)
  const char* depfile_path;       // NULL unless -MD/-MF
  const char* out_dir;            // where temporaries go
  const char* ar_tool;
  const char* ld_tool;            // OBJ: joins the objects (ld -r)
  bool obj_whole;                 // OBJ without a linker: one module, no kernel cache
  char header_sha256[65];         // of NAME.h as written ("" before)
  char whole_sha256[65];          // of a whole-module output (obj_whole), for --describe
  mlcc_objsize_t whole_size;      // section sizes of that object (-v, --describe)
  bool whole_size_known;
  mlcc_target_t target;
  mlcc_pass_id_t passes[kMaxPasses];
  uint32_t n_passes;
  mlcc_job_list_t jobs;

  // Run state.
  mlcc_graph_t* graph;
  const char* deps[kMaxDeps];
  uint32_t n_deps;
  char model_sha256[65];          // of the bytes the importer read ("" before)
  mlcc_tempdir_t tempdir;
  const char* archive_tmp;        // inside tempdir
  const char** members;           // object paths inside tempdir (arena)
  uint32_t n_members, members_cap;
  uint32_t n_kernels_total;       // kernels in the graph
  uint32_t n_kernels_compiled;    // distinct kernels compiled by this run
  uint32_t n_kernels_distinct;    // distinct kernel keys
  uint32_t n_cache_hits;          // distinct kernels from the local cache
  uint32_t n_remote_hits;         // distinct kernels from the remote cache
  // Kernel cache configuration (resolved at creation; LIB only).
  bool use_cache;
  const char* cache_dir;          // arena
  uint64_t cache_max_size;
  mlcc_cache_config_t cache_config;  // mlcc.conf + environment (driver/cache.h)
  const char* remote_url;         // NULL: no remote store
  bool remote_read_only;
  mlcc_remote_key_t* remote_key;  // NULL: unsigned remote entries (remote_sign.h)
  mlcc_cache_t* cache;            // the local store, opened on first use
  bool cache_opened;              // tried to open it (it may have failed)
  int entry_origin;               // -v: 0 not built, 1 compiled, 2 cache hit
  mlcc_staged_file_t staged[kMaxStaged];
  uint32_t n_staged;
  char* created_dirs[32];         // output folders made by this run (mkdir -p)
  uint32_t n_created_dirs;
  bool committed;                 // outputs published: keep created_dirs
  // Tuning records (driver/tune.h): --tuning-records' set, the records this
  // build applied and their digest (--describe).
  mlcc_tune_records_t tune_file;
  mlcc_tune_records_t tune_used;
  char tune_digest[65];
};

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

static const char* arena_printf(mlcc_arena_t* arena, const char* fmt, ...) MLCC_PRINTF(2, 3);
static const char* arena_printf(mlcc_arena_t* arena, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char* s = (char*)mlcc_arena_alloc(arena, (size_t)n + 1, 1);
  if (s == NULL) return NULL;
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

// Takes a malloc'ed string into the arena (freeing it); NULL on OOM.
static const char* arena_adopt(mlcc_arena_t* arena, char* s) {
  if (s == NULL) return NULL;
  const char* copy = mlcc_arena_strdup(arena, s);
  free(s);
  return copy;
}

// The outputs built from separately compiled (and cached) kernel objects:
// a library, or one relocatable object joined by the linker.
static bool uses_kernel_objects(mlcc_emit_kind_t kind) {
  return kind == MLCC_EMIT_LIB || kind == MLCC_EMIT_OBJ;
}

// -S / --emit=ll|asm: one text joined from separately emitted (and cached)
// kernel texts (mlcc_codegen_join_text).
static bool text_output(mlcc_emit_kind_t kind) {
  return kind == MLCC_EMIT_LL || kind == MLCC_EMIT_ASM;
}

// The codegen output kind of the kernels, weights and entry of this run.
static mlcc_output_kind_t part_kind(const mlcc_compilation_t* c) {
  return c->options->emit == MLCC_EMIT_LL    ? MLCC_OUTPUT_LL
         : c->options->emit == MLCC_EMIT_ASM ? MLCC_OUTPUT_ASM
                                             : MLCC_OUTPUT_OBJECT;
}

// The kernel pipeline (separate kernels through the cache) for this run:
// every library, -S and --emit=ll|asm, and -c unless no linker was found to
// join the objects.
static bool kernel_pipeline(const mlcc_compilation_t* c) {
  return (uses_kernel_objects(c->options->emit) && !c->obj_whole) ||
         text_output(c->options->emit);
}

static bool emits_objects(mlcc_emit_kind_t kind) {
  return kind == MLCC_EMIT_LIB || kind == MLCC_EMIT_OBJ || kind == MLCC_EMIT_LL ||
         kind == MLCC_EMIT_ASM;
}

// An output path that can only name a folder: "dir/" or an existing folder.
static bool names_directory(const char* path) {
  size_t n = strlen(path);
  struct stat st;
  return (n > 0 && path[n - 1] == '/') || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

// Refuses (INVALID_ARGUMENT naming both paths) an output that is the same
// file as an input: the model, its external data, --input-value=@FILE and
// that file's data (|deps|, |n_deps|). Files are compared by device and
// inode (hard links, symlinks, "./m.onnx" vs "m.onnx"), then by path string
// for outputs that do not exist yet. Standard output and special files
// (/dev/null, a FIFO: written through, never replaced) are not checked.
static mlcc_status_t check_outputs_not_inputs(const mlcc_compilation_t* c,
                                              const char* const* deps, uint32_t n_deps) {
  const char* outputs[4] = {c->output, c->header_path, c->depfile_path,
                            c->options->describe};
  static const char* const kWhat[4] = {"output", "header", "depfile", "description"};
  for (int i = 0; i < 4; ++i) {
    const char* out = outputs[i];
    if (out == NULL || strcmp(out, "-") == 0) continue;
    struct stat so;
    bool exists = stat(out, &so) == 0;
    if (exists && !S_ISREG(so.st_mode)) continue;
    for (uint32_t j = 0; j < n_deps; ++j) {
      const char* in = deps[j];
      if (in == NULL) continue;
      struct stat si;
      bool same = strcmp(out, in) == 0 ||
                  (exists && stat(in, &si) == 0 && si.st_dev == so.st_dev &&
                   si.st_ino == so.st_ino);
      if (!same) continue;
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "the %s '%s' is the same file as the input %s'%s'; refusing to "
                              "overwrite it",
                              kWhat[i], out, j == 0 ? "model " : "", in);
    }
  }
  return mlcc_ok_status();
}

// The inputs known before the import: the model and --input-value=@FILE.
static mlcc_status_t check_outputs_not_named_inputs(const mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  const char* inputs[1 + 64];
  uint32_t n = 0;
  inputs[n++] = c->input;
  for (uint32_t i = 0; i < o->n_input_values && n < 1 + 64; ++i) {
    if (o->input_values[i].file != NULL) inputs[n++] = o->input_values[i].file;
  }
  return check_outputs_not_inputs(c, inputs, n);
}

//===----------------------------------------------------------------------===//
// Creation: names, paths, target, pipeline
//===----------------------------------------------------------------------===//

// The default name that "-o [DIR/]libNAME.a" (or NAME.a) gives: NAME,
// sanitized into |buf| like a model's stem. False when |output| does not
// end in ".a" or leaves no name.
static bool name_from_library_path(const char* output, char* buf, size_t buf_size) {
  const char* base = mlcc_fs_basename(output);
  size_t len = strlen(base);
  if (len < 3 || strcmp(base + len - 2, ".a") != 0) return false;
  len -= 2;
  if (len == 3 && strncmp(base, "lib", 3) == 0) return false;  // "lib.a"
  if (len > 3 && strncmp(base, "lib", 3) == 0) {
    base += 3;
    len -= 3;
  }
  char stem[256];
  if (len >= sizeof(stem)) len = sizeof(stem) - 1;
  memcpy(stem, base, len);
  stem[len] = '\0';
  mlcc_header_sanitize_identifier(stem, buf, buf_size);
  return buf[0] != '\0';
}

// File stems that exporters and model zoos give every model ("model.onnx"),
// so a name taken from them collides with the next library's.
static bool is_generic_name(const char* name) {
  static const char* const kGeneric[] = {"model", "net", "network", "graph", "export",
                                         "exported", "main", "output", "out", "onnx",
                                         "inference", "default", "test", "tmp", "temp"};
  for (size_t i = 0; i < sizeof(kGeneric) / sizeof(kGeneric[0]); ++i) {
    if (strcmp(name, kGeneric[i]) == 0) return true;
  }
  return false;
}

static mlcc_status_t resolve_paths(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  if (o->name != NULL) {
    MLCC_RETURN_IF_ERROR(mlcc_header_check_name(o->name));
    snprintf(c->name, sizeof(c->name), "%s", o->name);
  } else {
    // cc -o users expect "-o libNAME.a" to name the library NAME; else the
    // model's file stem.
    bool from_output = o->emit == MLCC_EMIT_LIB && o->output != NULL &&
                       name_from_library_path(o->output, c->name, sizeof(c->name));
    if (!from_output) mlcc_header_default_name(c->input, c->name, sizeof(c->name));
    const char* source = from_output ? o->output : c->input;
    if (mlcc_header_is_keyword(c->name)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "the default name '%s' (from '%s') is a C keyword; pass --name",
                              c->name, source);
    }
    if (!from_output && is_generic_name(c->name) &&
        (emits_objects(o->emit) || o->emit == MLCC_EMIT_HEADER)) {
      fprintf(c->diag,
              "mlcc: warning: the name '%s' comes from the generic file name '%s'; two "
              "libraries named so collide at link time (pass --name=NAME or -o libNAME.a)\n",
              c->name, source);
    }
  }
  const char* suffix = NULL;
  switch (o->emit) {
    case MLCC_EMIT_LIB: break;
    case MLCC_EMIT_OBJ: suffix = ".o"; break;
    case MLCC_EMIT_LL: suffix = ".ll"; break;
    case MLCC_EMIT_ASM: suffix = ".s"; break;
    case MLCC_EMIT_HEADER: suffix = ".h"; break;
    case MLCC_EMIT_IR:
    case MLCC_EMIT_DOT:
    case MLCC_EMIT_KIND_COUNT: break;
  }
  if (o->output != NULL) {
    c->output = o->output;
  } else if (o->emit == MLCC_EMIT_LIB) {
    c->output = arena_printf(&c->arena, "lib%s.a", c->name);
  } else if (suffix != NULL) {
    c->output = arena_printf(&c->arena, "%s%s", c->name, suffix);
  } else {
    c->output = "-";
  }
  if (c->output == NULL) return oom();
  bool to_stdout = strcmp(c->output, "-") == 0;
  if (to_stdout && o->emit == MLCC_EMIT_LIB) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "cannot write a library to standard output ('-o -')");
  }
  if (!to_stdout && names_directory(c->output)) {
    // Refused before any work (the rename at the very end would fail).
    bool lib = o->emit == MLCC_EMIT_LIB;
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "the output '%s' is a directory; -o names a file, e.g. '%s%s%s%s%s'",
                            c->output, c->output,
                            c->output[strlen(c->output) - 1] == '/' ? "" : "/", lib ? "lib" : "",
                            c->name, lib ? ".a" : suffix ? suffix : ".txt");
  }
  // -o /dev/null (or a FIFO): temporaries go to $TMPDIR, the output is written
  // through at the end, and a library gets no header (nothing is "beside" a
  // device; cc -o /dev/null is a check that writes nothing).
  bool special = !to_stdout && mlcc_fs_is_special(c->output);
  c->out_dir = to_stdout ? "."
               : special ? mlcc_arena_strdup(&c->arena, mlcc_fs_temp_root())
                         : arena_adopt(&c->arena, mlcc_fs_dirname(c->output));
  if (c->out_dir == NULL) return oom();
  if (uses_kernel_objects(o->emit) && !special && !to_stdout) {
    char file[300];
    snprintf(file, sizeof(file), "%s.h", c->name);
    c->header_path = arena_adopt(&c->arena, mlcc_fs_join(c->out_dir, file));
    if (c->header_path == NULL) return oom();
  }
  if (o->describe != NULL && !uses_kernel_objects(o->emit)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "--describe needs a library or an object (-c), not --emit=%s",
                            mlcc_emit_kind_name(o->emit));
  }
  if (o->describe != NULL && names_directory(o->describe)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "the description '%s' is a directory; --describe names a file",
                            o->describe);
  }
  if (o->write_depfile) {
    if (o->depfile != NULL) {
      c->depfile_path = o->depfile;
    } else if (to_stdout) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "-MD needs -MF FILE or -o FILE when writing to standard output");
    } else {
      // gcc: the output with its suffix replaced by .d.
      const char* base = mlcc_fs_basename(c->output);
      const char* dot = strrchr(base, '.');
      size_t stem = dot && dot != base ? (size_t)(dot - c->output) : strlen(c->output);
      c->depfile_path = arena_printf(&c->arena, "%.*s.d", (int)stem, c->output);
      if (c->depfile_path == NULL) return oom();
    }
    if (names_directory(c->depfile_path)) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "the depfile '%s' is a directory; -MF names a file",
                              c->depfile_path);
    }
  }
  return check_outputs_not_named_inputs(c);
}

static mlcc_status_t resolve_pipeline(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  if (o->passes == NULL) {
    c->n_passes = mlcc_pass_default_pipeline(o->opt_level, c->passes);
    return mlcc_ok_status();
  }
  MLCC_RETURN_IF_ERROR(mlcc_pass_parse_pipeline(o->passes, c->passes, kMaxPasses, &c->n_passes));
  if (emits_objects(o->emit) || o->emit == MLCC_EMIT_HEADER) {
    // The codegen needs shapes, kernels and a memory plan.
    static const mlcc_pass_id_t kRequired[] = {MLCC_PASS_INFER_SHAPES, MLCC_PASS_FUSE,
                                               MLCC_PASS_PLAN_MEMORY};
    for (size_t r = 0; r < sizeof(kRequired) / sizeof(kRequired[0]); ++r) {
      bool found = false;
      for (uint32_t i = 0; i < c->n_passes && !found; ++i) found = c->passes[i] == kRequired[r];
      if (!found) {
        return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                                "--passes must include '%s' for --emit=%s (the code generator "
                                "needs it); only --emit=ir and --emit=dot accept any pipeline",
                                mlcc_pass_name(kRequired[r]), mlcc_emit_kind_name(o->emit));
      }
    }
  }
  return mlcc_ok_status();
}

static mlcc_status_t resolve_target(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  mlcc_status_t s = mlcc_target_resolve(o->target, o->cpu, o->features, &c->target);
  if (s != NULL && mlcc_status_code(s) == MLCC_STATUS_NOT_FOUND) {
    // A bad --target is a usage error.
    mlcc_status_t usage = mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "%s",
                                           mlcc_status_message(s));
    mlcc_status_free(s);
    return usage;
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Binding jobs
//===----------------------------------------------------------------------===//

typedef struct argv_builder_t {
  const char* argv[64];
  int argc;
} argv_builder_t;

static void push(argv_builder_t* b, const char* arg) {
  if (b->argc < 63 && arg != NULL) b->argv[b->argc++] = arg;
  b->argv[b->argc] = NULL;
}

static void push_cc1(argv_builder_t* b, const char* step) {
  b->argc = 0;
  push(b, "mlcc");
  push(b, "-cc1");
  push(b, step);
}

static void push_target(mlcc_compilation_t* c, argv_builder_t* b) {
  push(b, arena_printf(&c->arena, "--target=%s", c->target.triple));
  push(b, arena_printf(&c->arena, "-mcpu=%s", c->target.cpu));
  push(b, arena_printf(&c->arena, "-mattr=%s", c->target.features));
  push(b, arena_printf(&c->arena, "-O%d", c->options->opt_level));
  push(b, arena_printf(&c->arena, "--name=%s", c->name));
}

static const char* temp_file(mlcc_compilation_t* c, const char* tmpdir, const char* file) {
  return arena_adopt(&c->arena, mlcc_fs_join(tmpdir, file));
}

// Fills c->jobs. |tmpdir| is the real temporary directory, or a placeholder
// for -###. Kernel objects are known only after optimization; the kernel
// job and the archiver show them as "<tmpdir>/mlcc_k_*.o" until then.
static mlcc_status_t bind_jobs(mlcc_compilation_t* c, const char* tmpdir,
                               const char* const* members, uint32_t n_members) {
  const mlcc_options_t* o = c->options;
  mlcc_job_list_init(&c->jobs, &c->arena);
  argv_builder_t b;

  push_cc1(&b, "import");
  push(&b, c->input);
  for (uint32_t i = 0; i < o->n_input_shapes; ++i) {
    mlcc_strbuf_t sb;
    mlcc_strbuf_init(&sb);
    const mlcc_shape_t* sh = &o->input_shapes[i].shape;
    mlcc_strbuf_appendf(&sb, "--input-shape=%s=", o->input_shapes[i].name);
    for (int32_t d = 0; d < sh->rank; ++d) {
      mlcc_strbuf_appendf(&sb, d ? "x%lld" : "%lld", (long long)sh->dims[d]);
    }
    push(&b, arena_adopt(&c->arena, mlcc_strbuf_take(&sb)));
  }
  for (uint32_t i = 0; i < o->n_input_values; ++i) {
    push(&b, arena_printf(&c->arena, "--input-value=%s", o->input_values[i].origin));
  }
  MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_IMPORT, false, b.argv));

  push_cc1(&b, "optimize");
  push(&b, arena_printf(&c->arena, "-O%d", o->opt_level));
  {
    mlcc_strbuf_t sb;
    mlcc_strbuf_init(&sb);
    mlcc_strbuf_append(&sb, "--passes=");
    for (uint32_t i = 0; i < c->n_passes; ++i) {
      mlcc_strbuf_appendf(&sb, i ? ",%s" : "%s", mlcc_pass_name(c->passes[i]));
    }
    push(&b, arena_adopt(&c->arena, mlcc_strbuf_take(&sb)));
  }
  if (o->verify_each) push(&b, "--verify-each");
  if (o->print_after_all) push(&b, "--print-after-all");
  push(&b, arena_printf(&c->arena, "--target=%s", c->target.triple));
  MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_OPTIMIZE, false, b.argv));

  switch (o->emit) {
    case MLCC_EMIT_IR:
    case MLCC_EMIT_DOT:
      push_cc1(&b, "emit-graph");
      push(&b, arena_printf(&c->arena, "--emit=%s", mlcc_emit_kind_name(o->emit)));
      if (o->emit == MLCC_EMIT_DOT && o->dot_all_constants) push(&b, "--dot-all-constants");
      push(&b, "-o");
      push(&b, c->output);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_EMIT_GRAPH, false, b.argv));
      break;
    case MLCC_EMIT_LL:
    case MLCC_EMIT_ASM: {
      // The parts as separate texts through the kernel cache, then joined.
      const char* kind = mlcc_emit_kind_name(o->emit);
      const char* ext = o->emit == MLCC_EMIT_LL ? "ll" : "s";
      char file[300];
      snprintf(file, sizeof(file), "%s_weights.%s", c->name, ext);
      const char* weights = temp_file(c, tmpdir, file);
      snprintf(file, sizeof(file), "%s_entry.%s", c->name, ext);
      const char* entry = temp_file(c, tmpdir, file);
      snprintf(file, sizeof(file), "mlcc_k_*.%s", ext);
      const char* kernels_pattern = temp_file(c, tmpdir, file);
      if (!kernels_pattern || !weights || !entry) return oom();
      push_cc1(&b, "codegen-weights");
      push(&b, arena_printf(&c->arena, "--emit=%s", kind));
      push_target(c, &b);
      push(&b, "-o");
      push(&b, weights);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_WEIGHTS, false, b.argv));
      push_cc1(&b, "codegen-kernels");
      push(&b, arena_printf(&c->arena, "--emit=%s", kind));
      push_target(c, &b);
      push(&b, arena_printf(&c->arena, "-j%d", o->jobs));
      push(&b, "-o");
      push(&b, kernels_pattern);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_KERNELS, false, b.argv));
      push_cc1(&b, "codegen-entry");
      push(&b, arena_printf(&c->arena, "--emit=%s", kind));
      push_target(c, &b);
      if (o->profile) push(&b, "--profile");
      push(&b, "-o");
      push(&b, entry);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_ENTRY, false, b.argv));
      push_cc1(&b, "join");
      push(&b, arena_printf(&c->arena, "--emit=%s", kind));
      push(&b, entry);
      push(&b, weights);
      push(&b, kernels_pattern);
      push(&b, "-o");
      push(&b, c->output);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_JOIN, false, b.argv));
      break;
    }
    case MLCC_EMIT_OBJ:
      // -c is one whole module only without a linker (mlcc_compilation_create).
      if (!c->obj_whole) goto kernel_objects;
      push_cc1(&b, "codegen");
      push(&b, arena_printf(&c->arena, "--emit=%s", mlcc_emit_kind_name(o->emit)));
      push_target(c, &b);
      push(&b, "-o");
      push(&b, c->output);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_WHOLE, false, b.argv));
      if (o->emit == MLCC_EMIT_OBJ && c->header_path != NULL) {
        push_cc1(&b, "header");
        push(&b, arena_printf(&c->arena, "--name=%s", c->name));
        push(&b, c->input);
        push(&b, "-o");
        push(&b, c->header_path);
        MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_HEADER, false, b.argv));
      }
      break;
    case MLCC_EMIT_HEADER:
      push_cc1(&b, "header");
      push(&b, arena_printf(&c->arena, "--name=%s", c->name));
      push(&b, c->input);
      push(&b, "-o");
      push(&b, c->output);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_HEADER, false, b.argv));
      break;
    case MLCC_EMIT_LIB:
    kernel_objects: {
      char file[300];
      const char* kernels_pattern = temp_file(c, tmpdir, "mlcc_k_*.o");
      snprintf(file, sizeof(file), "%s_weights.o", c->name);
      const char* weights = temp_file(c, tmpdir, file);
      snprintf(file, sizeof(file), "%s_entry.o", c->name);
      const char* entry = temp_file(c, tmpdir, file);
      c->archive_tmp = temp_file(c, tmpdir, mlcc_fs_basename(c->output));
      if (!kernels_pattern || !weights || !entry || !c->archive_tmp) return oom();

      push_cc1(&b, "codegen-weights");
      push_target(c, &b);
      push(&b, "-o");
      push(&b, weights);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_WEIGHTS, false, b.argv));

      push_cc1(&b, "codegen-kernels");
      push_target(c, &b);
      push(&b, arena_printf(&c->arena, "-j%d", o->jobs));
      push(&b, "-o");
      push(&b, kernels_pattern);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_KERNELS, false, b.argv));

      push_cc1(&b, "codegen-entry");
      push_target(c, &b);
      if (o->profile) push(&b, "--profile");
      push(&b, "-o");
      push(&b, entry);
      MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_CODEGEN_ENTRY, false, b.argv));

      const char* placeholder[3] = {entry, weights, kernels_pattern};
      const char** argv =
          o->emit == MLCC_EMIT_OBJ
              ? mlcc_archive_link_argv(c->ld_tool, c->archive_tmp, members ? members : placeholder,
                               members ? n_members : 3)
              : mlcc_archive_argv(c->ar_tool, c->archive_tmp, members ? members : placeholder,
                                  members ? n_members : 3);
      if (argv == NULL) return oom();
      mlcc_status_t s = mlcc_job_list_add(&c->jobs, MLCC_JOB_ARCHIVE, true, argv);
      free(argv);
      MLCC_RETURN_IF_ERROR(s);

      if (c->header_path != NULL) {  // NULL when the output is a device
        push_cc1(&b, "header");
        push(&b, arena_printf(&c->arena, "--name=%s", c->name));
        push(&b, c->input);
        push(&b, "-o");
        push(&b, c->header_path);
        MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_HEADER, false, b.argv));
      }
      break;
    }
    case MLCC_EMIT_KIND_COUNT: break;
  }

  if (c->depfile_path != NULL) {
    push_cc1(&b, "depfile");
    for (uint32_t i = 0; i < o->n_dep_targets && i < 16; ++i) {
      push(&b, o->dep_targets[i].quote ? "-MQ" : "-MT");
      push(&b, o->dep_targets[i].text);
    }
    if (o->n_dep_targets == 0) {
      push(&b, "-MQ");
      push(&b, c->output);
    }
    if (o->dep_phony) push(&b, "-MP");
    push(&b, "-o");
    push(&b, c->depfile_path);
    MLCC_RETURN_IF_ERROR(mlcc_job_list_add(&c->jobs, MLCC_JOB_DEPFILE, false, b.argv));
  }
  return mlcc_ok_status();
}

// The kernel cache settings: flags, then the environment (driver/cache.h).
// A bad size or URL is a usage error; a missing home folder only turns the
// local cache off (with a note under -v).
static mlcc_status_t resolve_cache(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  MLCC_RETURN_IF_ERROR(mlcc_cache_resolve_max_size(o->cache_max_size, &c->cache_max_size));
  if (o->no_cache || !kernel_pipeline(c)) return mlcc_ok_status();
  char* dir = NULL;
  mlcc_status_t s = mlcc_cache_resolve_dir(o->cache_dir, &dir);
  if (s != NULL && mlcc_status_code(s) == MLCC_STATUS_INVALID_ARGUMENT) return s;
  if (s != NULL) {
    if (o->verbose) {
      fprintf(c->diag, "mlcc: note: kernel cache disabled: %s\n", mlcc_status_message(s));
    }
    mlcc_status_free(s);
  } else {
    c->cache_dir = arena_adopt(&c->arena, dir);
    if (c->cache_dir == NULL) return oom();
    c->use_cache = true;
  }
  MLCC_RETURN_IF_ERROR(mlcc_cache_config_load(c->cache_dir, o->cache_max_size, c->diag,
                                              &c->cache_config));
  c->cache_max_size = c->cache_config.max_size;
  const char* url = o->remote_cache;
  if (url == NULL) {
    url = getenv("MLCC_REMOTE_CACHE");
    if (url != NULL && url[0] == '\0') url = NULL;
  }
  if (url != NULL) {
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
      char shown[512];
      mlcc_remote_redact_url(url, shown, sizeof(shown));  // never print credentials
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "invalid remote cache URL '%s' (%s); expected "
                              "http://host:port[/instance]",
                              shown, o->remote_cache ? "--remote-cache" : "$MLCC_REMOTE_CACHE");
    }
    c->remote_url = url;
    const char* ro = getenv("MLCC_REMOTE_CACHE_READONLY");
    c->remote_read_only = o->remote_cache_readonly ||
                          (ro != NULL && ro[0] != '\0' && strcmp(ro, "0") != 0);
    // Issue 14: a key that cannot be loaded is a usage error, never "unsigned".
    const char* key_path = o->remote_cache_key;
    if (key_path == NULL) {
      key_path = getenv("MLCC_REMOTE_CACHE_KEY");
      if (key_path != NULL && key_path[0] == '\0') key_path = NULL;
    }
    if (key_path != NULL) MLCC_RETURN_IF_ERROR(mlcc_remote_key_load(key_path, &c->remote_key));
  }
  return mlcc_ok_status();
}

mlcc_status_t mlcc_compilation_create(const mlcc_options_t* options, FILE* diag,
                                      mlcc_compilation_t** out_compilation) {
  *out_compilation = NULL;
  mlcc_compilation_t* c = (mlcc_compilation_t*)calloc(1, sizeof(*c));
  if (c == NULL) return oom();
  *out_compilation = c;
  c->options = options;
  c->diag = diag;
  mlcc_arena_init(&c->arena);
  c->input = options->input;
  if (c->input == NULL) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT, "no input model");
  }
  MLCC_RETURN_IF_ERROR(resolve_paths(c));
  MLCC_RETURN_IF_ERROR(resolve_target(c));
  MLCC_RETURN_IF_ERROR(resolve_pipeline(c));
  c->ar_tool = arena_adopt(&c->arena, mlcc_archive_tool());
  c->ld_tool = arena_adopt(&c->arena, mlcc_archive_linker());
  if (c->ar_tool == NULL || c->ld_tool == NULL) return oom();
  const char* ld_env = getenv("MLCC_LD");
  bool ld_given = ld_env != NULL && ld_env[0] != '\0';
  if (options->emit == MLCC_EMIT_OBJ && !ld_given && strchr(c->ld_tool, '/') == NULL) {
    // No ld.lld in $PATH and no $MLCC_LD: -c still works, as one module
    // compiled whole, without the kernel cache (install lld-16 for it).
    c->obj_whole = true;
    if (options->verbose) {
      fprintf(diag, "mlcc: note: no linker to join the kernel objects (ld.lld-16, ld.lld or "
                    "$MLCC_LD): -c compiles the whole model without the kernel cache\n");
    }
  }
  return resolve_cache(c);
}

static void print_target(mlcc_compilation_t* c) {
  fprintf(c->diag, "Target: %s\nCPU: %s\nFeatures: %s\n", c->target.triple, c->target.cpu,
          c->target.features);
}

mlcc_status_t mlcc_compilation_print_jobs(mlcc_compilation_t* c) {
  char* placeholder = mlcc_fs_join(c->out_dir, ".mlcc-tmp-XXXXXX");
  if (placeholder == NULL) return oom();
  mlcc_status_t s = bind_jobs(c, placeholder, NULL, 0);
  free(placeholder);
  MLCC_RETURN_IF_ERROR(s);
  fprintf(c->diag, "mlcc version %s\n", MLCC_VERSION);
  print_target(c);
  for (uint32_t i = 0; i < c->jobs.n_jobs; ++i) {
    mlcc_job_print_argv(c->diag, c->jobs.jobs[i].argv);
  }
  return mlcc_ok_status();
}

//===----------------------------------------------------------------------===//
// Running jobs
//===----------------------------------------------------------------------===//

static mlcc_status_t add_member(mlcc_compilation_t* c, const char* path) {
  if (c->n_members == c->members_cap) {
    uint32_t cap = c->members_cap ? c->members_cap * 2 : 16;
    const char** m = (const char**)mlcc_arena_alloc(&c->arena, cap * sizeof(char*),
                                                    _Alignof(char*));
    if (m == NULL) return oom();
    if (c->n_members) memcpy(m, c->members, c->n_members * sizeof(char*));
    c->members = m;
    c->members_cap = cap;
  }
  c->members[c->n_members++] = path;
  return mlcc_ok_status();
}

static mlcc_status_t stage(mlcc_compilation_t* c, const char* path, const void* data,
                           size_t size) {
  if (c->n_staged >= kMaxStaged) return mlcc_make_status(MLCC_STATUS_INTERNAL, "too many outputs");
  sigset_t old;
  mlcc_cleanup_block(&old);  // no signal between creating the temporary and registering it
  mlcc_status_t s = mlcc_fs_stage(path, data, size, &c->staged[c->n_staged]);
  if (s == NULL) {
    mlcc_cleanup_add_file(c->staged[c->n_staged].tmp_path);
    c->n_staged++;
  }
  mlcc_cleanup_unblock(&old);
  return s;
}

// Writes a finished output: standard output for "-", else staged.
static mlcc_status_t emit_output(mlcc_compilation_t* c, const void* data, size_t size) {
  if (strcmp(c->output, "-") == 0) {
    if (fwrite(data, 1, size, stdout) != size || fflush(stdout) != 0) {
      return mlcc_make_status(MLCC_STATUS_IO, "cannot write to standard output");
    }
    return mlcc_ok_status();
  }
  return stage(c, c->output, data, size);
}

static mlcc_status_t run_import_with(mlcc_compilation_t* c, const mlcc_input_value_t* values,
                                     uint32_t n_values);

// Decodes the TensorProto files of --input-value=NAME=@FILE into |values|
// (a copy of the options' bindings; |buffers| receives the malloc'ed
// element buffers, one per binding, NULL for number lists; |data_files| the
// external data file a .pb refers to, or NULL). Errors name the argument.
static mlcc_status_t read_input_value_files(mlcc_compilation_t* c, mlcc_input_value_t* values,
                                            void** buffers, const char** data_files) {
  const mlcc_options_t* o = c->options;
  for (uint32_t i = 0; i < o->n_input_values; ++i) {
    values[i] = o->input_values[i];
    buffers[i] = NULL;
    data_files[i] = NULL;
    if (values[i].file == NULL) continue;
    char* data_file = NULL;
    mlcc_status_t s = mlcc_onnx_read_tensor_file(values[i].file, &values[i].dtype,
                                                 &values[i].shape, &buffers[i],
                                                 &values[i].size, &data_file);
    if (s != NULL) return mlcc_status_annotate(s, "--input-value=%s", values[i].origin);
    values[i].data = buffers[i];
    data_files[i] = data_file == NULL ? NULL : arena_adopt(&c->arena, data_file);
  }
  return mlcc_ok_status();
}

static mlcc_status_t run_import(mlcc_compilation_t* c) {
  MLCC_RETURN_IF_ERROR(mlcc_fs_check_regular_file(c->input));
  uint32_t n_values = c->options->n_input_values;
  mlcc_input_value_t* values = (mlcc_input_value_t*)calloc(n_values ? n_values : 1,
                                                           sizeof(*values));
  void** buffers = (void**)calloc(n_values ? n_values : 1, sizeof(void*));
  const char** data_files = (const char**)calloc(n_values ? n_values : 1, sizeof(char*));
  mlcc_status_t s = values == NULL || buffers == NULL || data_files == NULL
                        ? mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory")
                        : read_input_value_files(c, values, buffers, data_files);
  if (s == NULL) s = run_import_with(c, values, n_values);
  for (uint32_t i = 0; s == NULL && i < n_values; ++i) {  // after the importer's own deps
    if (values[i].file != NULL && c->n_deps < kMaxDeps) c->deps[c->n_deps++] = values[i].file;
    if (data_files[i] != NULL && c->n_deps < kMaxDeps) c->deps[c->n_deps++] = data_files[i];
  }
  if (s == NULL) {
    // External data files are known only now; nothing is written yet.
    const char* inputs[kMaxDeps + 1];
    inputs[0] = c->input;
    for (uint32_t i = 0; i < c->n_deps; ++i) inputs[i + 1] = c->deps[i];
    s = check_outputs_not_inputs(c, inputs, c->n_deps + 1);
  }
  for (uint32_t i = 0; buffers != NULL && i < n_values; ++i) free(buffers[i]);
  free(buffers);
  free(data_files);
  free(values);
  return s;
}

static mlcc_status_t run_import_with(mlcc_compilation_t* c, const mlcc_input_value_t* values,
                                     uint32_t n_values) {
  mlcc_onnx_import_options_t io;
  memset(&io, 0, sizeof(io));
  io.input_shapes = c->options->input_shapes;
  io.n_input_shapes = c->options->n_input_shapes;
  io.input_values = values;
  io.n_input_values = n_values;
  io.out_deps = c->deps;
  io.deps_cap = kMaxDeps;
  io.out_n_deps = &c->n_deps;
  io.out_sha256_hex = c->model_sha256;  // for the header: one read of the file
  mlcc_status_t s = mlcc_onnx_import_file(c->input, &io, &c->graph);
  if (s == NULL && c->graph == NULL) {
    s = mlcc_make_status(MLCC_STATUS_INTERNAL, "the importer returned no graph");
  }
  if (s == NULL) s = mlcc_graph_verify(c->graph, false);
  if (c->n_deps > kMaxDeps) c->n_deps = kMaxDeps;
  return mlcc_status_annotate(s, "%s", c->input);
}

static mlcc_codegen_options_t codegen_options(const mlcc_compilation_t* c);

// --tuning-records=FILE: read once. A missing file is an error unless --tune
// will write it; a malformed one is a warning and no records (a checked-in
// or shared file must not break builds).
static mlcc_status_t load_tuning_file(mlcc_compilation_t* c) {
  const char* path = c->options->tuning_records;
  if (path == NULL || c->options->no_tuning_records) return mlcc_ok_status();
  uint8_t* data = NULL;
  size_t size = 0;
  struct stat st;
  if (stat(path, &st) != 0) {
    if (c->options->tune && errno == ENOENT) return mlcc_ok_status();
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "cannot read the tuning records '%s': %s",
                            path, strerror(errno));
  }
  mlcc_status_t s = mlcc_fs_check_regular_file(path);
  if (s == NULL) s = mlcc_fs_read_file(path, &data, &size);
  if (s != NULL) return s;
  s = mlcc_tune_records_parse((const char*)data, size, &c->tune_file);
  free(data);
  if (s != NULL && mlcc_status_code(s) == MLCC_STATUS_INVALID_MODEL) {
    fprintf(c->diag, "mlcc: warning: %s: %s; no tuning records used from it\n", path,
            mlcc_status_message(s));
    mlcc_status_free(s);
    s = mlcc_ok_status();
  }
  return s;
}

// The remote cache for tuning records (driver/tune.h): its own handle, open
// only while records are looked up or stored (before the kernels' pool
// opens its own).
typedef struct tune_remote_t {
  mlcc_compilation_t* c;
  mlcc_remote_cache_t* remote;
  mlcc_remote_session_t* session;
  bool tried;
} tune_remote_t;

static bool tune_remote_open(tune_remote_t* tr) {
  if (tr->tried) return tr->session != NULL;
  tr->tried = true;
  mlcc_compilation_t* c = tr->c;
  if (!c->use_cache || c->remote_url == NULL) return false;
  mlcc_status_t s = mlcc_remote_cache_open(c->remote_url, c->remote_read_only, &tr->remote);
  if (s != NULL) {
    if (c->options->verbose) {
      fprintf(c->diag, "mlcc: note: remote tuning records off: %s\n", mlcc_status_message(s));
    }
    mlcc_status_free(s);
    return false;
  }
  if (c->remote_key != NULL) mlcc_remote_cache_set_key(tr->remote, c->remote_key);
  tr->session = mlcc_remote_session_create(tr->remote);
  return tr->session != NULL;
}

static void tune_remote_close(tune_remote_t* tr) {
  mlcc_remote_session_destroy(tr->session);
  mlcc_remote_cache_close(tr->remote);
  tr->session = NULL;
  tr->remote = NULL;
}

static bool tune_remote_fetch(void* ctx, const char* key_hex, char** out_text, size_t* out_size) {
  tune_remote_t* tr = ctx;
  *out_text = NULL;
  *out_size = 0;
  if (!tune_remote_open(tr)) return false;
  char rkey[65];
  mlcc_tune_remote_key(key_hex, rkey);
  uint8_t* data = NULL;
  size_t size = 0;
  char why[512];
  mlcc_remote_result_t r = mlcc_remote_cache_get_blob(tr->session, rkey, &data, &size, why,
                                                      sizeof(why));
  if (r != MLCC_REMOTE_HIT) {
    if (r != MLCC_REMOTE_MISS && tr->c->options->explain_cache) {
      fprintf(tr->c->diag, "mlcc: tuning: remote tuning record %.16s: %s\n", key_hex, why);
    }
    free(data);
    return false;
  }
  *out_text = (char*)data;
  *out_size = size;
  return true;
}

static void tune_remote_store(tune_remote_t* tr, const mlcc_tune_record_t* rec) {
  if (!tune_remote_open(tr) || mlcc_remote_cache_read_only(tr->remote)) return;
  mlcc_tune_records_t one = {(mlcc_tune_record_t*)rec, 1, 1};
  char* text = mlcc_tune_records_format(&one);
  if (text == NULL) return;
  for (int which = 0; which < 2; ++which) {
    if (which == 1 && rec->features[0] == '\0') break;
    char rkey[65];
    mlcc_tune_remote_key(which == 0 ? rec->cpu_key : rec->key, rkey);
    mlcc_status_t s = mlcc_remote_cache_put(tr->session, rkey, text, strlen(text));
    if (s != NULL) {
      fprintf(tr->c->diag, "mlcc: warning: cannot upload a tuning record: %s\n",
              mlcc_status_message(s));
      mlcc_status_free(s);
    }
  }
  free(text);
}

// The import job's --input-* arguments (shapes and values; borrowed from
// c->jobs), at most |cap| of them, into |out|; returns how many.
static uint32_t import_input_args(const mlcc_compilation_t* c, const char** out, uint32_t cap) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < c->jobs.n_jobs; ++i) {
    const mlcc_job_t* j = &c->jobs.jobs[i];
    if (j->kind != MLCC_JOB_IMPORT) continue;
    for (uint32_t a = 3; a < j->argc && n < cap; ++a) {
      if (strncmp(j->argv[a], "--input-", 8) == 0) out[n++] = j->argv[a];
    }
  }
  return n;
}

// --tune (driver/tune_run.h): measures, then stores the records in the
// local cache and adds them to c->tune_file (written back to
// --tuning-records=FILE when given), where apply_tuning finds them.
static mlcc_status_t run_tune(mlcc_compilation_t* c, const mlcc_codegen_options_t* cg) {
  const mlcc_options_t* o = c->options;
  const char* args[136];
  uint32_t n = import_input_args(c, args, 128);
  if (o->passes != NULL) args[n++] = arena_printf(&c->arena, "--passes=%s", o->passes);
  if (o->winograd_given) args[n++] = o->no_winograd ? "-fno-winograd" : "-fwinograd";
  for (uint32_t i = 0; i < n; ++i) {
    if (args[i] == NULL) return oom();
  }
  mlcc_tempdir_t work = {0};
  MLCC_RETURN_IF_ERROR(mlcc_tempdir_create(mlcc_fs_temp_root(), &work));
  mlcc_tune_config_t cfg = {
      .input = c->input,
      .build_args = args,
      .n_build_args = n,
      .cache_dir = c->use_cache ? c->cache_dir : NULL,
      .runner = o->tune_runner,
      .trials = o->tune_trials > 0 ? o->tune_trials : 12,
      .seconds = o->tune_time > 0 ? o->tune_time : 300,
      .jobs = o->jobs > 0 ? o->jobs : 2,
      .verbose = o->verbose,
      .diag = c->diag,
      .work_dir = work.path,
  };
  mlcc_tune_records_t found = {0};
  mlcc_status_t s = mlcc_tune_search(c->graph, cg, &cfg, &found);
  mlcc_tempdir_remove(&work);
  for (uint32_t i = 0; s == NULL && i < found.n; ++i) {
    s = mlcc_tune_records_add(&c->tune_file, &found.items[i]);
    if (s == NULL && c->use_cache && !c->cache_config.read_only) {
      mlcc_status_t w = mlcc_tune_cache_store(c->cache_dir, &found.items[i]);
      if (w != NULL) {
        fprintf(c->diag, "mlcc: warning: cannot store a tuning record in %s: %s\n",
                c->cache_dir, mlcc_status_message(w));
        mlcc_status_free(w);
      }
    }
  }
  tune_remote_t tr = {.c = c};
  for (uint32_t i = 0; s == NULL && i < found.n && c->use_cache && c->remote_url != NULL; ++i) {
    tune_remote_store(&tr, &found.items[i]);
  }
  tune_remote_close(&tr);
  mlcc_tune_records_deinit(&found);
  if (s == NULL && o->tuning_records != NULL) {
    char* text = mlcc_tune_records_format(&c->tune_file);
    if (text == NULL) return oom();
    s = mlcc_fs_write_atomic(o->tuning_records, text, strlen(text));
    free(text);
  }
  return s;
}

// Gives the tunable kernels their recorded schedules (driver/tune.h); never
// measures anything, so ordinary builds stay reproducible.
static mlcc_status_t apply_tuning(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  if (o->no_tuning_records) return mlcc_ok_status();
  MLCC_RETURN_IF_ERROR(load_tuning_file(c));
  mlcc_codegen_options_t cg = codegen_options(c);
  // The remote is asked for records only on request: each tunable kernel
  // costs a request, which a build that never tunes should not pay.
  const char* env = getenv("MLCC_REMOTE_TUNING_RECORDS");
  bool remote_records = c->use_cache && c->remote_url != NULL &&
                        (o->remote_tuning_records ||
                         (env != NULL && env[0] != '\0' && strcmp(env, "0") != 0));
  tune_remote_t tr = {.c = c};
  mlcc_tune_lookup_t lk = {
      .file = &c->tune_file,
      .cache_dir = c->use_cache ? c->cache_dir : NULL,
      .diag = c->diag,
      .explain = o->explain_cache,
      .remote_fetch = remote_records ? tune_remote_fetch : NULL,
      .remote_ctx = &tr,
  };
  if (o->tune) MLCC_RETURN_IF_ERROR(run_tune(c, &cg));
  uint32_t applied = 0;
  mlcc_tune_records_deinit(&c->tune_used);
  mlcc_status_t as = mlcc_tune_apply(c->graph, &cg, &lk, &c->tune_used, &applied);
  tune_remote_close(&tr);
  MLCC_RETURN_IF_ERROR(as);
  MLCC_RETURN_IF_ERROR(mlcc_tune_records_digest(&c->tune_used, c->tune_digest));
  if (o->verbose && applied > 0) {
    fprintf(c->diag, "mlcc: %u kernel%s tuned by records (digest %.16s)\n", applied,
            applied == 1 ? "" : "s", c->tune_digest);
  }
  return mlcc_ok_status();
}

static mlcc_status_t run_optimize(mlcc_compilation_t* c) {
  mlcc_pass_ctx_t ctx;
  memset(&ctx, 0, sizeof(ctx));
  ctx.opt_level = c->options->opt_level;
  ctx.target = &c->target;
  ctx.verify_each = c->options->verify_each;
  ctx.print_after_all = c->options->print_after_all ? stderr : NULL;
  ctx.fold_constants = true;
  // Microcontrollers default to direct convolutions: Winograd's transformed
  // weights cost flash (ic_resnet8: +53%) and its panels stack (docs/mcu.md).
  ctx.no_winograd = c->options->winograd_given ? c->options->no_winograd
                                               : mlcc_target_is_bare_metal(&c->target);
  mlcc_status_t s = mlcc_pass_run_pipeline(&ctx, c->graph, c->passes, c->n_passes);
  // NAME_STACK_SIZE: a microcontroller's own bound (targets/codegen/stack.h).
  if (s == NULL && mlcc_target_is_bare_metal(&c->target)) {
    c->graph->stack_size = mlcc_stack_size_for_target(c->graph, &c->target);
  }
  if (s == NULL && (emits_objects(c->options->emit) || c->options->emit == MLCC_EMIT_HEADER)) {
    s = mlcc_graph_verify(c->graph, true);
  }
  if (s == NULL && c->graph->n_kernels > 0) s = apply_tuning(c);
  return mlcc_status_annotate(s, "%s", c->input);
}

static mlcc_status_t run_emit_graph(mlcc_compilation_t* c) {
  FILE* f = tmpfile();
  if (f == NULL) return mlcc_make_status(MLCC_STATUS_IO, "cannot create a temporary file");
  if (c->options->emit == MLCC_EMIT_DOT) {
    mlcc_dot_options_t dot = {.all_constants = c->options->dot_all_constants};
    mlcc_graph_print_dot_with(c->graph, f, &dot);
  } else {
    mlcc_graph_print(c->graph, f);
  }
  char* data = NULL;
  size_t size = 0;
  mlcc_status_t s = mlcc_fs_read_stream(f, &data, &size);
  fclose(f);
  if (s == NULL) s = emit_output(c, data, size);
  free(data);
  return s;
}

static mlcc_codegen_options_t codegen_options(const mlcc_compilation_t* c) {
  mlcc_codegen_options_t cg;
  memset(&cg, 0, sizeof(cg));
  cg.target = &c->target;
  cg.opt_level = c->options->opt_level;
  cg.name = c->name;
  cg.profile = c->options->profile;
  cg.weights_section = c->options->weights_section;
  return cg;
}

static mlcc_status_t run_codegen_whole(mlcc_compilation_t* c) {
  mlcc_codegen_options_t cg = codegen_options(c);
  mlcc_buffer_t buf = {0};
  mlcc_status_t s = mlcc_codegen_whole(c->graph, &cg, MLCC_OUTPUT_OBJECT, &buf);
  // -c without a linker compiles every kernel into one module, without the cache.
  c->n_kernels_total = c->n_kernels_distinct = c->n_kernels_compiled = c->graph->n_kernels;
  s = mlcc_status_annotate(s, "%s", c->input);
  if (s == NULL) s = mlcc_fs_sha256_buffer(buf.data, buf.size, c->whole_sha256);
  // A -c object compiled whole: its sections are the RAM/flash figures.
  if (s == NULL) {
    memset(&c->whole_size, 0, sizeof(c->whole_size));
    mlcc_status_t z = mlcc_objsize_add_buffer(buf.data, buf.size, &c->whole_size);
    c->whole_size_known = z == NULL;
    mlcc_status_free(z);
  }
  if (s == NULL) s = emit_output(c, buf.data, buf.size);
  mlcc_buffer_deinit(&buf);
  return s;
}

// Codegen output written into the temporary directory and added as an
// archive member.
static mlcc_status_t write_member(mlcc_compilation_t* c, const char* path, mlcc_buffer_t* buf) {
  mlcc_status_t s = mlcc_fs_write_file(path, buf->data, buf->size);
  mlcc_buffer_deinit(buf);
  MLCC_RETURN_IF_ERROR(s);
  return add_member(c, path);
}

// The end of a codegen step that produced |buf|: its error annotated with
// the model, or |buf| written to |path| as a member.
static mlcc_status_t finish_member(mlcc_compilation_t* c, mlcc_status_t s, const char* path,
                                   mlcc_buffer_t* buf) {
  if (s != NULL) {
    mlcc_buffer_deinit(buf);
    return mlcc_status_annotate(s, "%s", c->input);
  }
  return write_member(c, path, buf);
}

static void verbose_job(mlcc_compilation_t* c, mlcc_job_kind_t kind) {
  if (!c->options->verbose) return;
  for (uint32_t i = 0; i < c->jobs.n_jobs; ++i) {
    if (c->jobs.jobs[i].kind == kind) mlcc_job_print_argv(c->diag, c->jobs.jobs[i].argv);
  }
}

static mlcc_status_t run_codegen_weights(mlcc_compilation_t* c, const char* path) {
  mlcc_codegen_options_t cg = codegen_options(c);
  if (part_kind(c) != MLCC_OUTPUT_OBJECT) {  // -S / --emit=ll|asm: through LLVM
    mlcc_buffer_t buf = {0};
    return finish_member(c, mlcc_codegen_weights(c->graph, &cg, part_kind(c), &buf), path, &buf);
  }
  // Written straight to |path| by the ELF writer (no copy of the blob).
  mlcc_status_t s = mlcc_codegen_weights_write_object(c->graph, &cg, path);
  if (s != NULL) return mlcc_status_annotate(s, "%s", c->input);
  return add_member(c, path);
}

static mlcc_cache_t* local_cache(mlcc_compilation_t* c);

// The entry object in the local store, under a store key derived like the
// kernels' (the code generator's key + mlcc's identity).
static bool entry_cache_lookup(void* ctx, const char key_hex[65], mlcc_buffer_t* out) {
  mlcc_compilation_t* c = (mlcc_compilation_t*)ctx;
  char store_key[65];
  mlcc_cache_store_key(key_hex, store_key);
  uint8_t* data = NULL;
  size_t size = 0;
  char why[256];
  mlcc_cache_result_t r = mlcc_cache_lookup(c->cache, store_key, &data, &size, why, sizeof(why));
  if (r == MLCC_CACHE_DAMAGED && c->options->verbose) {
    fprintf(c->diag, "mlcc: note: entry object: %s; rebuilding it\n", why);
  }
  if (r != MLCC_CACHE_HIT) return false;
  // Issue 14: the entry object is checked like a kernel (object_check.h).
  mlcc_object_expect_t expect;
  mlcc_status_t s = mlcc_object_expect_for_target(&c->target, MLCC_OBJECT_ENTRY, c->name, &expect);
  if (s == NULL) s = mlcc_object_check(data, size, &expect);
  if (s != NULL) {
    fprintf(c->diag, "mlcc: warning: the cached entry object %s: rejected and rebuilt\n",
            mlcc_status_message(s));
    mlcc_status_free(s);
    mlcc_cache_count_rejected(c->cache, true);
    free(data);
    return false;
  }
  out->data = data;
  out->size = size;
  c->entry_origin = 2;
  return true;
}

static void entry_cache_store(void* ctx, const char key_hex[65], const mlcc_buffer_t* object) {
  mlcc_compilation_t* c = (mlcc_compilation_t*)ctx;
  char store_key[65];
  mlcc_cache_store_key(key_hex, store_key);
  mlcc_status_t s = mlcc_cache_store(c->cache, store_key, object->data, object->size);
  if (s != NULL) {
    fprintf(c->diag, "mlcc: warning: cannot store the entry object in the cache: %s\n",
            mlcc_status_message(s));
    mlcc_status_free(s);
  }
}

static mlcc_status_t run_codegen_entry(mlcc_compilation_t* c, const char* path) {
  mlcc_codegen_options_t cg = codegen_options(c);
  mlcc_object_cache_t hooks = {c, entry_cache_lookup, entry_cache_store};
  // The entry is not a kernel: its text (-S / --emit=ll|asm) is built each time.
  if (part_kind(c) == MLCC_OUTPUT_OBJECT && local_cache(c) != NULL) cg.entry_cache = &hooks;
  c->entry_origin = part_kind(c) == MLCC_OUTPUT_OBJECT ? 1 : 0;
  mlcc_buffer_t buf = {0};
  return finish_member(c, mlcc_codegen_entry(c->graph, &cg, part_kind(c), &buf), path, &buf);
}

// The local store, shared by the kernels and the entry object; closed (stats
// and LRU clean-up) by mlcc_compilation_destroy. NULL when off or unusable.
static mlcc_cache_t* local_cache(mlcc_compilation_t* c) {
  if (c->use_cache && !c->cache_opened) {
    c->cache_opened = true;
    mlcc_status_t s = mlcc_cache_open_with(c->cache_dir, &c->cache_config, &c->cache);
    if (s != NULL) {
      fprintf(c->diag, "mlcc: warning: kernel cache disabled: %s\n", mlcc_status_message(s));
      mlcc_status_free(s);
    }
  }
  return c->cache;
}

static mlcc_cache_t* local_cache_hook(void* ctx) {
  return local_cache((mlcc_compilation_t*)ctx);
}

// The distinct kernels through the kernel pool (kernel_pool.h), each file
// added to the output's members.
static mlcc_status_t run_codegen_kernels(mlcc_compilation_t* c) {
  mlcc_kernel_pool_options_t o;
  memset(&o, 0, sizeof(o));
  o.graph = c->graph;
  o.target = &c->target;
  o.codegen = codegen_options(c);
  o.kind = part_kind(c);
  o.dir = c->tempdir.path;
  o.jobs = (uint32_t)c->options->jobs;
  o.diag = c->diag;
  o.verbose = c->options->verbose;
  o.explain_cache = c->options->explain_cache;
  o.local_cache = local_cache_hook;
  o.local_cache_ctx = c;
  o.remote_url = c->remote_url;
  o.remote.timeout_ms = c->cache_config.remote_timeout_ms;
  o.remote.budget_ms = c->cache_config.remote_budget_ms;
  o.remote.max_errors = c->cache_config.remote_max_errors;
  o.remote.read_only = c->remote_read_only;
  o.remote_key = c->remote_key;
  c->n_kernels_total = c->graph->n_kernels;
  mlcc_kernel_pool_result_t r;
  mlcc_status_t s = mlcc_kernel_pool_run(&o, &c->arena, &r);
  for (uint32_t i = 0; i < r.n_distinct && s == NULL; ++i) s = add_member(c, r.paths[i]);
  c->n_kernels_distinct = r.n_distinct;
  c->n_kernels_compiled += r.n_compiled;
  c->n_cache_hits += r.n_cache_hits;
  c->n_remote_hits += r.n_remote_hits;
  return mlcc_status_annotate(s, "%s", c->input);
}

// -S / --emit=ll|asm: the entry, weights and kernel texts (c->members, in
// that order after run_codegen_entry) joined into the output.
static mlcc_status_t run_join(mlcc_compilation_t* c) {
  mlcc_buffer_t* parts = (mlcc_buffer_t*)calloc(c->n_members ? c->n_members : 1, sizeof(*parts));
  if (parts == NULL) return oom();
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; i < c->n_members && s == NULL; ++i) {
    s = mlcc_fs_read_file(c->members[i], &parts[i].data, &parts[i].size);
  }
  mlcc_buffer_t out = {0};
  if (s == NULL) s = mlcc_codegen_join_text(part_kind(c), parts, c->n_members, &out);
  for (uint32_t i = 0; i < c->n_members; ++i) mlcc_buffer_deinit(&parts[i]);
  free(parts);
  if (s == NULL) s = mlcc_fs_sha256_buffer(out.data, out.size, c->whole_sha256);
  if (s == NULL) s = emit_output(c, out.data, out.size);
  mlcc_buffer_deinit(&out);
  return mlcc_status_annotate(s, "%s", c->input);
}

static mlcc_status_t run_archive(mlcc_compilation_t* c) {
  // llvm-ar derives its own temporary from the archive path with every '%'
  // replaced by a random character (LLVM's createUniqueFile), so it fails in
  // a folder named like Jenkins' "feature%2Fx". Then the archiver runs inside
  // the temporary directory with bare file names (they hold no '%' there).
  bool in_tmp = strchr(c->tempdir.path, '%') != NULL;
  const char* archive = c->archive_tmp;
  const char** members = c->members;
  if (in_tmp) {
    archive = mlcc_fs_basename(c->archive_tmp);
    members = (const char**)mlcc_arena_alloc(&c->arena, (c->n_members + 1) * sizeof(char*),
                                             _Alignof(char*));
    if (members == NULL) return oom();
    for (uint32_t i = 0; i < c->n_members; ++i) members[i] = mlcc_fs_basename(c->members[i]);
  }
  // Re-bind the archiver (linker) job now that the members are known, for -v.
  bool link = c->options->emit == MLCC_EMIT_OBJ;
  const char** argv = link ? mlcc_archive_link_argv(c->ld_tool, archive, members, c->n_members)
                           : mlcc_archive_argv(c->ar_tool, archive, members, c->n_members);
  if (argv == NULL) return oom();
  if (c->options->verbose) {
    if (in_tmp) fprintf(c->diag, " cd \"%s\" &&", c->tempdir.path);
    mlcc_job_print_argv(c->diag, argv);
  }
  mlcc_status_t s = mlcc_job_spawn_in(argv, in_tmp ? c->tempdir.path : NULL);
  free(argv);
  if (s != NULL) {
    bool not_found = mlcc_status_code(s) == MLCC_STATUS_NOT_FOUND;
    mlcc_status_t r = mlcc_make_status(mlcc_status_code(s), "cannot create '%s': %s%s",
                                       c->output, mlcc_status_message(s),
                                       !not_found ? ""
                                       : link ? " (set $MLCC_LD to choose the linker; -c joins "
                                                "the objects with ld.lld -r)"
                                              : " (set $MLCC_AR to choose the archiver)");
    mlcc_status_free(s);
    return r;
  }
  if (strcmp(c->output, "-") == 0) {  // -c -o -: the joined object to standard output
    uint8_t* data = NULL;
    size_t size = 0;
    MLCC_RETURN_IF_ERROR(mlcc_fs_read_file(c->archive_tmp, &data, &size));
    s = emit_output(c, data, size);
    free(data);
    return s;
  }
  if (c->n_staged >= kMaxStaged) return mlcc_make_status(MLCC_STATUS_INTERNAL, "too many outputs");
  MLCC_RETURN_IF_ERROR(mlcc_fs_stage_existing(c->archive_tmp, c->output, &c->staged[c->n_staged]));
  c->n_staged++;
  return mlcc_ok_status();
}

static mlcc_status_t run_header(mlcc_compilation_t* c) {
  // No model hash in the header: weights that change leave its bytes alone.
  char* text = NULL;
  mlcc_status_t s = mlcc_header_render(c->graph, c->name, mlcc_fs_basename(c->input), NULL, &text);
  if (s == NULL && c->options->profile) s = mlcc_header_add_profile(c->name, &text);
  if (s != NULL) {
    free(text);
    return mlcc_status_annotate(s, "%s", c->input);
  }
  bool beside = uses_kernel_objects(c->options->emit);  // NAME.h beside the lib / object
  const char* path = beside ? c->header_path : c->output;
  s = mlcc_fs_sha256_buffer(text, strlen(text), c->header_sha256);  // for --describe
  if (s == NULL) {
    s = beside ? stage(c, path, text, strlen(text)) : emit_output(c, text, strlen(text));
  }
  free(text);
  return s;
}

// The two numbers a microcontroller build is sized by (docs/mcu.md), for -v
// and --describe. RAM = workspace + NAME_STACK_SIZE + static data; flash =
// code + read-only data (the weights blob) + initialized data, summed over
// the archive's members (or the sections of a -c object compiled whole).
typedef struct memory_figures_t {
  mlcc_objsize_t sz;
  uint64_t weights, ram, flash;
  int64_t workspace, stack;
} memory_figures_t;

// False when the objects' sizes are unknown (no objects, an unreadable one).
static bool memory_figures(const mlcc_compilation_t* c, memory_figures_t* out) {
  memset(out, 0, sizeof(*out));
  if (c->obj_whole) {
    if (!c->whole_size_known) return false;
    out->sz = c->whole_size;
  } else {
    if (c->n_members == 0) return false;
    for (uint32_t i = 0; i < c->n_members; ++i) {
      mlcc_status_t s = mlcc_objsize_add_file(c->members[i], &out->sz);
      if (s != NULL) {
        mlcc_status_free(s);
        return false;
      }
    }
  }
  size_t weights = 0;
  mlcc_status_free(mlcc_codegen_weights_size(c->graph, &weights));
  out->weights = weights;
  out->stack = mlcc_stack_size(c->graph);
  out->workspace = c->graph->workspace_size > 0 ? c->graph->workspace_size : 0;
  out->ram = (uint64_t)(out->workspace + out->stack) + out->sz.data + out->sz.bss;
  out->flash = out->sz.code + out->sz.rodata + out->sz.data;
  return true;
}

// --describe: the variant's facts as JSON (driver/describe.h), staged like
// the other outputs. Runs after the archive (or link) and the header.
static mlcc_status_t run_describe(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  char lib_sha[65], model_sha[65];
  if (c->obj_whole) {
    memcpy(lib_sha, c->whole_sha256, sizeof(lib_sha));
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_fs_sha256_file(c->archive_tmp, lib_sha));
  }
  if (strlen(c->model_sha256) == 64) {
    memcpy(model_sha, c->model_sha256, sizeof(model_sha));
  } else {
    MLCC_RETURN_IF_ERROR(mlcc_fs_sha256_file(c->input, model_sha));
  }
  struct stat st;
  if (stat(c->input, &st) != 0) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot stat '%s': %s", c->input, strerror(errno));
  }
  // The options besides target, CPU, features and -O that change the code.
  const char* opts[136];
  uint32_t n = import_input_args(c, opts, 128);
  if (o->passes != NULL) opts[n++] = arena_printf(&c->arena, "--passes=%s", o->passes);
  if (o->no_winograd) opts[n++] = "-fno-winograd";
  if (o->profile) opts[n++] = "--profile";
  for (uint32_t i = 0; i < n; ++i) {
    if (opts[i] == NULL) return oom();
  }
  mlcc_describe_info_t info = {
      .name = c->name,
      .model_file = mlcc_fs_basename(c->input),
      .model_sha256 = model_sha,
      .model_size = (uint64_t)st.st_size,
      .target = &c->target,
      .opt_level = o->opt_level,
      .options = opts,
      .n_options = n,
      .library_sha256 = lib_sha,
      .header_sha256 = c->header_sha256,
      .tuning_records_sha256 = c->tune_digest,
  };
  memory_figures_t mem;
  if (!memory_figures(c, &mem)) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "%s: no section sizes for --describe",
                            c->input);
  }
  info.weights_size = mem.weights;
  info.code_size = mem.sz.code;
  info.ram_size = mem.ram;
  info.flash_size = mem.flash;
  char* text = NULL;
  mlcc_status_t s = mlcc_describe_render(c->graph, &info, &text);
  if (s == NULL) s = stage(c, o->describe, text, strlen(text));
  free(text);
  return mlcc_status_annotate(s, "%s", c->input);
}

static mlcc_status_t run_depfile(mlcc_compilation_t* c) {
  const char* deps[kMaxDeps + 2];
  deps[0] = c->input;
  for (uint32_t i = 0; i < c->n_deps; ++i) deps[i + 1] = c->deps[i];
  uint32_t n_deps = c->n_deps + 1;
  // The records file changes the code: a new record set rebuilds the library.
  const char* records = c->options->tuning_records;
  if (records != NULL && !c->options->no_tuning_records) deps[n_deps++] = records;
  // -MT/-MQ in command-line order, else the output (escaped), as gcc does.
  const mlcc_options_t* o = c->options;
  mlcc_depfile_target_t one = {c->output, true};
  mlcc_depfile_target_t* targets = &one;
  size_t n_targets = 1;
  if (o->n_dep_targets > 0) {
    targets = (mlcc_depfile_target_t*)mlcc_arena_alloc(
        &c->arena, o->n_dep_targets * sizeof(*targets), _Alignof(mlcc_depfile_target_t));
    if (targets == NULL) return oom();
    for (uint32_t i = 0; i < o->n_dep_targets; ++i) {
      targets[i].text = o->dep_targets[i].text;
      targets[i].quote = o->dep_targets[i].quote;
    }
    n_targets = o->n_dep_targets;
  }
  char* text = NULL;
  MLCC_RETURN_IF_ERROR(mlcc_depfile_render_rule(targets, n_targets, deps, n_deps,
                                                o->dep_phony, &text));
  mlcc_status_t s = stage(c, c->depfile_path, text, strlen(text));
  free(text);
  return s;
}

// -ftime-report: wall clock and CPU time (this process and the archiver it
// waited for) at one instant, in seconds.
typedef struct phase_clock_t {
  double wall;
  double cpu;
} phase_clock_t;

static double timeval_seconds(struct timeval tv) {
  return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static phase_clock_t phase_clock_now(void) {
  phase_clock_t t = {0.0, 0.0};
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0) t.wall = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
  struct rusage self, children;
  if (getrusage(RUSAGE_SELF, &self) == 0 && getrusage(RUSAGE_CHILDREN, &children) == 0) {
    t.cpu = timeval_seconds(self.ru_utime) + timeval_seconds(self.ru_stime) +
            timeval_seconds(children.ru_utime) + timeval_seconds(children.ru_stime);
  }
  return t;
}

static void time_report_line(FILE* f, const char* what, phase_clock_t from, phase_clock_t to) {
  fprintf(f, "mlcc: time %-16s %8.3f s wall %8.3f s cpu\n", what, to.wall - from.wall,
          to.cpu - from.cpu);
}

// Creates the output and depfile folders and, for a library, the temporary
// folder (|*tmpdir|), registering each for removal on an interrupt. Called
// with the interrupt signals blocked.
static mlcc_status_t setup_outputs(mlcc_compilation_t* c, const char** tmpdir) {
  if (strcmp(c->output, "-") != 0) {
    MLCC_RETURN_IF_ERROR(mlcc_fs_mkdirs(c->out_dir, c->created_dirs, 32, &c->n_created_dirs));
  }
  if (c->depfile_path != NULL) {
    char* dep_dir = mlcc_fs_dirname(c->depfile_path);
    if (dep_dir == NULL) return oom();
    mlcc_status_t s = mlcc_fs_mkdirs(dep_dir, c->created_dirs, 32, &c->n_created_dirs);
    free(dep_dir);
    MLCC_RETURN_IF_ERROR(s);
  }
  for (uint32_t i = 0; i < c->n_created_dirs; ++i) mlcc_cleanup_add_empty_dir(c->created_dirs[i]);
  // What runs killed by SIGKILL left where this run writes (driver/fsutil.h).
  mlcc_fs_remove_stale_temporaries(c->out_dir);
  if (c->depfile_path != NULL) {
    char* dep_dir = mlcc_fs_dirname(c->depfile_path);
    if (dep_dir != NULL && strcmp(dep_dir, c->out_dir) != 0) {
      mlcc_fs_remove_stale_temporaries(dep_dir);
    }
    free(dep_dir);
  }
  if (kernel_pipeline(c)) {
    MLCC_RETURN_IF_ERROR(mlcc_tempdir_create(c->out_dir, &c->tempdir));
    *tmpdir = c->tempdir.path;
    mlcc_cleanup_add_dir_tree(c->tempdir.path);
  }
  return mlcc_ok_status();
}

static void print_memory_figures(const mlcc_compilation_t* c) {
  memory_figures_t m;
  if (!memory_figures(c, &m)) return;
  fprintf(c->diag,
          "mlcc: RAM %llu bytes (workspace %lld, stack %lld, static %llu); "
          "flash %llu bytes (code %llu, weights %llu, other read-only %llu, data %llu)\n",
          (unsigned long long)m.ram, (long long)m.workspace, (long long)m.stack,
          (unsigned long long)(m.sz.data + m.sz.bss), (unsigned long long)m.flash,
          (unsigned long long)m.sz.code, (unsigned long long)m.weights,
          (unsigned long long)(m.sz.rodata > m.weights ? m.sz.rodata - m.weights : 0),
          (unsigned long long)m.sz.data);
}

mlcc_status_t mlcc_compilation_execute(mlcc_compilation_t* c) {
  const mlcc_options_t* o = c->options;
  const char* tmpdir = ".";
  // Output folders are created like ninja does (and removed again on failure),
  // with the interrupt signals held until they and the temporary folder are
  // registered for removal (driver/cleanup.h).
  sigset_t old_mask;
  mlcc_cleanup_block(&old_mask);
  mlcc_status_t setup = setup_outputs(c, &tmpdir);
  mlcc_cleanup_unblock(&old_mask);
  MLCC_RETURN_IF_ERROR(setup);
  MLCC_RETURN_IF_ERROR(bind_jobs(c, tmpdir, NULL, 0));
  if (o->verbose) {
    fprintf(c->diag, "mlcc version %s (LLVM %s)\n", MLCC_VERSION, mlcc_codegen_llvm_version());
    print_target(c);
  }
  // The object paths, as bound for the codegen jobs.
  const char* weights_path = NULL;
  const char* entry_path = NULL;
  for (uint32_t i = 0; i < c->jobs.n_jobs; ++i) {
    const mlcc_job_t* j = &c->jobs.jobs[i];
    if (j->kind == MLCC_JOB_CODEGEN_WEIGHTS) weights_path = j->argv[j->argc - 1];
    if (j->kind == MLCC_JOB_CODEGEN_ENTRY) entry_path = j->argv[j->argc - 1];
  }
  phase_clock_t start = phase_clock_now();
  for (uint32_t i = 0; i < c->jobs.n_jobs; ++i) {
    mlcc_job_kind_t kind = c->jobs.jobs[i].kind;
    phase_clock_t before = o->time_report ? phase_clock_now() : start;
    if (kind != MLCC_JOB_ARCHIVE && kind != MLCC_JOB_CODEGEN_KERNELS) verbose_job(c, kind);
    mlcc_status_t s = mlcc_ok_status();
    switch (kind) {
      case MLCC_JOB_IMPORT: s = run_import(c); break;
      case MLCC_JOB_OPTIMIZE: s = run_optimize(c); break;
      case MLCC_JOB_EMIT_GRAPH: s = run_emit_graph(c); break;
      case MLCC_JOB_CODEGEN_WHOLE: s = run_codegen_whole(c); break;
      case MLCC_JOB_CODEGEN_WEIGHTS: s = run_codegen_weights(c, weights_path); break;
      case MLCC_JOB_CODEGEN_KERNELS: s = run_codegen_kernels(c); break;
      case MLCC_JOB_CODEGEN_ENTRY: {
        // The entry goes first in the archive; weights second; kernels after.
        s = run_codegen_entry(c, entry_path);
        if (s == NULL && c->n_members > 0) {
          const char* last = c->members[c->n_members - 1];
          memmove(&c->members[1], &c->members[0], (c->n_members - 1) * sizeof(char*));
          c->members[0] = last;
        }
        // The store's last user: statistics and LRU clean-up now.
        mlcc_cache_close(c->cache);
        c->cache = NULL;
        break;
      }
      case MLCC_JOB_ARCHIVE: s = run_archive(c); break;
      case MLCC_JOB_JOIN: s = run_join(c); break;
      case MLCC_JOB_HEADER: s = run_header(c); break;
      case MLCC_JOB_DEPFILE:
        // The description goes before the depfile: the depfile is published last.
        if (o->describe != NULL) s = run_describe(c);
        if (s == NULL) s = run_depfile(c);
        break;
      case MLCC_JOB_KIND_COUNT: break;
    }
    MLCC_RETURN_IF_ERROR(s);
    if (o->time_report) time_report_line(c->diag, mlcc_job_kind_name(kind), before, phase_clock_now());
  }
  if (o->describe != NULL && c->depfile_path == NULL) MLCC_RETURN_IF_ERROR(run_describe(c));
  // Everything succeeded: publish the outputs (output, header, depfile last).
  for (uint32_t i = 0; i < c->n_staged; ++i) {
    mlcc_cleanup_remove(c->staged[i].tmp_path);
    MLCC_RETURN_IF_ERROR(mlcc_fs_staged_commit(&c->staged[i]));
  }
  c->n_staged = 0;
  c->committed = true;
  if (o->time_report) time_report_line(c->diag, "total (jobs)", start, phase_clock_now());
  if (o->verbose && c->graph != NULL) {
    if (emits_objects(o->emit)) {
      fprintf(c->diag, "mlcc: %u kernel%s compiled", c->n_kernels_compiled,
              c->n_kernels_compiled == 1 ? "" : "s");
      uint32_t hits = c->n_cache_hits + c->n_remote_hits;
      if (hits != 0) {
        fprintf(c->diag, ", %u from the cache", hits);
        if (c->n_remote_hits != 0) fprintf(c->diag, " (%u remote)", c->n_remote_hits);
      }
      if (c->n_kernels_total != c->n_kernels_distinct) {
        fprintf(c->diag, " for %u kernel groups (%u shared)", c->n_kernels_total,
                c->n_kernels_total - c->n_kernels_distinct);
      }
      fprintf(c->diag, "\n");
      if (c->entry_origin != 0) {
        fprintf(c->diag, "mlcc: entry object %s\n",
                c->entry_origin == 2 ? "from the cache" : "compiled");
      }
    }
    fprintf(c->diag, "mlcc: workspace %lld bytes (align %lld)",
            (long long)c->graph->workspace_size, (long long)c->graph->workspace_align);
    int64_t naive = 0, peak = 0;
    mlcc_status_t ws = mlcc_pass_plan_memory_stats(c->graph, &naive, &peak);
    if (ws == NULL) {
      fprintf(c->diag, "; naive sum of intermediates %lld, largest live set %lld",
              (long long)naive, (long long)peak);
    }
    mlcc_status_free(ws);
    fprintf(c->diag, "\n");
    print_memory_figures(c);
  }
  return mlcc_ok_status();
}

void mlcc_compilation_destroy(mlcc_compilation_t* c) {
  if (c == NULL) return;
  mlcc_tune_records_deinit(&c->tune_file);
  mlcc_tune_records_deinit(&c->tune_used);
  mlcc_cache_close(c->cache);  // a failed run: still count its lookups
  mlcc_remote_key_destroy(c->remote_key);
  for (uint32_t i = 0; i < c->n_staged; ++i) {
    mlcc_cleanup_remove(c->staged[i].tmp_path);
    mlcc_fs_staged_discard(&c->staged[i]);
  }
  mlcc_cleanup_remove(c->tempdir.path);
  mlcc_tempdir_remove(&c->tempdir);
  for (uint32_t i = 0; i < c->n_created_dirs; ++i) mlcc_cleanup_remove(c->created_dirs[i]);
  if (c->committed) {
    for (uint32_t i = 0; i < c->n_created_dirs; ++i) free(c->created_dirs[i]);
  } else {
    mlcc_fs_remove_dirs(c->created_dirs, c->n_created_dirs);
  }
  if (c->graph != NULL) mlcc_graph_destroy(c->graph);
  mlcc_arena_deinit(&c->arena);
  free(c);
}
