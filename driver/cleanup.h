// SPDX-License-Identifier: Apache-2.0
// Removal of a run's temporaries when mlcc is stopped by a signal, so that
// an interrupted build, like a failed one, leaves nothing behind: SIGINT,
// SIGTERM, SIGHUP (ninja and make stop jobs that way), SIGQUIT, SIGUSR1/2,
// SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGPOLL, SIGPWR, SIGSTKFLT and the
// real-time signals. The handler uses only async-signal-safe calls, then
// re-raises the signal with the default action (the exit status stays
// "killed by signal N"). SIGPIPE and SIGXFSZ get a handler that returns, so
// the write that caused them fails with EPIPE/EFBIG: a closed diagnostics
// pipe ("mlcc -v 2>&1 | head -1") drops the diagnostics (fd 2 becomes
// /dev/null, for the archiver too) and the build goes on; a failed output
// write fails the run, which removes its temporaries.
// The fault signals (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP,
// SIGSYS) keep their default action. Signals inherited as ignored stay
// ignored. A SIGKILL cannot be caught: a later run removes what it left
// (mlcc_fs_remove_stale_temporaries in driver/fsutil.h).
// Thread-safe registration; one registry per process.
#ifndef MLCC_DRIVER_CLEANUP_H_
#define MLCC_DRIVER_CLEANUP_H_

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

// Installs the handlers (idempotent).
void mlcc_cleanup_install(void);
// Registers a temporary directory (its files and itself are removed) or a
// temporary file / created folder. |path| is borrowed and must stay valid
// until unregistered. Slots are limited (64); extra paths are not tracked.
void mlcc_cleanup_add_dir_tree(const char* path);
void mlcc_cleanup_add_file(const char* path);
void mlcc_cleanup_add_empty_dir(const char* path);
// Forgets |path| (before it is freed, renamed or removed normally).
void mlcc_cleanup_remove(const char* path);
// Blocks the signals that run the cleanup handler in the calling thread (the
// previous mask goes to |old|) until mlcc_cleanup_unblock(old). Creating a temporary and
// registering it happen between the two, so a signal is handled before the
// temporary exists or after it is registered, never in between; a signal
// that arrives meanwhile is delivered at the unblock. Threads created while
// blocked inherit the mask, so worker threads created that way never run
// the handler (the main thread does).
void mlcc_cleanup_block(sigset_t* old);
void mlcc_cleanup_unblock(const sigset_t* old);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_CLEANUP_H_
