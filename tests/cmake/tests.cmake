# SPDX-License-Identifier: Apache-2.0
# Tests of cross targets, depfiles and the CMake rules (cmake/MLModel.cmake).
# Included from tests/CMakeLists.txt.
#   driver.targets.*     --print-targets, -### per target, bad --target, depfile text, -c and
#                        libraries through the kernel cache, --describe
#   cmake.consumer.*     tests/cmake/consumer with Ninja / Unix Makefiles: build, ctest,
#                        no-op rebuild, touch model/external data -> mlcc once per target,
#                        reproducible fleet bundle
#   cmake.toolchain.*    the consumer with each toolchains/*.cmake, its test run by ctest
#                        (under qemu-user for aarch64 and riscv64)
#   cmake.install        cmake --install to a scratch prefix + find_package(mlcc)
#   cmake.example        examples/detector: all three targets in one build, same top boxes
#   cmake.errors         wrong add_ml_model()/ml_model_bundle() calls fail at configure time
#   cmake.bundle.identity  the fleet bundle from a host and an aarch64-toolchain configuration:
#                        libraries, headers, manifest and tarball byte-identical
#   cmake.example.kws    examples/kws: the same five, each app against the reference scores
#                        and the five against each other (skipped without ../shared)
#   cmake.mcu_fleet      x86 aarch64 riscv cortex-m4 rv32 in one build; board apps under
#                        qemu-system; the manifest's RAM/flash per variant = mlcc -v = header
set(MLCC_DRIVER_TARGETS_TEST ${CMAKE_CURRENT_LIST_DIR}/driver_targets_test.py)
foreach(case print_targets jobs bad_target depfile outputs_cache describe)
  add_test(NAME driver.targets.${case}
    COMMAND ${MLCC_PYTHON} ${MLCC_DRIVER_TARGETS_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(driver.targets.${case} PROPERTIES LABELS driver TIMEOUT 300)
endforeach()

set(MLCC_CONSUMER_TEST ${MLCC_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/consumer_test.py
  --mlcc $<TARGET_FILE:mlcc> --source ${PROJECT_SOURCE_DIR} --build ${PROJECT_BINARY_DIR})
foreach(case native-ninja native-make toolchain-x86_64 toolchain-aarch64 toolchain-riscv64
             install example errors bundle-identity mcu-fleet example-kws)
  string(REPLACE "native-" "consumer." name ${case})
  string(REPLACE "toolchain-" "toolchain." name ${name})
  string(REPLACE "bundle-" "bundle." name ${name})
  string(REPLACE "mcu-fleet" "mcu_fleet" name ${name})
  string(REPLACE "example-kws" "example.kws" name ${name})
  add_test(NAME cmake.${name} COMMAND ${MLCC_CONSUMER_TEST} ${case})
  set(labels cmake)
  if(case MATCHES "aarch64|riscv64|install|example|mcu")
    list(APPEND labels cross)
  endif()
  set_tests_properties(cmake.${name} PROPERTIES LABELS "${labels}" TIMEOUT 900
    SKIP_RETURN_CODE 77)
endforeach()
