// SPDX-License-Identifier: Apache-2.0
// The cc-like driver: options, actions, jobs, packaging. Thread-compatible.
#ifndef MLCC_DRIVER_DRIVER_H_
#define MLCC_DRIVER_DRIVER_H_

#ifdef __cplusplus
extern "C" {
#endif

// Runs mlcc with |argv| (argv[0] is the program name) and returns the exit
// code: 0 ok, 1 input error, 2 usage error, 70 internal error.
int mlcc_driver_main(int argc, char** argv);

#ifdef __cplusplus
}
#endif
#endif  // MLCC_DRIVER_DRIVER_H_
