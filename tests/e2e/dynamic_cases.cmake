# Data-dependent output shapes (NonZero, Compress, Unique, NonMaxSuppression):
# tests/e2e/make_dynamic_cases.py writes cases with numpy references whose data
# sets have different actual output shapes; run_case.py checks the shapes
# NAME_output_shape reports and the values. Included from tests/CMakeLists.txt.
set(MLCC_DYNAMIC_CASES ${CMAKE_CURRENT_BINARY_DIR}/dynamic_cases)
mlcc_case_generator(dynamic_cases.generate dynamic_cases dynamic
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/make_dynamic_cases.py ${MLCC_DYNAMIC_CASES})
set(MLCC_DYNAMIC_CASE_NAMES
  dyn_compress_axis1_i32 dyn_compress_flat_f16 dyn_compress_short_cond dyn_mixed_outputs
  dyn_nms_center0 dyn_nms_center1 dyn_nms_no_score_threshold dyn_nonzero_bool
  dyn_nonzero_f32 dyn_nonzero_i8 dyn_unique_f32_axis-1_sorted1 dyn_unique_f32_axis0_sorted1
  dyn_unique_f32_axis1_sorted0 dyn_unique_i64_sorted0 dyn_unique_i64_sorted1
  dyn_unique_i8_y_counts)
foreach(case ${MLCC_DYNAMIC_CASE_NAMES})
  mlcc_case_test(dynamic_cases.${case}.x86 ${MLCC_DYNAMIC_CASES}/${case}
    FIXTURE dynamic_cases LABELS dynamic TIMEOUT 300 ARGS --target x86)
endforeach()
foreach(target aarch64 riscv)
  foreach(case dyn_mixed_outputs dyn_nms_center1 dyn_unique_f32_axis1_sorted0)
    mlcc_case_test(dynamic_cases.${case}.${target} ${MLCC_DYNAMIC_CASES}/${case}
      FIXTURE dynamic_cases LABELS dynamic TIMEOUT 600 ARGS --target ${target})
  endforeach()
endforeach()
