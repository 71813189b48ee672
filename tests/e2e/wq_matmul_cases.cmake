# Weight-only quantized MatMul (int4/uint4/int8/uint8 constant weight ->
# DequantizeLinear -> MatMul / Gemm with float32 activations; quant-fuse's
# WQMatMul, targets/kernels/wq_matmul.c): tests/e2e/make_wq_matmul_cases.py
# writes the cases with numpy references of the spec's float chain and a
# per-case absolute bound of the float32 summation error (tolerance.txt);
# x86 (AVX2 and this CPU's features), aarch64, riscv64 and riscv64 + RVV
# under qemu. wq_matmul.size checks that the 1024x1024 int4 weight stays
# packed in the library (NAME_WEIGHTS_SIZE and the weights section).
# Included from tests/CMakeLists.txt after MLCC_RUN_CASE.
set(MLCC_WQ_CASES ${CMAKE_CURRENT_BINARY_DIR}/wq_matmul_cases)
mlcc_case_generator(wq_matmul.generate wq_matmul_cases wq_matmul
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/make_wq_matmul_cases.py ${MLCC_WQ_CASES})
set(MLCC_WQ_CASE_NAMES wq_i4_b32_m1 wq_u4_b16_ntail wq_i4_b64_ktail_nozp wq_u4_b128_zp_one
  wq_i4_b16_odd_k wq_u4_b33_odd_block wq_i4_b32_m9_relu wq_i4_b32_batched wq_u4_b32_1d
  wq_i4_pertensor wq_u4_percol wq_i8_percol wq_u8_b32 wq_i8_b64_nozp_m16
  wq_gemm_tb_i4_b32_bias wq_gemm_u4_b16_bias1 wq_gemm_tb_i8_percol wq_i4_b32_1024)
foreach(variant x86 x86_native aarch64 riscv riscv_v256)
  if(variant STREQUAL "x86_native")
    set(args --target x86 --mcpu native)
  elseif(variant STREQUAL "riscv_v256")
    set(args --target riscv --mattr=+v --qemu-cpu rv64,v=true,vlen=256,vext_spec=v1.0)
  else()
    set(args --target ${variant})
  endif()
  foreach(case ${MLCC_WQ_CASE_NAMES})
    mlcc_case_test(wq_matmul.${case}.${variant} ${MLCC_WQ_CASES}/${case}
      FIXTURE wq_matmul_cases LABELS wq_matmul TIMEOUT 600
      ARGS ${args} --tolerance-file tolerance.txt)
  endforeach()
endforeach()
add_test(NAME wq_matmul.size
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/wq_size_check.py
          $<TARGET_FILE:mlcc> ${MLCC_WQ_CASES}/wq_i4_b32_1024/model.onnx)
set_tests_properties(wq_matmul.size PROPERTIES FIXTURES_REQUIRED wq_matmul_cases
  LABELS wq_matmul TIMEOUT 600)
