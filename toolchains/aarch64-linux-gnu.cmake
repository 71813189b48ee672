# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: cross-compile for aarch64 Linux with Debian's cross gcc
# (package gcc-aarch64-linux-gnu) and run target programs under qemu-user
# (binfmt is not assumed: the emulator is called explicitly).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# BOTH, not ONLY: host tool packages (find_package(mlcc) from a host prefix in
# CMAKE_PREFIX_PATH) must stay findable; target libraries and headers are
# still searched in the sysroot only.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(MLCC_QEMU_CPU "" CACHE STRING "qemu -cpu value, e.g. cortex-a72")
if(MLCC_QEMU_CPU)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -cpu ${MLCC_QEMU_CPU} -L /usr/aarch64-linux-gnu)
else()
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
endif()
