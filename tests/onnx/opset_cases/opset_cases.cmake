# SPDX-License-Identifier: Apache-2.0
# The opset 18-26 cases (issue 15): tests/onnx/opset_cases/cases/<name>/ in the
# ONNX backend-test layout, expected outputs from onnxruntime-node 1.30
# (make_opset_cases.py writes them; they are committed). Each case runs on x86
# (label onnx) and on aarch64 and riscv64 under qemu-user: the cases in
# MLCC_OPSET_CROSS_SAMPLE below in the default run (labels onnx;cross), the
# others as the full cross run (label opset-cross-full, also cross-slow so that
# scripts/test.sh leaves them out: ctest -L opset-cross-full runs them). An UNIMPLEMENTED
# refusal fails the test: run_case.py's exit 77 is not a skip here.
# opset_cases.oracle_check regenerates every case with onnxruntime-node and
# compares the bytes with the committed ones (skipped when tools/ort is absent).
# Included from tests/CMakeLists.txt after MLCC_RUN_CASE is set.
set(MLCC_OPSET_CASES ${CMAKE_CURRENT_LIST_DIR}/cases)
set(MLCC_OPSET_GEN ${CMAKE_CURRENT_LIST_DIR}/make_opset_cases.py)
file(GLOB MLCC_OPSET_CASE_DIRS LIST_DIRECTORIES true CONFIGURE_DEPENDS ${MLCC_OPSET_CASES}/*)
set(MLCC_OPSET_CROSS_SAMPLE reduce18_mean_axes_input split18_num_outputs_uneven
  bitwise18_and_or_xor_not_int32 gelu20_tanh groupnorm21_per_channel pad19_wrap
  rmsnorm23_last_axis rotary23_4d_position_ids quantize19_per_axis_int8
  attention23_past_kv_float_mask_causal attention23_bool_mask_input_causal_gqa
  attention23_qk_mode2_bool_mask_past_present attention23_float16_softmax_precision_float
  attention24_nonpad_kv_seqlen_causal_gqa attention25_window_bidir_mask_input_gqa
  attention25_window_nonpad_causal quantize21_block_size_axis1_uneven
  dequantize21_int16_uint16
  lppool18_ceil_mode_dilations_p3 llama_block23 deformconv19_groups_mask_bias
  resize18_antialias_linear_many_taps resize19_half_pixel_symmetric_antialias_not_larger
  pad19_wrap_negative_pads_axes gridsample20_5d_linear_reflection
  int4_storage21_initializers_constant_io
  cast19_float8e4m3fn_roundtrip_saturate0 cast19_float8e5m2fnuz_roundtrip_saturate1
  cast19_double_int_to_float8 cast21_float8_io_bits
  dequantize21_int4_block32_weights_matmul quantize21_int4_block_size_axis1
  dequantize24_int4_uint4_runtime_per_tensor_per_axis
  qdq21_float8_io_bits qdq19_float8e4m3fn_nonzero_zero_points
  cast21_int4_uint4_to_from movement21_uint4_pad_shape_size_constantofshape if21_int4_branches
  loop21_int4_carried_and_scan_output cast24_float8e8m0_io_bits
  int2_25_storage_cast_transpose qdq25_int2_uint2_block_weights_matmul
  cast23_float4e2m1_all_codes_and_sweep cast23_float4e2m1_io_bits_sources_movement
  qdq23_float4e2m1_per_axis)
foreach(dir ${MLCC_OPSET_CASE_DIRS})
  if(NOT IS_DIRECTORY ${dir})
    continue()
  endif()
  get_filename_component(case ${dir} NAME)
  # The float8 and float4 cases compare exactly: one float8 step of a subnormal is below
  # the default atol (float8e5m2fnuz's smallest value is 7.6e-6).
  set(exact)
  if(case MATCHES "float8|float4")
    set(exact --rtol 0 --atol 0)
  endif()
  add_test(NAME opset_cases.${case}.x86
    COMMAND ${MLCC_PYTHON} ${MLCC_RUN_CASE} --mlcc $<TARGET_FILE:mlcc> --case ${dir}
            --target x86 ${exact})
  set_tests_properties(opset_cases.${case}.x86 PROPERTIES LABELS onnx TIMEOUT 300)
  # Attention at -O0 runs the reference kernel (targets/kernels/attention.c)
  # instead of expand-attention's MatMul/Softmax graph: the path of
  # microcontrollers and of very long sequences.
  if(case MATCHES "^attention2")
    add_test(NAME opset_cases.${case}.x86_kernel
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_CASE} --mlcc $<TARGET_FILE:mlcc> --case ${dir}
              --target x86 --opt=-O0)
    set_tests_properties(opset_cases.${case}.x86_kernel PROPERTIES LABELS onnx TIMEOUT 300)
  endif()
  # Every case also runs on aarch64 and riscv64: the sample in the default run
  # (labels onnx;cross), the rest as the full cross run, outside it
  # (labels opset-cross-full;cross-slow: ctest -L opset-cross-full).
  if(case IN_LIST MLCC_OPSET_CROSS_SAMPLE)
    set(cross_labels "onnx;cross")
  else()
    set(cross_labels "opset-cross-full;cross-slow")
  endif()
  foreach(target aarch64 riscv)
    add_test(NAME opset_cases.${case}.${target}
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_CASE} --mlcc $<TARGET_FILE:mlcc> --case ${dir}
              --target ${target} ${exact})
    set_tests_properties(opset_cases.${case}.${target} PROPERTIES LABELS "${cross_labels}"
      TIMEOUT 600)
  endforeach()
endforeach()
add_test(NAME opset_cases.oracle_check COMMAND ${MLCC_PYTHON} ${MLCC_OPSET_GEN} --check)
set_tests_properties(opset_cases.oracle_check PROPERTIES LABELS onnx SKIP_RETURN_CODE 77
  TIMEOUT 300)
# Every model of ../shared/models re-exported at opset 21 by bump_opset.py (the
# Reduce* axes attribute moved to an input, ...) must match its own reference:
# model.<name>.opset21.<target> (skipped with a message when ../shared is
# absent; an UNIMPLEMENTED refusal fails).
set(MLCC_OPSET_BUMP ${CMAKE_CURRENT_LIST_DIR}/run_bumped.py)
foreach(model resnet18 mobilenet_v2 squeezenet1_1 detector mlp transformer
        tiny/ad_autoencoder tiny/ic_resnet8 tiny/kws_dscnn tiny/vww_mobilenet)
  get_filename_component(name ${model} NAME)
  set(targets x86)
  if(name STREQUAL "mlp" OR name STREQUAL "kws_dscnn")
    list(APPEND targets aarch64 riscv)
  endif()
  foreach(target ${targets})
    add_test(NAME model.${name}.opset21.${target}
      COMMAND ${MLCC_PYTHON} ${MLCC_OPSET_BUMP} --mlcc $<TARGET_FILE:mlcc>
              --case ${MLCC_SHARED_MODELS}/${model} --opset 21 --target ${target})
    set(labels "model;onnx")
    if(NOT target STREQUAL "x86")
      set(labels "model;onnx;cross")
    endif()
    set_tests_properties(model.${name}.opset21.${target} PROPERTIES SKIP_RETURN_CODE 77
      LABELS "${labels}" TIMEOUT 1800)
  endforeach()
endforeach()
