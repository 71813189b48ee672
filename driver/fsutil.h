// SPDX-License-Identifier: Apache-2.0
// File-system helpers for the driver: path pieces, whole-file writes,
// staged outputs (write a temporary beside the destination, rename on
// success, unlink on failure) and private temporary directories.
// Thread-compatible. Every failure is an IO/NOT_FOUND status naming the path
// and strerror(errno); nothing here aborts.
#ifndef MLCC_DRIVER_FSUTIL_H_
#define MLCC_DRIVER_FSUTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// The directory part of |path| ("." when it has none, "/" for "/x"), as a
// new malloc'ed string (NULL on OOM).
char* mlcc_fs_dirname(const char* path);
// The file-name part of |path| (borrowed pointer into |path|).
const char* mlcc_fs_basename(const char* path);
// "<dir>/<name>" (or just <name> when dir is "." or empty); malloc'ed, NULL on OOM.
char* mlcc_fs_join(const char* dir, const char* name);

// NOT_FOUND unless |path| exists and is a regular file (or a symlink to one).
mlcc_status_t mlcc_fs_check_regular_file(const char* path);

// True when |path| exists and is neither a regular file nor a directory: a
// character or block device (/dev/null), a FIFO or a socket. Outputs to such a
// path are written through (like cc -o /dev/null), never renamed over it.
bool mlcc_fs_is_special(const char* path);

// The folder for temporaries that cannot go beside their output: $TMPDIR
// when set and non-empty, else "/tmp". Borrowed (environment or literal).
const char* mlcc_fs_temp_root(void);

// SHA-256 of the bytes of |path| as 64 lowercase hex digits + NUL.
mlcc_status_t mlcc_fs_sha256_file(const char* path, char out_hex[65]);

// SHA-256 of |size| bytes at |data| as 64 lowercase hex digits + NUL.
mlcc_status_t mlcc_fs_sha256_buffer(const void* data, size_t size, char out_hex[65]);

// Reads the whole file |path| into a malloc'ed buffer (*out_data, freed by
// the caller; *out_size bytes). IO naming the path, or RESOURCE_EXHAUSTED.
mlcc_status_t mlcc_fs_read_file(const char* path, uint8_t** out_data, size_t* out_size);

// Writes |size| bytes to the open descriptor |fd| (retrying short writes).
mlcc_status_t mlcc_fs_write_fd(int fd, const void* data, size_t size, const char* path_for_errors);

// Creates or truncates |path| (mode 0666 & ~umask) and writes |data|. Not
// atomic: for files inside a private temporary directory.
mlcc_status_t mlcc_fs_write_file(const char* path, const void* data, size_t size);

// Reads all of |stream| from its start (a tmpfile or memstream) into a
// malloc'ed buffer. IO on failure.
mlcc_status_t mlcc_fs_read_stream(FILE* stream, char** out_data, size_t* out_size);

// An output written to a temporary beside |final_path| and renamed over it
// by mlcc_fs_staged_commit. Paths are owned (malloc'ed).
typedef struct mlcc_staged_file_t {
  char* tmp_path;    // NULL when nothing is staged
  char* final_path;
  int lock_fd;       // holds a flock on the temporary (-1: none); closed at commit/discard
} mlcc_staged_file_t;

// Writes |data| to a fresh temporary ".mlcc-out-<pid>-XXXXXX", locked
// (flock) while it is staged, in the directory of |final_path| (mode
// 0666 & ~umask, like a normal create), or in mlcc_fs_temp_root() when
// |final_path| is special (mlcc_fs_is_special). On failure nothing is left
// behind and |*out_staged| is empty.
mlcc_status_t mlcc_fs_stage(const char* final_path, const void* data, size_t size,
                            mlcc_staged_file_t* out_staged);
// Adopts an already written temporary |tmp_path| (copied) as staged for |final_path|.
mlcc_status_t mlcc_fs_stage_existing(const char* tmp_path, const char* final_path,
                                     mlcc_staged_file_t* out_staged);
// Atomically renames the temporary over the destination, unless the
// destination is a regular file with the same bytes: then the temporary is
// removed and the destination keeps its inode and mtime. When the
// destination is special (/dev/null, a FIFO) its bytes are written into it
// instead, so a device node is never replaced by a regular file. On failure
// the temporary is removed. Either way the struct is released.
mlcc_status_t mlcc_fs_staged_commit(mlcc_staged_file_t* staged);
// Removes the temporary (if any) and releases the struct. Never fails.
void mlcc_fs_staged_discard(mlcc_staged_file_t* staged);

// Stage + commit in one step: an atomic whole-file write.
mlcc_status_t mlcc_fs_write_atomic(const char* final_path, const void* data, size_t size);

// Creates |dir| and its missing parents (mode 0777 & ~umask), like mkdir -p.
// Appends each directory it created (malloc'ed, outermost first) to
// |created| (capacity |cap|; further ones are created but not recorded) so a
// failed run can remove them again with mlcc_fs_remove_dirs. IO naming the
// directory on failure (e.g. a parent is a regular file).
mlcc_status_t mlcc_fs_mkdirs(const char* dir, char** created, uint32_t cap,
                             uint32_t* inout_n_created);
// rmdir()s |dirs| in reverse order (ignoring failures: a directory someone
// else filled stays) and frees the strings.
void mlcc_fs_remove_dirs(char** dirs, uint32_t n_dirs);

// A private directory (mkdtemp) for intermediate files.
typedef struct mlcc_tempdir_t {
  char* path;   // owned; NULL when not created
  int lock_fd;  // holds a flock on the folder (-1: none); valid only when |path| is set
} mlcc_tempdir_t;

// Creates "<dir>/.mlcc-tmp-<pid>-XXXXXX" with mode 0700 and locks it (flock)
// until mlcc_tempdir_remove.
mlcc_status_t mlcc_tempdir_create(const char* dir, mlcc_tempdir_t* out_tempdir);
// "<tempdir>/<name>" as a malloc'ed string (NULL on OOM).
char* mlcc_tempdir_file(const mlcc_tempdir_t* tempdir, const char* name);
// Removes every entry of the directory (files only; it is flat) and the
// directory itself; releases the struct. Safe on an empty struct.
void mlcc_tempdir_remove(mlcc_tempdir_t* tempdir);

// Removes the temporaries that runs killed by an uncatchable signal
// (SIGKILL, a power cut) left in |dir|: ".mlcc-tmp-<pid>-*" folders and
// ".mlcc-out-<pid>-*" files owned by this user whose pid is gone (kill(pid,
// 0) says ESRCH), that are at least 2 s old and that no process holds
// locked (flock: an owner alive in another pid namespace keeps its lock);
// and the pid-less ".mlcc-tmp-XXXXXX" / ".mlcc-out-XXXXXX" of older mlcc
// versions once they are a day old and unlocked.
// Best effort: never fails, never follows symlinks, touches nothing else.
void mlcc_fs_remove_stale_temporaries(const char* dir);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_FSUTIL_H_
