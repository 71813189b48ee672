# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: x86-64 Linux with the host gcc (for symmetry with
# the cross toolchain files; no emulator needed).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER gcc)
set(CMAKE_CXX_COMPILER g++)
