# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: bare-metal Arm Cortex-M with Debian's gcc-arm-none-eabi
# and picolibc-arm-none-eabi, for the qemu-system boards of tests/mcu/
# (docs/mcu.md). MLCC_MCU_BOARD picks the board and with it the core:
#   mps2-an386  Cortex-M4F (fpv4-sp-d16), mlcc --target=cortex-m4 (default)
#   mps3-an547  Cortex-M55 (Helium, fp-armv8d16), mlcc --target=cortex-m55
# Executables link with the board's linker script (flash + SRAM regions, the
# weights' .mlcc_weights output section) and must add the start-up sources in
# MLCC_MCU_STARTUP (vector table, FPU enable, semihosting exit). Programs run
# under qemu-system-arm with semihosting (CMAKE_CROSSCOMPILING_EMULATOR): file
# I/O relative to the working directory, the exit status of main.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# Test programs of try_compile cannot link without the start-up file.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(MLCC_MCU_BOARD "mps2-an386" CACHE STRING "mps2-an386 (Cortex-M4F) or mps3-an547 (Cortex-M55)")
# The board files: tests/mcu of a checkout, or share/mlcc/mcu beside the
# installed share/mlcc/toolchains.
get_filename_component(_mlcc_mcu_dir "${CMAKE_CURRENT_LIST_DIR}/../tests/mcu" ABSOLUTE)
if(NOT EXISTS "${_mlcc_mcu_dir}/semihost.h")
  get_filename_component(_mlcc_mcu_dir "${CMAKE_CURRENT_LIST_DIR}/../mcu" ABSOLUTE)
endif()
if(MLCC_MCU_BOARD STREQUAL "mps2-an386")
  set(_mlcc_flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
  set(MLCC_TARGET_ALIAS cortex-m4 CACHE STRING "the mlcc --target of this toolchain")
  set(_mlcc_qemu qemu-system-arm -M mps2-an386 -cpu cortex-m4)
elseif(MLCC_MCU_BOARD STREQUAL "mps3-an547")
  set(_mlcc_flags "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard")
  set(MLCC_TARGET_ALIAS cortex-m55 CACHE STRING "the mlcc --target of this toolchain")
  set(_mlcc_qemu qemu-system-arm -M mps3-an547)
else()
  message(FATAL_ERROR "MLCC_MCU_BOARD=${MLCC_MCU_BOARD}: use mps2-an386 or mps3-an547")
endif()
set(CMAKE_C_FLAGS_INIT "${_mlcc_flags} --specs=picolibc.specs")
set(CMAKE_ASM_FLAGS_INIT "${_mlcc_flags}")
# The paths quoted: a prefix or checkout path may hold spaces.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles \
-L\"${_mlcc_mcu_dir}\" -T\"${_mlcc_mcu_dir}/${MLCC_MCU_BOARD}.ld\" -Wl,--no-warn-rwx-segments \
-Wl,--no-warn-execstack")
set(MLCC_MCU_STARTUP ${_mlcc_mcu_dir}/startup_cortex_m.c ${_mlcc_mcu_dir}/semihost.c)
set(MLCC_MCU_INCLUDE_DIR ${_mlcc_mcu_dir})
set(CMAKE_CROSSCOMPILING_EMULATOR ${_mlcc_qemu} -semihosting-config enable=on,target=native
  -nographic -monitor none -serial none -kernel)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
