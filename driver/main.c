// SPDX-License-Identifier: Apache-2.0
// mlcc's entry point: argv -> mlcc_driver_main(); nothing else.
#include "driver/driver.h"

int main(int argc, char** argv) { return mlcc_driver_main(argc, argv); }
