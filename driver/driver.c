// SPDX-License-Identifier: Apache-2.0
// Placeholder until the driver lands.
#include "driver/driver.h"

int mlcc_driver_main(int argc, char** argv) { return 70; }
