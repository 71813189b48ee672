// SPDX-License-Identifier: Apache-2.0
#include "driver/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kSlots = 64 };  // folders made by mkdir -p (up to 32), the temporary folder, staged files
enum { KIND_NONE = 0, KIND_TREE, KIND_FILE, KIND_DIR };

typedef struct slot_t {
  _Atomic(const char*) path;
  atomic_int kind;
} slot_t;

static slot_t slots[kSlots];
static atomic_bool installed;

static void add(const char* path, int kind) {
  for (int i = 0; i < kSlots; ++i) {
    const char* expected = NULL;
    if (atomic_compare_exchange_strong(&slots[i].path, &expected, path)) {
      atomic_store(&slots[i].kind, kind);
      return;
    }
  }
}

void mlcc_cleanup_add_dir_tree(const char* path) { add(path, KIND_TREE); }
void mlcc_cleanup_add_file(const char* path) { add(path, KIND_FILE); }
void mlcc_cleanup_add_empty_dir(const char* path) { add(path, KIND_DIR); }

void mlcc_cleanup_remove(const char* path) {
  for (int i = 0; i < kSlots; ++i) {
    const char* expected = path;
    if (path != NULL && atomic_compare_exchange_strong(&slots[i].path, &expected, NULL)) {
      atomic_store(&slots[i].kind, KIND_NONE);
    }
  }
}

// Unlinks every entry of the flat directory |path| with getdents64 (opendir
// is not async-signal-safe). Returns false if the directory cannot be opened.
static bool unlink_entries(const char* path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096] __attribute__((aligned(8)));
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
      unsigned short reclen;
      memcpy(&reclen, buf + off + 16, sizeof(reclen));
      const char* name = buf + off + 19;
      if (!(name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))) {
        unlinkat(fd, name, 0);
      }
      if (reclen == 0) break;
      off += reclen;
    }
  }
  close(fd);
  return true;
}

// Removes the flat directory |path| and its files. Kernel worker threads may
// still be writing objects into it while the handler runs (they keep running
// until the signal is re-raised), so a file created after the unlink pass
// makes rmdir fail with ENOTEMPTY: empty it again and retry (bounded; once
// the folder is gone, a worker's next create fails instead).
static void remove_tree(const char* path) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (!unlink_entries(path)) return;
    int saved = errno;
    if (rmdir(path) == 0 || errno != ENOTEMPTY) {
      errno = saved;
      return;
    }
    errno = saved;
  }
}

static void on_signal(int sig) {
  // Files first, then trees, then created folders from the innermost out.
  for (int i = 0; i < kSlots; ++i) {
    const char* p = atomic_load(&slots[i].path);
    if (p != NULL && atomic_load(&slots[i].kind) == KIND_FILE) unlink(p);
  }
  for (int i = 0; i < kSlots; ++i) {
    const char* p = atomic_load(&slots[i].path);
    if (p != NULL && atomic_load(&slots[i].kind) == KIND_TREE) remove_tree(p);
  }
  for (int i = kSlots; i-- > 0;) {
    const char* p = atomic_load(&slots[i].path);
    if (p != NULL && atomic_load(&slots[i].kind) == KIND_DIR) rmdir(p);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

// The signals whose default action ends the process and that can be caught,
// minus the synchronous fault signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT, SIGTRAP, SIGSYS): those mean a bug in mlcc, and sanitizers and
// core dumps need their own handling of them.
static const int kFatalSignals[] = {
    SIGHUP,  SIGINT,    SIGQUIT,   SIGTERM, SIGUSR1, SIGUSR2,   SIGALRM,
    SIGVTALRM, SIGPROF, SIGXCPU,   SIGPOLL, SIGPWR,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};

// Signals that only report a failed write: SIGPIPE (a closed pipe, e.g.
// "mlcc -v 2>&1 | head -1") and SIGXFSZ (ulimit -f). Their handler returns,
// so the write fails with EPIPE or EFBIG instead: a diagnostic is dropped and
// the build goes on, or an output write fails and the run cleans up.
static const int kWriteSignals[] = {SIGPIPE, SIGXFSZ};

static void fatal_set(sigset_t* set) {
  sigemptyset(set);
  for (size_t i = 0; i < sizeof(kFatalSignals) / sizeof(kFatalSignals[0]); ++i) {
    sigaddset(set, kFatalSignals[i]);
  }
  for (int s = SIGRTMIN; s <= SIGRTMAX; ++s) sigaddset(set, s);
}

void mlcc_cleanup_block(sigset_t* old) {
  sigset_t set;
  fatal_set(&set);
  pthread_sigmask(SIG_BLOCK, &set, old);
}

void mlcc_cleanup_unblock(const sigset_t* old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

// Returns, so the write fails with EPIPE/EFBIG. When the diagnostics pipe
// (fd 2) is the one that broke, it becomes /dev/null: later diagnostics and
// the archiver's stderr go nowhere instead of failing (a child writing to a
// closed pipe would die of SIGPIPE). fd 1 is left alone: it may carry the
// output (-o -), whose failed write must fail the run.
static void on_write_signal(int sig) {
  int saved = errno;  // the interrupted write's EPIPE must reach its caller
  if (sig == SIGPIPE) {
    struct pollfd p = {.fd = 2, .events = 0, .revents = 0};
    if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0) {
      int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
      }
    }
  }
  errno = saved;
}

// Installs |handler| for |sig| unless the signal is inherited as ignored
// (nohup, or a parent that ignores SIGPIPE: keep it as it is).
static void install(int sig, void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  struct sigaction old;
  if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN) return;
  sigaction(sig, &sa, NULL);
}

void mlcc_cleanup_install(void) {
  if (atomic_exchange(&installed, true)) return;
  sigset_t fatal;
  fatal_set(&fatal);
  for (int s = 1; s <= SIGRTMAX; ++s) {
    if (sigismember(&fatal, s) == 1) install(s, on_signal, 0);
  }
  for (size_t i = 0; i < sizeof(kWriteSignals) / sizeof(kWriteSignals[0]); ++i) {
    install(kWriteSignals[i], on_write_signal, SA_RESTART);
  }
}
