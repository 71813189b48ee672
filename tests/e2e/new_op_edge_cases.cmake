# Edge cases of the issue-5 operators (valid but unusual models: empty
# tensors, size-1 dims, negative axes, per-axis parameters, zero-length
# sequences, sparse TfIdf coordinates, subgraph naming, legacy op forms,
# bfloat16 specials): tests/e2e/make_new_op_edge_cases.py writes them with
# numpy references; run_case.py checks the values. Meant to be included from
# tests/CMakeLists.txt (after MLCC_RUN_CASE is set), like dynamic_cases.cmake.
set(MLCC_NEW_OP_EDGE_CASES ${CMAKE_CURRENT_BINARY_DIR}/new_op_edge_cases)
mlcc_case_generator(new_op_edge_cases.generate new_op_edge_cases new_op_edge
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/make_new_op_edge_cases.py ${MLCC_NEW_OP_EDGE_CASES})
set(MLCC_NEW_OP_EDGE_CASE_NAMES
  ne_bf16_cast_specials ne_cf_nested_and_while ne_cf_subgraph_names ne_compress_unique_empty
  ne_convint_empty_and_1x1 ne_dequant_per_axis_int32 ne_det_edges ne_dft_empty_batch
  ne_dft_lengths ne_dynquant_edges ne_if_one_elem_cond ne_legacy_broadcast_axis
  ne_legacy_opset1 ne_legacy_opset2 ne_legacy_opset6 ne_legacy_opset7 ne_legacy_softmax11
  ne_loop_edges ne_mmi_edges ne_nms_edges ne_nonzero_scalar ne_qconv_group_pads_per_channel
  ne_qmm_batch_bcast ne_qmm_per_row_col ne_quant_per_axis_neg ne_quant_saturate_inf
  ne_quant_scalar_and_empty ne_reverse_sequence_edges ne_rnn_zero_sizes
  ne_scan_axes_directions ne_stft_edges ne_tfidf_many_ngrams ne_tfidf_one_col
  ne_tfidf_only_bigrams_min2 ne_tfidf_repeated_ngrams ne_tfidf_sparse_coords
  ne_upsample_edges ne_windows_small)
foreach(case ${MLCC_NEW_OP_EDGE_CASE_NAMES})
  mlcc_case_test(new_op_edge_cases.${case}.x86 ${MLCC_NEW_OP_EDGE_CASES}/${case}
    FIXTURE new_op_edge_cases LABELS new_op_edge TIMEOUT 300 ARGS --target x86)
endforeach()
foreach(target aarch64 riscv)
  foreach(case ne_bf16_cast_specials ne_qconv_group_pads_per_channel ne_tfidf_sparse_coords
               ne_dft_lengths ne_rnn_zero_sizes ne_det_edges ne_nms_edges)
    mlcc_case_test(new_op_edge_cases.${case}.${target} ${MLCC_NEW_OP_EDGE_CASES}/${case}
      FIXTURE new_op_edge_cases LABELS new_op_edge TIMEOUT 600 ARGS --target ${target})
  endforeach()
endforeach()
