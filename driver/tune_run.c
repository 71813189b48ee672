// SPDX-License-Identifier: Apache-2.0
// `mlcc --tune`: candidate libraries, the measuring harness and the search
// (driver/tune_run.h).
#include "driver/tune_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver/fsutil.h"
#include "driver/strbuf.h"
#include "ir/ops.h"
#include "targets/kernels/kernels.h"
#include "targets/target.h"

extern char** environ;

enum {
  kMaxPoints = 256,     // points of one kernel's space considered
  kMaxBatch = 4,        // candidate libraries per batch
  kRounds = 3,          // interleaved measuring rounds per batch
  kMaxArgs = 192,
};
static const double kWinRatio = 0.97;     // at least 3% faster to win
static const double kPruneRatio = 1.30;   // dropped after round 1 when slower

#define MODEL_NAME "mlcc_tune_model"

// The harness: NAME_run on deterministic inputs, per-kernel minima (the
// steadiest statistic on a loaded machine: preemption only adds time).
// Usage: harness MIN_RUNS MAX_RUNS MIN_MS OUTFILE
static const char kHarness[] =
    "#define _POSIX_C_SOURCE 200809L\n"
    "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <time.h>\n"
    "#include \"" MODEL_NAME ".h\"\n"
    "static uint64_t rs = 0x9E3779B97F4A7C15ull;\n"
    "static double frand(void) {\n"
    "  rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;\n"
    "  return (double)(rs >> 11) / 4503599627370496.0 - 1.0;\n"
    "}\n"
    "static double now_ms(void) {\n"
    "  struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);\n"
    "  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;\n"
    "}\n"
    "static int cmp64(const void* a, const void* b) {\n"
    "  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b; return (x > y) - (x < y);\n"
    "}\n"
    "int main(int argc, char** argv) {\n"
    "  if (argc != 5) return 2;\n"
    "  const mlcc_model_info_t* info = &" MODEL_NAME "_info;\n"
    "  int min_runs = atoi(argv[1]), max_runs = atoi(argv[2]);\n"
    "  double min_ms = atof(argv[3]);\n"
    "  if (min_runs < 1 || max_runs < min_runs || info->num_inputs > 64 || info->num_outputs > 64) return 2;\n"
    "  const void* in[64]; void* out[64];\n"
    "  for (int i = 0; i < info->num_inputs; ++i) {\n"
    "    size_t n = (size_t)info->inputs[i].size_bytes;\n"
    "    unsigned char* p = calloc(n ? n : 1, 1); if (!p) return 2;\n"
    "    int64_t ne = 1; for (int d = 0; d < info->inputs[i].rank; ++d) ne *= info->inputs[i].dims[d];\n"
    "    if (info->inputs[i].dtype == 1) for (int64_t e = 0; e < ne; ++e) ((float*)p)[e] = (float)frand();\n"
    "    if (info->inputs[i].dtype == 11) for (int64_t e = 0; e < ne; ++e) ((double*)p)[e] = frand();\n"
    "    in[i] = p;\n"
    "  }\n"
    "  for (int i = 0; i < info->num_outputs; ++i) {\n"
    "    out[i] = calloc((size_t)info->outputs[i].size_bytes + 1, 1); if (!out[i]) return 2;\n"
    "  }\n"
    "  size_t al = info->workspace_align > 0 ? (size_t)info->workspace_align : 64;\n"
    "  size_t ws_n = ((size_t)info->workspace_size + al - 1) / al * al;\n"
    "  void* ws = aligned_alloc(al, ws_n ? ws_n : al); if (!ws) return 2;\n"
    "  for (int r = 0; r < 2; ++r) if (info->run(in, out, ws) != 0) return 3;\n"
    "  const mlcc_profile_entry_t* rows = NULL;\n"
    "  int32_t nk = " MODEL_NAME "_profile(&rows);\n"
    "  int64_t* d = malloc(sizeof(int64_t) * (size_t)max_runs * (size_t)(nk > 0 ? nk : 1));\n"
    "  int64_t* prev = malloc(sizeof(int64_t) * (size_t)(nk > 0 ? nk : 1));\n"
    "  int64_t* col = malloc(sizeof(int64_t) * (size_t)max_runs);\n"
    "  if (!d || !prev || !col) return 2;\n"
    "  int runs = 0; double t0 = now_ms();\n"
    "  while (runs < max_runs) {\n"
    "    for (int k = 0; k < nk; ++k) prev[k] = rows[k].ns;\n"
    "    if (info->run(in, out, ws) != 0) return 3;\n"
    "    for (int k = 0; k < nk; ++k) d[(size_t)runs * nk + k] = rows[k].ns - prev[k];\n"
    "    ++runs;\n"
    "    if (runs >= min_runs && now_ms() - t0 >= min_ms) break;\n"
    "  }\n"
    "  printf(\"runs %d\\n\", runs);\n"
    "  for (int k = 0; k < nk; ++k) {\n"
    "    for (int r = 0; r < runs; ++r) col[r] = d[(size_t)r * nk + k];\n"
    "    qsort(col, (size_t)runs, sizeof(int64_t), cmp64);\n"
    "    printf(\"k %d %lld\\n\", k, (long long)col[0]);\n"
    "  }\n"
    "  FILE* f = fopen(argv[4], \"wb\"); if (!f) return 4;\n"
    "  for (int i = 0; i < info->num_outputs; ++i)\n"
    "    if (fwrite(out[i], 1, (size_t)info->outputs[i].size_bytes, f) != (size_t)info->outputs[i].size_bytes) return 4;\n"
    "  if (fclose(f) != 0) return 4;\n"
    "  return 0;\n"
    "}\n";

// One distinct tunable kernel.
typedef struct tkernel_t {
  char cpu_key[65], key[65];
  const mlcc_node_t* anchor;
  uint32_t n_points;
  int32_t (*points)[MLCC_SCHED_MAX_PARAMS];
  bool* tried;
  uint32_t n_tried;
  uint32_t best;             // index into points
  int64_t best_ns, default_ns;
  uint32_t n_wins;
} tkernel_t;

// One library: a schedule per tunable kernel (index into its points).
typedef struct cand_t {
  uint32_t* pick;            // per tkernel
  char dir[4096];
  char prog[4096];
  bool built, failed;
  int64_t* ns;               // per tkernel, this run
  double* ratios;            // per tkernel x round
  uint32_t n_ratio_rounds;
  bool pruned, wrong;
} cand_t;

typedef struct tuner_t {
  const mlcc_graph_t* graph;
  const mlcc_codegen_options_t* cg;
  const mlcc_tune_config_t* cfg;
  tkernel_t* ks;
  uint32_t n_ks;
  uint32_t* group_of;        // per graph kernel: tkernel index or UINT32_MAX
  uint32_t seq;              // numbering of candidate folders
  char cc[512];
  uint8_t* ref_out;          // the default's outputs
  size_t ref_out_size;
  uint32_t n_libs;
} tuner_t;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

// Starts |argv| with stdout and stderr to |log| (created). Returns the pid or
// -1 (|*err| set).
static pid_t start(const char* const* argv, const char* log, int* err) {
  posix_spawn_file_actions_t fa;
  *err = posix_spawn_file_actions_init(&fa);
  if (*err != 0) return -1;
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = -1;
  *err = posix_spawnp(&pid, argv[0], &fa, NULL, (char* const*)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return *err == 0 ? pid : -1;
}

// Waits for |pid|; 0 when it exited with 0, else a non-zero code.
static int finish(pid_t pid) {
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(ws)) return WEXITSTATUS(ws);
  return 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

static int run_logged(const char* const* argv, const char* log) {
  int err = 0;
  pid_t pid = start(argv, log, &err);
  return pid < 0 ? -1 : finish(pid);
}

// The first line(s) of |log| for an error message (static buffer).
static const char* log_head(const char* log) {
  static char buf[600];
  buf[0] = '\0';
  FILE* f = fopen(log, "rb");
  if (f == NULL) return buf;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  for (size_t i = 0; i < n; ++i) {
    if (buf[i] == '\n' && i + 1 < n) buf[i] = ';';
  }
  if (n > 0 && buf[n - 1] == '\n') buf[n - 1] = '\0';
  return buf;
}

// The schedules of |picks| as a record set file for the child build.
static mlcc_status_t write_sched_file(tuner_t* t, const uint32_t* picks, const char* path) {
  mlcc_tune_records_t set = {0};
  const mlcc_target_t* tg = t->cg->target;
  mlcc_status_t s = mlcc_ok_status();
  for (uint32_t i = 0; i < t->n_ks && s == NULL; ++i) {
    mlcc_tune_record_t r;
    memset(&r, 0, sizeof(r));
    memcpy(r.key, t->ks[i].key, 65);
    memcpy(r.cpu_key, t->ks[i].cpu_key, 65);
    snprintf(r.triple, sizeof(r.triple), "%s", tg->triple);
    snprintf(r.cpu, sizeof(r.cpu), "%s", tg->cpu);
    snprintf(r.features, sizeof(r.features), "%s", tg->features);
    snprintf(r.op, sizeof(r.op), "%s", mlcc_op_name(t->ks[i].anchor->op));
    const mlcc_sched_space_t* sp = mlcc_sched_space(t->ks[i].anchor);
    r.space_version = sp ? sp->version : 0;
    memcpy(r.sched, t->ks[i].points[picks[i]], sizeof(r.sched));
    s = mlcc_tune_records_add(&set, &r);
  }
  char* text = s == NULL ? mlcc_tune_records_format(&set) : NULL;
  if (s == NULL && text == NULL) s = oom();
  if (s == NULL) s = mlcc_fs_write_file(path, text, strlen(text));
  free(text);
  mlcc_tune_records_deinit(&set);
  return s;
}

// Child build argv for |c| (strings in |strs|, freed by the caller).
static uint32_t build_argv(tuner_t* t, cand_t* c, const char** argv, char (*strs)[4200]) {
  const mlcc_target_t* tg = t->cg->target;
  uint32_t n = 0, ns = 0;
  argv[n++] = "/proc/self/exe";
  snprintf(strs[ns], sizeof(strs[ns]), "--target=%s", tg->triple);
  argv[n++] = strs[ns++];
  snprintf(strs[ns], sizeof(strs[ns]), "-mcpu=%s", tg->cpu);
  argv[n++] = strs[ns++];
  if (tg->features[0] != '\0') {
    snprintf(strs[ns], sizeof(strs[ns]), "-mattr=%s", tg->features);
    argv[n++] = strs[ns++];
  }
  snprintf(strs[ns], sizeof(strs[ns]), "-O%d", t->cg->opt_level);
  argv[n++] = strs[ns++];
  for (uint32_t i = 0; i < t->cfg->n_build_args && n < kMaxArgs - 16; ++i) {
    argv[n++] = t->cfg->build_args[i];
  }
  argv[n++] = "--profile";
  argv[n++] = "--name=" MODEL_NAME;
  argv[n++] = "-j1";
  snprintf(strs[ns], sizeof(strs[ns]), "--tuning-records=%s/sched.json", c->dir);
  argv[n++] = strs[ns++];
  if (t->cfg->cache_dir != NULL) {
    snprintf(strs[ns], sizeof(strs[ns]), "--cache-dir=%s", t->cfg->cache_dir);
    argv[n++] = strs[ns++];
  } else {
    argv[n++] = "--no-cache";
  }
  argv[n++] = "-o";
  snprintf(strs[ns], sizeof(strs[ns]), "%s/lib" MODEL_NAME ".a", c->dir);
  argv[n++] = strs[ns++];
  argv[n++] = t->cfg->input;
  argv[n] = NULL;
  return n;
}

// Builds the candidates |cs| (their folders, libraries and programs), up to
// cfg->jobs at once. A failure marks the candidate failed.
static mlcc_status_t build_all(tuner_t* t, cand_t* cs, uint32_t n_cs) {
  const char* argv[kMaxArgs];
  static char strs[8][4200];
  pid_t pids[kMaxBatch + 1];
  // Library builds in parallel.
  for (uint32_t i = 0; i < n_cs; ++i) {
    cand_t* c = &cs[i];
    snprintf(c->dir, sizeof(c->dir), "%s/c%u", t->cfg->work_dir, t->seq++);
    if (mkdir(c->dir, 0700) != 0) {
      return mlcc_make_status(MLCC_STATUS_IO, "cannot create '%s': %s", c->dir, strerror(errno));
    }
    char path[4300];
    snprintf(path, sizeof(path), "%s/sched.json", c->dir);
    MLCC_RETURN_IF_ERROR(write_sched_file(t, c->pick, path));
  }
  uint32_t next = 0, done = 0;
  uint32_t running_idx[kMaxBatch + 1];
  uint32_t n_running = 0;
  int jobs = t->cfg->jobs < 1 ? 1 : (t->cfg->jobs > kMaxBatch ? kMaxBatch : t->cfg->jobs);
  while (done < n_cs) {
    while (next < n_cs && (int)n_running < jobs) {
      cand_t* c = &cs[next];
      build_argv(t, c, argv, strs);
      char log[4300];
      snprintf(log, sizeof(log), "%s/build.log", c->dir);
      int err = 0;
      pid_t pid = start(argv, log, &err);
      if (pid < 0) {
        c->failed = true;
        ++done;
      } else {
        pids[n_running] = pid;
        running_idx[n_running++] = next;
      }
      ++next;
    }
    if (n_running == 0) continue;
    // Wait for the oldest (builds are similar in length).
    int rc = finish(pids[0]);
    cand_t* c = &cs[running_idx[0]];
    c->failed = rc != 0;
    if (rc != 0) {
      char log[4300];
      snprintf(log, sizeof(log), "%s/build.log", c->dir);
      fprintf(t->cfg->diag, "mlcc: warning: --tune: a candidate build failed: %s\n",
              log_head(log));
    }
    memmove(pids, pids + 1, (n_running - 1) * sizeof(pids[0]));
    memmove(running_idx, running_idx + 1, (n_running - 1) * sizeof(running_idx[0]));
    --n_running;
    ++done;
  }
  // Link each with the harness (quick; serial).
  for (uint32_t i = 0; i < n_cs; ++i) {
    cand_t* c = &cs[i];
    if (c->failed) continue;
    char src[4300], lib[4300], log[4300], inc[4300];
    snprintf(src, sizeof(src), "%s/harness.c", c->dir);
    snprintf(lib, sizeof(lib), "%s/lib" MODEL_NAME ".a", c->dir);
    snprintf(log, sizeof(log), "%s/link.log", c->dir);
    snprintf(inc, sizeof(inc), "-I%s", c->dir);
    snprintf(c->prog, sizeof(c->prog), "%s/measure", c->dir);
    MLCC_RETURN_IF_ERROR(mlcc_fs_write_file(src, kHarness, strlen(kHarness)));
    const char* la[] = {t->cc, "-O1", "-std=c11", inc, src, lib, "-lm", "-o", c->prog, NULL};
    int rc = run_logged(la, log);
    if (rc != 0) {
      return mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                              "--tune: cannot link the measuring program with '%s' (set "
                              "MLCC_TUNE_CC to the target's C compiler): %s",
                              t->cc, log_head(log));
    }
    c->built = true;
    ++t->n_libs;
  }
  return mlcc_ok_status();
}

// Runs |c|'s program once; fills c->ns per tkernel. |out| receives the
// outputs file path. False when the run failed (message in |why|).
static bool measure(tuner_t* t, cand_t* c, const char** why) {
  static char buf[600];
  char outp[4300], log[4300];
  snprintf(outp, sizeof(outp), "%s/out.bin", c->dir);
  snprintf(log, sizeof(log), "%s/run.log", c->dir);
  const char* argv[12];
  uint32_t n = 0;
  char cmd[4600];
  if (t->cfg->runner != NULL) {
    snprintf(cmd, sizeof(cmd), "%s \"$@\"", t->cfg->runner);
    argv[n++] = "/bin/sh";
    argv[n++] = "-c";
    argv[n++] = cmd;
    argv[n++] = "sh";
  }
  argv[n++] = c->prog;
  argv[n++] = "3";
  argv[n++] = "200";
  argv[n++] = t->cfg->runner != NULL ? "300" : "60";
  argv[n++] = outp;
  argv[n] = NULL;
  int rc = run_logged(argv, log);
  if (rc != 0) {
    snprintf(buf, sizeof(buf), "exit %d: %s", rc, log_head(log));
    *why = buf;
    return false;
  }
  FILE* f = fopen(log, "r");
  if (f == NULL) {
    *why = "no output";
    return false;
  }
  for (uint32_t i = 0; i < t->n_ks; ++i) c->ns[i] = 0;
  char line[256];
  uint32_t rows = 0;
  while (fgets(line, sizeof(line), f) != NULL) {
    unsigned k = 0;
    long long ns = 0;
    if (sscanf(line, "k %u %lld", &k, &ns) == 2) {
      ++rows;
      if (k < t->graph->n_kernels && t->group_of[k] != UINT32_MAX) c->ns[t->group_of[k]] += ns;
    }
  }
  fclose(f);
  if (rows != t->graph->n_kernels) {
    *why = "the profile rows do not match the model's kernels";
    return false;
  }
  return true;
}

static bool read_outputs(const cand_t* c, uint8_t** data, size_t* size) {
  char outp[4300];
  snprintf(outp, sizeof(outp), "%s/out.bin", c->dir);
  return mlcc_fs_read_file(outp, data, size) == NULL;
}

// The candidate's outputs against the default's (graph output dtypes).
static bool outputs_match(tuner_t* t, const cand_t* c) {
  uint8_t* got = NULL;
  size_t size = 0;
  if (!read_outputs(c, &got, &size)) return false;
  bool ok = size == t->ref_out_size;
  size_t off = 0;
  for (uint32_t o = 0; ok && o < t->graph->n_outputs; ++o) {
    const mlcc_value_t* v = t->graph->outputs[o];
    size_t bytes = mlcc_value_byte_size(v);
    if (off + bytes > size) {
      ok = false;
      break;
    }
    if (v->dtype == MLCC_DTYPE_F32) {
      for (size_t i = 0; i + 4 <= bytes; i += 4) {
        float a, b;
        memcpy(&a, got + off + i, 4);
        memcpy(&b, t->ref_out + off + i, 4);
        if (isnan(a) && isnan(b)) continue;
        if (!(fabsf(a - b) <= 1e-4f + 1e-3f * fabsf(b))) {
          ok = false;
          break;
        }
      }
    } else if (memcmp(got + off, t->ref_out + off, bytes) != 0) {
      ok = false;
    }
    off += bytes;
  }
  free(got);
  return ok;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// The next untried point of |k|: a neighbour of its best (one parameter
// changed, nearest value first), else the first untried point.
static bool next_point(tkernel_t* k, uint32_t* out) {
  const int32_t* b = k->points[k->best];
  int64_t best_d = INT64_MAX;
  uint32_t best_i = UINT32_MAX;
  for (uint32_t i = 0; i < k->n_points; ++i) {
    if (k->tried[i]) continue;
    int diff = 0;
    int64_t d = 0;
    for (int p = 0; p < MLCC_SCHED_MAX_PARAMS; ++p) {
      if (k->points[i][p] != b[p]) {
        ++diff;
        d += llabs((long long)k->points[i][p] - b[p]);
      }
    }
    if (diff == 1 && d < best_d) {
      best_d = d;
      best_i = i;
    }
  }
  if (best_i == UINT32_MAX) {
    for (uint32_t i = 0; i < k->n_points && best_i == UINT32_MAX; ++i) {
      if (!k->tried[i]) best_i = i;
    }
  }
  if (best_i == UINT32_MAX) return false;
  *out = best_i;
  return true;
}

static void free_cands(cand_t* cs, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    free(cs[i].pick);
    free(cs[i].ns);
    free(cs[i].ratios);
  }
}

static mlcc_status_t alloc_cand(tuner_t* t, cand_t* c) {
  memset(c, 0, sizeof(*c));
  c->pick = calloc(t->n_ks ? t->n_ks : 1, sizeof(*c->pick));
  c->ns = calloc(t->n_ks ? t->n_ks : 1, sizeof(*c->ns));
  c->ratios = calloc((size_t)(t->n_ks ? t->n_ks : 1) * kRounds, sizeof(*c->ratios));
  if (c->pick == NULL || c->ns == NULL || c->ratios == NULL) return oom();
  return mlcc_ok_status();
}

// Removes the candidate folders c<N>/ of |work| and their files
// ($MLCC_TUNE_KEEP=1 keeps them for a look).
static void remove_candidates(const char* work, uint32_t n) {
  const char* keep = getenv("MLCC_TUNE_KEEP");
  if (keep != NULL && keep[0] == '1') return;
  for (uint32_t i = 0; i < n; ++i) {
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/c%u", work, i);
    DIR* d = opendir(dir);
    if (d == NULL) continue;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      char p[4500];
      snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
      unlink(p);
    }
    closedir(d);
    rmdir(dir);
  }
}

static mlcc_status_t collect_kernels(tuner_t* t) {
  const mlcc_graph_t* g = t->graph;
  t->group_of = calloc(g->n_kernels ? g->n_kernels : 1, sizeof(*t->group_of));
  t->ks = calloc(g->n_kernels ? g->n_kernels : 1, sizeof(*t->ks));
  if (t->group_of == NULL || t->ks == NULL) return oom();
  for (uint32_t k = 0; k < g->n_kernels; ++k) {
    t->group_of[k] = UINT32_MAX;
    const mlcc_kernel_t* kern = &g->kernels[k];
    if (kern->n_nodes == 0 || mlcc_sched_space(kern->nodes[0]) == NULL) continue;
    // A space of one point (a Conv that is not depthwise, say): nothing to measure.
    if (mlcc_sched_enumerate(kern->nodes[0], t->cg->target, NULL, 0) <= 1) continue;
    char cpu_key[65], key[65];
    MLCC_RETURN_IF_ERROR(mlcc_codegen_tune_key(g, k, t->cg, true, cpu_key));
    MLCC_RETURN_IF_ERROR(mlcc_codegen_tune_key(g, k, t->cg, false, key));
    uint32_t found = UINT32_MAX;
    for (uint32_t i = 0; i < t->n_ks; ++i) {
      if (strcmp(t->ks[i].cpu_key, cpu_key) == 0) found = i;
    }
    if (found == UINT32_MAX) {
      tkernel_t* tk = &t->ks[t->n_ks];
      memcpy(tk->cpu_key, cpu_key, 65);
      memcpy(tk->key, key, 65);
      tk->anchor = kern->nodes[0];
      tk->points = calloc(kMaxPoints, sizeof(*tk->points));
      tk->tried = calloc(kMaxPoints, sizeof(*tk->tried));
      if (tk->points == NULL || tk->tried == NULL) return oom();
      uint32_t n = mlcc_sched_enumerate(tk->anchor, t->cg->target, tk->points, kMaxPoints);
      tk->n_points = n > kMaxPoints ? kMaxPoints : n;
      tk->tried[0] = true;  // the default is the first reference
      tk->n_tried = 1;
      found = t->n_ks++;
    }
    t->group_of[k] = found;
  }
  return mlcc_ok_status();
}

static void find_cc(tuner_t* t) {
  const char* env = getenv("MLCC_TUNE_CC");
  mlcc_target_t host;
  bool is_host = false;
  mlcc_status_t s = mlcc_target_resolve(NULL, NULL, NULL, &host);
  if (s == NULL) is_host = strcmp(host.triple, t->cg->target->triple) == 0;
  mlcc_status_free(s);
  if (env != NULL && env[0] != '\0') {
    snprintf(t->cc, sizeof(t->cc), "%s", env);
  } else if (is_host) {
    const char* cc = getenv("CC");
    snprintf(t->cc, sizeof(t->cc), "%s", cc != NULL && cc[0] != '\0' ? cc : "cc");
  } else {
    snprintf(t->cc, sizeof(t->cc), "%s-gcc", t->cg->target->triple);
  }
}

mlcc_status_t mlcc_tune_search(const mlcc_graph_t* graph, const mlcc_codegen_options_t* cg,
                               const mlcc_tune_config_t* cfg, mlcc_tune_records_t* out_records) {
  double t0 = now_s();
  tuner_t t;
  memset(&t, 0, sizeof(t));
  t.graph = graph;
  t.cg = cg;
  t.cfg = cfg;
  if (mlcc_target_is_bare_metal(cg->target)) {
    return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                            "--tune measures on a Linux target; %s has no OS to run the "
                            "measuring program", cg->target->triple);
  }
  find_cc(&t);
  {
    mlcc_target_t host;
    mlcc_status_t s = mlcc_target_resolve(NULL, NULL, NULL, &host);
    bool is_host = s == NULL && strcmp(host.triple, cg->target->triple) == 0;
    mlcc_status_free(s);
    if (!is_host && cfg->runner == NULL) {
      return mlcc_make_status(MLCC_STATUS_INVALID_ARGUMENT,
                              "--tune for the cross target %s needs --tune-runner=CMD (for "
                              "example 'ssh board' or 'qemu-aarch64 -L /usr/aarch64-linux-gnu')",
                              cg->target->triple);
    }
  }
  cand_t ref;
  cand_t batch[kMaxBatch];
  uint32_t n_batch = 0;
  memset(&ref, 0, sizeof(ref));
  mlcc_status_t s = collect_kernels(&t);
  if (s == NULL && t.n_ks == 0) {
    fprintf(cfg->diag, "mlcc: --tune: no tunable kernel in %s\n", cfg->input);
    goto done;
  }
  if (s == NULL) s = alloc_cand(&t, &ref);
  if (s == NULL) s = build_all(&t, &ref, 1);
  if (s == NULL && !ref.built) {
    s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "--tune: the default library did not build");
  }
  const char* why = NULL;
  if (s == NULL && !measure(&t, &ref, &why)) {
    s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                         "--tune: the measuring program failed on the target (%s)", why);
  }
  if (s == NULL && !read_outputs(&ref, &t.ref_out, &t.ref_out_size)) {
    s = mlcc_make_status(MLCC_STATUS_IO, "--tune: the measuring program wrote no outputs");
  }
  if (s == NULL) {
    for (uint32_t i = 0; i < t.n_ks; ++i) t.ks[i].default_ns = t.ks[i].best_ns = ref.ns[i];
  }
  uint32_t trials = cfg->trials > 0 ? (uint32_t)cfg->trials : 1;
  while (s == NULL && now_s() - t0 < cfg->seconds) {
    // A batch: up to jobs candidates, each kernel an untried point.
    int jobs = cfg->jobs < 1 ? 1 : (cfg->jobs > kMaxBatch ? kMaxBatch : cfg->jobs);
    free_cands(batch, n_batch);
    n_batch = 0;
    for (int j = 0; j < jobs && s == NULL; ++j) {
      cand_t c;
      s = alloc_cand(&t, &c);
      if (s != NULL) {
        free_cands(&c, 1);
        break;
      }
      bool any = false;
      for (uint32_t i = 0; i < t.n_ks; ++i) {
        tkernel_t* k = &t.ks[i];
        c.pick[i] = k->best;
        uint32_t p;
        if (k->n_tried < trials && next_point(k, &p)) {
          k->tried[p] = true;
          k->n_tried++;
          c.pick[i] = p;
          any = true;
        }
      }
      if (!any) {
        free_cands(&c, 1);
        break;
      }
      batch[n_batch++] = c;
    }
    if (s != NULL || n_batch == 0) break;
    s = build_all(&t, batch, n_batch);
    if (s != NULL) break;
    // Interleaved rounds: best, candidate j, best, candidate j+1, ...
    for (uint32_t r = 0; r < kRounds && s == NULL; ++r) {
      for (uint32_t j = 0; j < n_batch; ++j) {
        cand_t* c = &batch[j];
        if (!c->built || c->pruned || c->wrong) continue;
        if (!measure(&t, &ref, &why)) {
          s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED,
                               "--tune: the reference program failed (%s)", why);
          break;
        }
        if (!measure(&t, c, &why)) {
          fprintf(cfg->diag, "mlcc: warning: --tune: a candidate failed to run (%s)\n", why);
          c->wrong = true;
          continue;
        }
        if (r == 0 && !outputs_match(&t, c)) {
          fprintf(cfg->diag, "mlcc: warning: --tune: a candidate's outputs differ from the "
                  "default's; its schedules are rejected\n");
          c->wrong = true;
          continue;
        }
        bool all_slow = true;
        for (uint32_t i = 0; i < t.n_ks; ++i) {
          double ratio = ref.ns[i] > 0 ? (double)c->ns[i] / (double)ref.ns[i] : 1.0;
          c->ratios[i * kRounds + r] = ratio;
          if (c->pick[i] != t.ks[i].best && ratio <= kPruneRatio) all_slow = false;
        }
        c->n_ratio_rounds = r + 1;
        if (r == 0 && all_slow) c->pruned = true;
      }
    }
    if (s != NULL) break;
    // Winners: per kernel, the candidate with the lowest median ratio.
    bool improved = false;
    for (uint32_t i = 0; i < t.n_ks; ++i) {
      tkernel_t* k = &t.ks[i];
      double best_ratio = kWinRatio;
      int winner = -1;
      for (uint32_t j = 0; j < n_batch; ++j) {
        cand_t* c = &batch[j];
        if (!c->built || c->pruned || c->wrong || c->pick[i] == k->best ||
            c->n_ratio_rounds == 0) {
          continue;
        }
        double rs[kRounds];
        for (uint32_t r = 0; r < c->n_ratio_rounds; ++r) rs[r] = c->ratios[i * kRounds + r];
        qsort(rs, c->n_ratio_rounds, sizeof(double), cmp_double);
        double med = rs[c->n_ratio_rounds / 2];
        // A winner is faster in every round, not only in the median: with
        // several candidates per batch, one noisy round would otherwise pick
        // a random schedule (the winner's curse of many comparisons).
        if (med < best_ratio && rs[c->n_ratio_rounds - 1] < 1.0) {
          best_ratio = med;
          winner = (int)j;
        }
      }
      if (winner >= 0) {
        k->best = batch[winner].pick[i];
        k->best_ns = (int64_t)llround((double)k->best_ns * best_ratio);
        k->n_wins++;
        improved = true;
      }
    }
    if (cfg->verbose) {
      fprintf(cfg->diag, "mlcc: --tune: batch of %u candidate%s after %.1f s%s\n", n_batch,
              n_batch == 1 ? "" : "s", now_s() - t0, improved ? ": new best schedules" : "");
    }
    if (improved) {
      // The new reference: every kernel at its best.
      cand_t nref;
      s = alloc_cand(&t, &nref);
      if (s == NULL) {
        for (uint32_t i = 0; i < t.n_ks; ++i) nref.pick[i] = t.ks[i].best;
        s = build_all(&t, &nref, 1);
      }
      if (s == NULL && (!nref.built || !measure(&t, &nref, &why))) {
        s = mlcc_make_status(MLCC_STATUS_UNIMPLEMENTED, "--tune: the new reference failed");
      }
      // The winners' times as measured in the new reference, not the product
      // of the batches' ratios (which compounds their noise).
      for (uint32_t i = 0; s == NULL && i < t.n_ks; ++i) {
        // Point 0 is the default (mlcc_sched_enumerate).
        if (t.ks[i].best != 0 && nref.ns[i] > 0) t.ks[i].best_ns = nref.ns[i];
      }
      free_cands(&ref, 1);
      ref = nref;
    }
  }
  if (s == NULL) {
    const mlcc_target_t* tg = cg->target;
    uint32_t n_better = 0;
    for (uint32_t i = 0; i < t.n_ks && s == NULL; ++i) {
      tkernel_t* k = &t.ks[i];
      mlcc_tune_record_t r;
      memset(&r, 0, sizeof(r));
      memcpy(r.key, k->key, 65);
      memcpy(r.cpu_key, k->cpu_key, 65);
      snprintf(r.triple, sizeof(r.triple), "%s", tg->triple);
      snprintf(r.cpu, sizeof(r.cpu), "%s", tg->cpu);
      snprintf(r.features, sizeof(r.features), "%s", tg->features);
      snprintf(r.op, sizeof(r.op), "%s", mlcc_op_name(k->anchor->op));
      const mlcc_sched_space_t* sp = mlcc_sched_space(k->anchor);
      r.space_version = sp ? sp->version : 0;
      memcpy(r.sched, k->points[k->best], sizeof(r.sched));
      r.time_ns = k->best_ns;
      r.default_time_ns = k->default_ns;
      if (k->best != 0) ++n_better;
      s = mlcc_tune_records_add(out_records, &r);
      if (cfg->verbose || k->best != 0) {
        char desc[96];
        mlcc_sched_format(k->anchor, r.sched, desc, sizeof(desc));
        fprintf(cfg->diag, "mlcc: --tune: %s kernel %.12s: %s, %.1f us (default %.1f us, %u of "
                "%u points tried)\n", r.op, k->cpu_key, desc, (double)r.time_ns / 1e3,
                (double)r.default_time_ns / 1e3, k->n_tried, k->n_points);
      }
    }
    fprintf(cfg->diag, "mlcc: --tune: %u tunable kernel%s, %u faster than the default; %u "
            "libraries measured in %.1f s\n", t.n_ks, t.n_ks == 1 ? "" : "s", n_better, t.n_libs,
            now_s() - t0);
  }
done:
  remove_candidates(cfg->work_dir, t.seq);
  free_cands(&ref, 1);
  free_cands(batch, n_batch);
  for (uint32_t i = 0; i < t.n_ks; ++i) {
    free(t.ks[i].points);
    free(t.ks[i].tried);
  }
  free(t.ks);
  free(t.group_of);
  free(t.ref_out);
  return s;
}
