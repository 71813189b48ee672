// SPDX-License-Identifier: Apache-2.0
#include "driver/jobs.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/fsutil.h"

extern char** environ;

static const char* const kJobNames[MLCC_JOB_KIND_COUNT] = {
    [MLCC_JOB_IMPORT] = "import",
    [MLCC_JOB_OPTIMIZE] = "optimize",
    [MLCC_JOB_EMIT_GRAPH] = "emit-graph",
    [MLCC_JOB_CODEGEN_WHOLE] = "codegen",
    [MLCC_JOB_CODEGEN_WEIGHTS] = "codegen-weights",
    [MLCC_JOB_CODEGEN_KERNELS] = "codegen-kernels",
    [MLCC_JOB_CODEGEN_ENTRY] = "codegen-entry",
    [MLCC_JOB_ARCHIVE] = "archive",
    [MLCC_JOB_JOIN] = "join",
    [MLCC_JOB_HEADER] = "header",
    [MLCC_JOB_DEPFILE] = "depfile",
};

const char* mlcc_job_kind_name(mlcc_job_kind_t kind) {
  return (unsigned)kind < MLCC_JOB_KIND_COUNT ? kJobNames[kind] : "?";
}

void mlcc_job_list_init(mlcc_job_list_t* list, mlcc_arena_t* arena) {
  memset(list, 0, sizeof(*list));
  list->arena = arena;
}

mlcc_status_t mlcc_job_list_add(mlcc_job_list_t* list, mlcc_job_kind_t kind, bool external,
                                const char* const* argv) {
  if (list->n_jobs == list->cap) {
    uint32_t cap = list->cap ? list->cap * 2 : 16;
    mlcc_job_t* jobs = (mlcc_job_t*)mlcc_arena_alloc(list->arena, cap * sizeof(mlcc_job_t),
                                                     _Alignof(mlcc_job_t));
    if (jobs == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    if (list->n_jobs) memcpy(jobs, list->jobs, list->n_jobs * sizeof(mlcc_job_t));
    list->jobs = jobs;
    list->cap = cap;
  }
  uint32_t argc = 0;
  while (argv[argc] != NULL) ++argc;
  const char** copy = (const char**)mlcc_arena_alloc(list->arena, (argc + 1) * sizeof(char*),
                                                     _Alignof(char*));
  if (copy == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  for (uint32_t i = 0; i < argc; ++i) {
    copy[i] = mlcc_arena_strdup(list->arena, argv[i]);
    if (copy[i] == NULL) return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  copy[argc] = NULL;
  mlcc_job_t* job = &list->jobs[list->n_jobs++];
  job->kind = kind;
  job->external = external;
  job->argc = argc;
  job->argv = copy;
  return mlcc_ok_status();
}

void mlcc_job_quote_arg(mlcc_strbuf_t* sb, const char* arg) {
  mlcc_strbuf_append_char(sb, '"');
  for (const char* p = arg; *p; ++p) {
    if (*p == '"' || *p == '\\' || *p == '$' || *p == '`') mlcc_strbuf_append_char(sb, '\\');
    mlcc_strbuf_append_char(sb, *p);
  }
  mlcc_strbuf_append_char(sb, '"');
}

void mlcc_job_print_argv(FILE* out, const char* const* argv) {
  mlcc_strbuf_t sb;
  mlcc_strbuf_init(&sb);
  for (size_t i = 0; argv[i] != NULL; ++i) {
    mlcc_strbuf_append_char(&sb, ' ');
    mlcc_job_quote_arg(&sb, argv[i]);
  }
  mlcc_strbuf_append_char(&sb, '\n');
  fputs(mlcc_strbuf_cstr(&sb), out);
  mlcc_strbuf_deinit(&sb);
}

char* mlcc_job_find_program(const char* name) {
  if (name == NULL || name[0] == '\0') return NULL;
  if (strchr(name, '/') != NULL) return access(name, X_OK) == 0 ? strdup(name) : NULL;
  const char* path = getenv("PATH");
  if (path == NULL || path[0] == '\0') path = "/usr/local/bin:/usr/bin:/bin";
  while (1) {
    const char* colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    char* dir = len ? strndup(path, len) : strdup(".");
    char* full = dir ? mlcc_fs_join(dir, name) : NULL;
    free(dir);
    if (full != NULL && access(full, X_OK) == 0) return full;
    free(full);
    if (colon == NULL) return NULL;
    path = colon + 1;
  }
}

mlcc_status_t mlcc_job_spawn(const char* const* argv) { return mlcc_job_spawn_in(argv, NULL); }

mlcc_status_t mlcc_job_spawn_in(const char* const* argv, const char* dir) {
  char* program = mlcc_job_find_program(argv[0]);
  if (program == NULL) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "cannot run '%s': program not found", argv[0]);
  }
  if (dir != NULL && program[0] != '/') {
    // Relative to our directory, not the child's.
    char* abs = realpath(program, NULL);
    free(program);
    if (abs == NULL) {
      return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "cannot run '%s': %s", argv[0],
                              strerror(errno));
    }
    program = abs;
  }
  posix_spawn_file_actions_t actions;
  int rc = posix_spawn_file_actions_init(&actions);
  if (rc == 0 && dir != NULL) rc = posix_spawn_file_actions_addchdir_np(&actions, dir);
  if (rc != 0) {
    free(program);
    posix_spawn_file_actions_destroy(&actions);
    return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "cannot run '%s': %s", argv[0],
                            strerror(rc));
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid;
  rc = posix_spawn(&pid, program, &actions, NULL, (char* const*)argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  free(program);
  if (rc != 0) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "cannot run '%s': %s", argv[0], strerror(rc));
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      return mlcc_make_status(MLCC_STATUS_IO, "cannot wait for '%s': %s", argv[0],
                              strerror(errno));
    }
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) return mlcc_ok_status();
  if (WIFSIGNALED(wstatus)) {
    return mlcc_make_status(MLCC_STATUS_IO, "'%s' was killed by signal %d", argv[0],
                            WTERMSIG(wstatus));
  }
  return mlcc_make_status(MLCC_STATUS_IO, "'%s' failed with exit code %d", argv[0],
                          WEXITSTATUS(wstatus));
}
