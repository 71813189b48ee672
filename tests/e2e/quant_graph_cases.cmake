# Quantized regions of issue 16 (passes/quant_fuse.c: int8 data movement, QDQ
# MatMul / Gemm, int8 Add / Mul / average pools / Concat): tests/e2e/make_quant_graph_cases.py writes QDQ graphs with
# exact numpy references (ONNX Q/DQ in float32, int32 accumulation, the spec's
# requantization); run_case.py compares the integer outputs exactly on x86,
# aarch64 and riscv64. Included from tests/CMakeLists.txt after MLCC_RUN_CASE.
set(MLCC_QUANT_GRAPH_CASES ${CMAKE_CURRENT_BINARY_DIR}/quant_graph_cases)
mlcc_case_generator(quant_graph.generate quant_graph_cases quant_graph
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/make_quant_graph_cases.py ${MLCC_QUANT_GRAPH_CASES})
set(MLCC_QUANT_GRAPH_CASE_NAMES qg_move_u8 qg_move_s8_zp127 qg_move_s8_zpm128
  qg_matmul_percol qg_matmul_batched_relu qg_gemm_transb_bias_clip qg_gemm_float_bias_s8
  qg_matmul_saturate_u8w qg_matmul_act_s8 qg_matmul_act_bcast_u8 qg_sigmoid_u8 qg_sigmoid_s8 qg_gemm_k1000_zp0 qg_gemm_transa_float qg_gemm_alpha_float
  # int8 Add / Mul / pools / Concat (QDQ, then the com.microsoft QOperator form)
  qg_add_u8 qg_add_u8_qop qg_add_relu_u8 qg_add_bcast_s8 qg_add_bcast_s8_qop
  qg_add_bcast_u8_zp0_255 qg_add_bcast_u8_zp0_255_qop qg_mul_chan_u8 qg_mul_chan_u8_qop
  qg_mul_s8_sat qg_mul_s8_sat_qop qg_mul_scalar_s8 qg_mul_scalar_s8_qop qg_gap_u8
  qg_gap_u8_qop qg_gap_s8_sat qg_gap_s8_sat_qop qg_avgpool_u8 qg_avgpool_u8_qop
  qg_avgpool_s8_ceil qg_avgpool_s8_ceil_qop qg_avgpool_s8_incl_pad qg_avgpool_s8_incl_pad_qop qg_concat_u8 qg_concat_u8_qop
  qg_concat_s8_last qg_concat_s8_last_qop qg_add_shared_dq)
foreach(variant x86 aarch64 riscv)
  foreach(case ${MLCC_QUANT_GRAPH_CASE_NAMES})
    mlcc_case_test(quant_graph.${case}.${variant} ${MLCC_QUANT_GRAPH_CASES}/${case}
      FIXTURE quant_graph_cases LABELS quant_graph TIMEOUT 600 ARGS --target ${variant})
  endforeach()
endforeach()
# onnxruntime-node as the oracle of the com.microsoft QOperator cases
# (qg_*_qop): within one step of the reference, >= 99% identical; skipped
# (77) without tools/ort.
add_test(NAME quant_graph.ort_contrib
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/quant/ort_contrib_check.py
          ${MLCC_QUANT_GRAPH_CASES})
set_tests_properties(quant_graph.ort_contrib PROPERTIES
  FIXTURES_REQUIRED quant_graph_cases LABELS quant_graph SKIP_RETURN_CODE 77 TIMEOUT 600)
