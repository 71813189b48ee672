# SPDX-License-Identifier: Apache-2.0
# Run by add_ml_model()'s custom command after mlcc, as
#   cmake -DDEPFILE=<mlcc's depfile> -DSTAMP=<stamp> -P _mlcc_stamp.cmake
# Makes the depfile's target the stamp (the custom command's OUTPUT: Ninja
# and CMake's Makefile generator only read a depfile whose target is the
# rule's output), then touches the stamp. The stamp is the only file of the
# rule whose mtime always moves; mlcc keeps the library, header and
# description when their bytes did not change.
cmake_minimum_required(VERSION 3.20)
if(NOT DEPFILE OR NOT STAMP)
  message(FATAL_ERROR "_mlcc_stamp.cmake: pass -DDEPFILE=<file> -DSTAMP=<file>")
endif()
file(READ "${DEPFILE}" text)
# mlcc writes "<target>: <deps>"; an escaped target holds no ": " (a space in
# a path is written "\ ").
string(FIND "${text}" ": " colon)
if(colon LESS 0)
  message(FATAL_ERROR "_mlcc_stamp.cmake: no target in depfile ${DEPFILE}")
endif()
string(SUBSTRING "${text}" ${colon} -1 rest)
string(REPLACE "$" "$$" target "${STAMP}")
string(REPLACE "#" "\\#" target "${target}")
string(REPLACE " " "\\ " target "${target}")
set(new "${target}${rest}")
if(NOT new STREQUAL text)
  file(WRITE "${DEPFILE}.tmp" "${new}")
  file(RENAME "${DEPFILE}.tmp" "${DEPFILE}")
endif()
file(TOUCH "${STAMP}")
