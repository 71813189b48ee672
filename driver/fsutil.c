// SPDX-License-Identifier: Apache-2.0
#include "driver/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static mlcc_status_t oom(void) {
  return mlcc_make_status(MLCC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

char* mlcc_fs_dirname(const char* path) {
  const char* slash = strrchr(path, '/');
  if (slash == NULL) return strdup(".");
  // Strip the trailing slash run, keeping a lone root.
  const char* end = slash;
  while (end > path && end[-1] == '/') --end;
  if (end == path) return strdup("/");
  return strndup(path, (size_t)(end - path));
}

const char* mlcc_fs_basename(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

char* mlcc_fs_join(const char* dir, const char* name) {
  if (dir == NULL || dir[0] == '\0' || strcmp(dir, ".") == 0) return strdup(name);
  size_t dl = strlen(dir), nl = strlen(name);
  bool slash = dir[dl - 1] != '/';
  char* out = (char*)malloc(dl + (slash ? 1 : 0) + nl + 1);
  if (out == NULL) return NULL;
  memcpy(out, dir, dl);
  if (slash) out[dl++] = '/';
  memcpy(out + dl, name, nl + 1);
  return out;
}

mlcc_status_t mlcc_fs_check_regular_file(const char* path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "cannot open '%s': %s", path,
                            strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "'%s' is not a regular file", path);
  }
  return mlcc_ok_status();
}

bool mlcc_fs_is_special(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

const char* mlcc_fs_temp_root(void) {
  const char* t = getenv("TMPDIR");
  return t != NULL && t[0] != '\0' ? t : "/tmp";
}

mlcc_status_t mlcc_fs_sha256_buffer(const void* data, size_t size, char out_hex[65]) {
  out_hex[0] = '\0';
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int dlen = 0;
  if (EVP_Digest(data, size, digest, &dlen, EVP_sha256(), NULL) != 1 || dlen != 32) {
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 failed");
  }
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < 32; ++i) {
    out_hex[2 * i] = hex[digest[i] >> 4];
    out_hex[2 * i + 1] = hex[digest[i] & 15];
  }
  out_hex[64] = '\0';
  return mlcc_ok_status();
}

mlcc_status_t mlcc_fs_read_file(const char* path, uint8_t** out_data, size_t* out_size) {
  *out_data = NULL;
  *out_size = 0;
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot open '%s': %s", path, strerror(errno));
  }
  size_t cap = 1 << 16, size = 0;
  uint8_t* data = (uint8_t*)malloc(cap);
  mlcc_status_t s = data ? mlcc_ok_status() : oom();
  while (s == NULL) {
    if (size == cap) {
      uint8_t* grown = (uint8_t*)realloc(data, cap * 2);
      if (grown == NULL) {
        s = oom();
        break;
      }
      data = grown;
      cap *= 2;
    }
    size_t n = fread(data + size, 1, cap - size, f);
    size += n;
    if (n == 0) {
      if (ferror(f)) {
        s = mlcc_make_status(MLCC_STATUS_IO, "cannot read '%s': %s", path, strerror(errno));
      }
      break;
    }
  }
  fclose(f);
  if (s != NULL) {
    free(data);
    return s;
  }
  *out_data = data;
  *out_size = size;
  return s;
}

mlcc_status_t mlcc_fs_sha256_file(const char* path, char out_hex[65]) {
  out_hex[0] = '\0';
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    return mlcc_make_status(MLCC_STATUS_NOT_FOUND, "cannot open '%s': %s", path,
                            strerror(errno));
  }
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(md);
    fclose(f);
    return mlcc_make_status(MLCC_STATUS_INTERNAL, "cannot initialize SHA-256");
  }
  unsigned char buf[1 << 16];
  size_t n;
  mlcc_status_t status = mlcc_ok_status();
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
    if (EVP_DigestUpdate(md, buf, n) != 1) {
      status = mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 update failed");
      break;
    }
  }
  if (status == NULL && ferror(f)) {
    status = mlcc_make_status(MLCC_STATUS_IO, "cannot read '%s': %s", path, strerror(errno));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int dlen = 0;
  if (status == NULL && (EVP_DigestFinal_ex(md, digest, &dlen) != 1 || dlen != 32)) {
    status = mlcc_make_status(MLCC_STATUS_INTERNAL, "SHA-256 final failed");
  }
  EVP_MD_CTX_free(md);
  fclose(f);
  if (status != NULL) return status;
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < 32; ++i) {
    out_hex[2 * i] = hex[digest[i] >> 4];
    out_hex[2 * i + 1] = hex[digest[i] & 15];
  }
  out_hex[64] = '\0';
  return mlcc_ok_status();
}

static mode_t create_mode(void) {
  // umask() can only be read by setting it; restore immediately.
  mode_t mask = umask(022);
  umask(mask);
  return 0666 & ~mask;
}

mlcc_status_t mlcc_fs_write_file(const char* path, const void* data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot create '%s': %s", path, strerror(errno));
  }
  mlcc_status_t s = mlcc_fs_write_fd(fd, data, size, path);
  if (close(fd) != 0 && s == NULL) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", path, strerror(errno));
  }
  return s;
}

mlcc_status_t mlcc_fs_read_stream(FILE* stream, char** out_data, size_t* out_size) {
  *out_data = NULL;
  *out_size = 0;
  if (fflush(stream) != 0 || fseek(stream, 0, SEEK_END) != 0) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read back a temporary stream: %s",
                            strerror(errno));
  }
  long end = ftell(stream);
  if (end < 0 || fseek(stream, 0, SEEK_SET) != 0) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read back a temporary stream: %s",
                            strerror(errno));
  }
  char* data = (char*)malloc((size_t)end + 1);
  if (data == NULL) return oom();
  if ((long)fread(data, 1, (size_t)end, stream) != end) {
    free(data);
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read back a temporary stream");
  }
  data[end] = '\0';
  *out_data = data;
  *out_size = (size_t)end;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_fs_write_fd(int fd, const void* data, size_t size,
                               const char* path_for_errors) {
  const unsigned char* p = (const unsigned char*)data;
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", path_for_errors,
                              strerror(errno));
    }
    p += n;
    size -= (size_t)n;
  }
  return mlcc_ok_status();
}


// Closes the lock descriptor of a non-empty staged file.
static void staged_unlock(mlcc_staged_file_t* staged) {
  if (staged->tmp_path != NULL && staged->lock_fd >= 0) close(staged->lock_fd);
  staged->lock_fd = -1;
}

mlcc_status_t mlcc_fs_stage(const char* final_path, const void* data, size_t size,
                            mlcc_staged_file_t* out_staged) {
  memset(out_staged, 0, sizeof(*out_staged));
  // A device or FIFO: the temporary cannot (and need not) live beside it.
  char* dir = mlcc_fs_is_special(final_path) ? strdup(mlcc_fs_temp_root())
                                             : mlcc_fs_dirname(final_path);
  if (dir == NULL) return oom();
  char name[64];
  snprintf(name, sizeof(name), ".mlcc-out-%ld-XXXXXX", (long)getpid());
  char* tmpl = mlcc_fs_join(dir, name);
  free(dir);
  char* final_copy = strdup(final_path);
  if (tmpl == NULL || final_copy == NULL) {
    free(tmpl);
    free(final_copy);
    return oom();
  }
  int fd = mkostemp(tmpl, O_CLOEXEC);
  if (fd < 0) {
    mlcc_status_t s = mlcc_make_status(MLCC_STATUS_IO, "cannot create a temporary file for '%s': %s",
                                       final_path, strerror(errno));
    free(tmpl);
    free(final_copy);
    return s;
  }
  // The lock (on a second descriptor, so close() still reports write
  // errors) tells a later run that the temporary's owner is alive.
  flock(fd, LOCK_EX | LOCK_NB);
  int lock_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  mlcc_status_t s = mlcc_fs_write_fd(fd, data, size, final_path);
  if (s == NULL && fchmod(fd, create_mode()) != 0) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot set the mode of '%s': %s", tmpl, strerror(errno));
  }
  if (close(fd) != 0 && s == NULL) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", final_path, strerror(errno));
  }
  if (s != NULL) {
    unlink(tmpl);
    if (lock_fd >= 0) close(lock_fd);
    free(tmpl);
    free(final_copy);
    return s;
  }
  out_staged->tmp_path = tmpl;
  out_staged->final_path = final_copy;
  out_staged->lock_fd = lock_fd;
  return mlcc_ok_status();
}

mlcc_status_t mlcc_fs_stage_existing(const char* tmp_path, const char* final_path,
                                     mlcc_staged_file_t* out_staged) {
  memset(out_staged, 0, sizeof(*out_staged));
  out_staged->lock_fd = -1;  // inside a (locked) temporary directory
  out_staged->tmp_path = strdup(tmp_path);
  out_staged->final_path = strdup(final_path);
  if (out_staged->tmp_path == NULL || out_staged->final_path == NULL) {
    free(out_staged->tmp_path);
    free(out_staged->final_path);
    memset(out_staged, 0, sizeof(*out_staged));
    return oom();
  }
  return mlcc_ok_status();
}

void mlcc_fs_staged_discard(mlcc_staged_file_t* staged) {
  if (staged->tmp_path != NULL) unlink(staged->tmp_path);
  staged_unlock(staged);
  free(staged->tmp_path);
  free(staged->final_path);
  memset(staged, 0, sizeof(*staged));
}

// Copies the bytes of |src| into the special file |dst| (opened for writing,
// not created): how cc -o /dev/null behaves.
static mlcc_status_t copy_into_special(const char* src, const char* dst) {
  int in = open(src, O_RDONLY | O_CLOEXEC);
  if (in < 0) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot read '%s': %s", src, strerror(errno));
  }
  int out = open(dst, O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    mlcc_status_t s = mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", dst,
                                       strerror(errno));
    close(in);
    return s;
  }
  mlcc_status_t s = mlcc_ok_status();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(in, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = mlcc_make_status(MLCC_STATUS_IO, "cannot read '%s': %s", src, strerror(errno));
      break;
    }
    if (n == 0) break;
    s = mlcc_fs_write_fd(out, buf, (size_t)n, dst);
    if (s != NULL) break;
  }
  if (close(out) != 0 && s == NULL) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': %s", dst, strerror(errno));
  }
  close(in);
  return s;
}

// True when |a| and |b| are both readable regular files (|b| not a symlink)
// with the same bytes. Any error reads as "different".
static bool same_contents(const char* a, const char* b) {
  struct stat sa, sb;
  if (stat(a, &sa) != 0 || lstat(b, &sb) != 0) return false;
  if (!S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) || sa.st_size != sb.st_size) return false;
  int fa = open(a, O_RDONLY | O_CLOEXEC);
  if (fa < 0) return false;
  int fb = open(b, O_RDONLY | O_CLOEXEC);
  if (fb < 0) {
    close(fa);
    return false;
  }
  bool same = true;
  char ba[16384], bb[16384];
  for (off_t done = 0; same && done < sa.st_size;) {
    size_t want = sizeof(ba);
    if ((off_t)want > sa.st_size - done) want = (size_t)(sa.st_size - done);
    ssize_t na = read(fa, ba, want);
    ssize_t nb = read(fb, bb, want);
    if (na < 0 && errno == EINTR) continue;
    same = na > 0 && na == nb && memcmp(ba, bb, (size_t)na) == 0;
    done += na > 0 ? na : 0;
  }
  close(fa);
  close(fb);
  return same;
}

mlcc_status_t mlcc_fs_staged_commit(mlcc_staged_file_t* staged) {
  if (staged->tmp_path == NULL) return mlcc_ok_status();
  mlcc_status_t s = mlcc_ok_status();
  if (!mlcc_fs_is_special(staged->final_path) &&
      same_contents(staged->tmp_path, staged->final_path)) {
    // Same bytes: keep the file and its mtime, so build tools with restat
    // (Ninja) or content checks rebuild nothing downstream.
    mlcc_fs_staged_discard(staged);
    return s;
  }
  if (mlcc_fs_is_special(staged->final_path)) {
    s = copy_into_special(staged->tmp_path, staged->final_path);
  } else if (rename(staged->tmp_path, staged->final_path) != 0) {
    s = mlcc_make_status(MLCC_STATUS_IO, "cannot write '%s': rename failed: %s",
                         staged->final_path, strerror(errno));
  } else {
    staged_unlock(staged);
    free(staged->tmp_path);
    staged->tmp_path = NULL;
  }
  mlcc_fs_staged_discard(staged);
  return s;
}

mlcc_status_t mlcc_fs_write_atomic(const char* final_path, const void* data, size_t size) {
  mlcc_staged_file_t staged;
  MLCC_RETURN_IF_ERROR(mlcc_fs_stage(final_path, data, size, &staged));
  return mlcc_fs_staged_commit(&staged);
}

mlcc_status_t mlcc_fs_mkdirs(const char* dir, char** created, uint32_t cap,
                             uint32_t* inout_n_created) {
  struct stat st;
  if (stat(dir, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return mlcc_ok_status();
    return mlcc_make_status(MLCC_STATUS_IO, "cannot create directory '%s': not a directory",
                            dir);
  }
  char* parent = mlcc_fs_dirname(dir);
  if (parent == NULL) return oom();
  mlcc_status_t s = mlcc_ok_status();
  if (strcmp(parent, dir) != 0 && strcmp(parent, ".") != 0 && strcmp(parent, "/") != 0) {
    s = mlcc_fs_mkdirs(parent, created, cap, inout_n_created);
  }
  free(parent);
  MLCC_RETURN_IF_ERROR(s);
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    return mlcc_make_status(MLCC_STATUS_IO, "cannot create directory '%s': %s", dir,
                            strerror(errno));
  }
  if (*inout_n_created < cap) {
    char* copy = strdup(dir);
    if (copy == NULL) return oom();
    created[(*inout_n_created)++] = copy;
  }
  return mlcc_ok_status();
}

void mlcc_fs_remove_dirs(char** dirs, uint32_t n_dirs) {
  for (uint32_t i = n_dirs; i-- > 0;) {
    rmdir(dirs[i]);
    free(dirs[i]);
    dirs[i] = NULL;
  }
}

mlcc_status_t mlcc_tempdir_create(const char* dir, mlcc_tempdir_t* out_tempdir) {
  out_tempdir->path = NULL;
  out_tempdir->lock_fd = -1;
  char name[64];
  snprintf(name, sizeof(name), ".mlcc-tmp-%ld-XXXXXX", (long)getpid());
  char* tmpl = mlcc_fs_join(dir, name);
  if (tmpl == NULL) return oom();
  if (mkdtemp(tmpl) == NULL) {
    mlcc_status_t s = mlcc_make_status(MLCC_STATUS_IO,
                                       "cannot create a temporary directory in '%s': %s", dir,
                                       strerror(errno));
    free(tmpl);
    return s;
  }
  out_tempdir->path = tmpl;
  // Held until the folder is removed: a later run sees its owner is alive.
  out_tempdir->lock_fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (out_tempdir->lock_fd >= 0) flock(out_tempdir->lock_fd, LOCK_EX | LOCK_NB);
  return mlcc_ok_status();
}

char* mlcc_tempdir_file(const mlcc_tempdir_t* tempdir, const char* name) {
  return mlcc_fs_join(tempdir->path, name);
}

void mlcc_tempdir_remove(mlcc_tempdir_t* tempdir) {
  if (tempdir->path == NULL) return;
  DIR* d = opendir(tempdir->path);
  if (d != NULL) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char* p = mlcc_fs_join(tempdir->path, e->d_name);
      if (p != NULL) unlink(p);
      free(p);
    }
    closedir(d);
  }
  rmdir(tempdir->path);
  if (tempdir->lock_fd >= 0) close(tempdir->lock_fd);
  tempdir->lock_fd = -1;
  free(tempdir->path);
  tempdir->path = NULL;
}

// The owner pid in ".mlcc-tmp-<pid>-XXXXXX" / ".mlcc-out-<pid>-XXXXXX"; -1
// for the names of mlcc versions before the pid (".mlcc-tmp-XXXXXX"), 0 for
// any other name; |*out_dir| tells which kind.
static long temp_owner(const char* name, bool* out_dir) {
  const char* p;
  if (strncmp(name, ".mlcc-tmp-", 10) == 0) {
    *out_dir = true;
  } else if (strncmp(name, ".mlcc-out-", 10) == 0) {
    *out_dir = false;
  } else {
    return 0;
  }
  if (strlen(name + 10) == 6 && strchr(name + 10, '-') == NULL) return -1;
  long pid = 0;
  for (p = name + 10; *p >= '0' && *p <= '9' && pid < (1L << 30); ++p) pid = pid * 10 + (*p - '0');
  return (p > name + 10 && *p == '-' && strlen(p) == 7) ? pid : 0;
}

// Empties the flat folder open as |fd| (unlinkat each entry).
static void empty_dir_fd(int fd) {
  int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (dup_fd < 0) return;
  DIR* d = fdopendir(dup_fd);
  if (d == NULL) {
    close(dup_fd);
    return;
  }
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    unlinkat(fd, e->d_name, 0);
  }
  closedir(d);
}

void mlcc_fs_remove_stale_temporaries(const char* dir) {
  DIR* d = opendir(dir);
  if (d == NULL) return;
  int dfd = dirfd(d);
  time_t now = time(NULL);
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    bool is_dir = false;
    long pid = temp_owner(e->d_name, &is_dir);
    if (pid == 0 || pid == (long)getpid()) continue;
    if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;  // alive (or not ours)
    // A name without a pid tells nothing about its owner: only a day-old one goes.
    const time_t min_age = pid > 0 ? 2 : 24 * 3600;
    int fd = openat(dfd, e->d_name,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0));
    if (fd < 0) continue;
    struct stat st;
    // Ours, of the right type, past its creation instant (an owner in
    // another pid namespace takes its lock right after creating it), and
    // unlocked: its owner is gone.
    bool stale = fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
                 (is_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) &&
                 now - st.st_mtime >= min_age && flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (stale) {
      if (is_dir) empty_dir_fd(fd);
      unlinkat(dfd, e->d_name, is_dir ? AT_REMOVEDIR : 0);
    }
    close(fd);
  }
  closedir(d);
}
