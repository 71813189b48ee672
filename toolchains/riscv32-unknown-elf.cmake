# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: bare-metal 32-bit RISC-V with Debian's
# gcc-riscv64-unknown-elf (its rv32 multilibs) and picolibc-riscv64-unknown-elf,
# for the qemu-system-riscv32 -M virt -bios none board of tests/mcu/
# (docs/mcu.md). MLCC_RV32_FPU picks the variant:
#   OFF  rv32imac, ilp32 (soft float), mlcc --target=rv32 (default)
#   ON   rv32imafc, ilp32f, mlcc --target=rv32f
# Executables link with tests/mcu/virt-rv32.ld and must add the start-up
# sources in MLCC_MCU_STARTUP; programs run under qemu with semihosting
# (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
option(MLCC_RV32_FPU "rv32imafc with the ilp32f ABI instead of soft-float rv32imac" OFF)
# The board files: tests/mcu of a checkout, or share/mlcc/mcu beside the
# installed share/mlcc/toolchains.
get_filename_component(_mlcc_mcu_dir "${CMAKE_CURRENT_LIST_DIR}/../tests/mcu" ABSOLUTE)
if(NOT EXISTS "${_mlcc_mcu_dir}/semihost.h")
  get_filename_component(_mlcc_mcu_dir "${CMAKE_CURRENT_LIST_DIR}/../mcu" ABSOLUTE)
endif()
if(MLCC_RV32_FPU)
  set(_mlcc_flags "-march=rv32imafc -mabi=ilp32f -mcmodel=medany")
  set(MLCC_TARGET_ALIAS rv32f CACHE STRING "the mlcc --target of this toolchain")
else()
  set(_mlcc_flags "-march=rv32imac -mabi=ilp32 -mcmodel=medany")
  set(MLCC_TARGET_ALIAS rv32 CACHE STRING "the mlcc --target of this toolchain")
endif()
set(CMAKE_C_FLAGS_INIT "${_mlcc_flags} --specs=picolibc.specs")
set(CMAKE_ASM_FLAGS_INIT "${_mlcc_flags}")
# The paths quoted: a prefix or checkout path may hold spaces.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles \
-L\"${_mlcc_mcu_dir}\" -T\"${_mlcc_mcu_dir}/virt-rv32.ld\" -Wl,--no-warn-execstack")
set(MLCC_MCU_STARTUP ${_mlcc_mcu_dir}/startup_rv32.S ${_mlcc_mcu_dir}/semihost.c)
set(MLCC_MCU_INCLUDE_DIR ${_mlcc_mcu_dir})
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-riscv32 -M virt -bios none -m 32M
  -semihosting-config enable=on,target=native -nographic -monitor none -serial none -kernel)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
