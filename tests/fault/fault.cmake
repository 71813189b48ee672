# SPDX-License-Identifier: Apache-2.0
# Allocation-failure sweep (owner: robust): included from tests/CMakeLists.txt.
add_executable(alloc_fault_test ${CMAKE_CURRENT_LIST_DIR}/alloc_fault_test.c)
target_link_libraries(alloc_fault_test PRIVATE ${MLCC_LINK_ALL})
target_link_options(alloc_fault_test PRIVATE
  "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strdup,--wrap=strndup")
add_test(NAME fault.alloc_sweep
  COMMAND alloc_fault_test ${CMAKE_CURRENT_LIST_DIR}/small.onnx)
set_tests_properties(fault.alloc_sweep PROPERTIES LABELS "fault;unit" TIMEOUT 600)
