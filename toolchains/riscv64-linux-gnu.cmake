# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: cross-compile for riscv64 Linux with Debian's cross gcc
# (package gcc-riscv64-linux-gnu) and run target programs under qemu-user
# (binfmt is not assumed: the emulator is called explicitly).
#
# mlcc's riscv target is rv64gc. For RVV 1.0 compile the model with
# add_ml_model(... FEATURES riscv=+v) and run the tests on a vector CPU:
#   -DMLCC_QEMU_CPU=rv64,v=true,vlen=256,vext_spec=v1.0   (or vlen=128)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER riscv64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# BOTH, not ONLY: host tool packages (find_package(mlcc) from a host prefix in
# CMAKE_PREFIX_PATH) must stay findable; target libraries and headers are
# still searched in the sysroot only.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(MLCC_QEMU_CPU "" CACHE STRING "qemu -cpu value, e.g. rv64,v=true,vlen=256,vext_spec=v1.0")
if(MLCC_QEMU_CPU)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64 -cpu ${MLCC_QEMU_CPU} -L /usr/riscv64-linux-gnu)
else()
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-riscv64 -L /usr/riscv64-linux-gnu)
endif()
