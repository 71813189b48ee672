// SPDX-License-Identifier: Apache-2.0
// Removal of a run's temporaries when mlcc is interrupted (SIGINT, SIGTERM,
// SIGHUP: ninja and make stop jobs that way), so that an interrupted build,
// like a failed one, leaves nothing behind. The handler uses only
// async-signal-safe calls, then re-raises the signal with the default action.
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
// until unregistered. Slots are limited (16); extra paths are not tracked.
void mlcc_cleanup_add_dir_tree(const char* path);
void mlcc_cleanup_add_file(const char* path);
void mlcc_cleanup_add_empty_dir(const char* path);
// Forgets |path| (before it is freed, renamed or removed normally).
void mlcc_cleanup_remove(const char* path);
// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (the previous mask
// goes to |old|) until mlcc_cleanup_unblock(old). Creating a temporary and
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
