# SPDX-License-Identifier: Apache-2.0
# Driver tests (black box, through the mlcc binary). Included from
# tests/CMakeLists.txt. One CTest test per case of driver_test.py.
set(MLCC_DRIVER_TEST ${CMAKE_CURRENT_LIST_DIR}/driver_test.py)
foreach(case version help print_targets print_jobs bad_flag missing_input truncated_model
             unsupported_op no_partial_output emit_ir depfile end_to_end interrupted
             special_output output_is_directory percent_in_path long_chain input_value)
  add_test(NAME driver.${case}
    COMMAND /usr/bin/python3 ${MLCC_DRIVER_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(driver.${case} PROPERTIES LABELS driver TIMEOUT 300)
endforeach()
# Regression tests of issue 14 (bugs 1, 5, 6, weak point 11) and issue 12 item 6.
set(MLCC_HARDENING_TEST ${CMAKE_CURRENT_LIST_DIR}/hardening_test.py)
foreach(case slice_huge_step pool_huge_stride output_is_input
             default_names fatal_signals closed_pipe file_size_limit stale_temporaries
             depfile_gcc progress_line emit_dot)
  add_test(NAME driver.${case}
    COMMAND /usr/bin/python3 ${MLCC_HARDENING_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(driver.${case} PROPERTIES LABELS driver TIMEOUT 300)
endforeach()
set_tests_properties(driver.emit_dot PROPERTIES
  ENVIRONMENT "MLCC_SHARED_MODELS=${PROJECT_SOURCE_DIR}/../shared/models")
# Issue 12 item 2: -S / --emit=ll|asm through the kernel cache.
set(MLCC_TEXT_OUTPUT_TEST ${CMAKE_CURRENT_LIST_DIR}/text_output_test.py)
foreach(case warm poisoned assembles)
  add_test(NAME driver.text_${case}
    COMMAND /usr/bin/python3 ${MLCC_TEXT_OUTPUT_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(driver.text_${case} PROPERTIES LABELS driver TIMEOUT 300)
endforeach()
# Issue 18: measured tuning and tuning records (docs/tuning.md).
set(MLCC_TUNE_TEST ${CMAKE_CURRENT_LIST_DIR}/tune_test.py)
foreach(case roundtrip other_cpu bad_records cache_admin runner_qemu cmake remote)
  add_test(NAME driver.tune_${case}
    COMMAND /usr/bin/python3 ${MLCC_TUNE_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(driver.tune_${case} PROPERTIES LABELS driver TIMEOUT 900)
endforeach()
