# Integer kernels of issue 16 (targets/kernels/qgemm.c, passes/quant_fuse.c):
# tests/e2e/make_quant_kernel_cases.py writes hand-made QLinearConv /
# ConvInteger / QLinearMatMul / MatMulInteger / QDQ cases with exact numpy
# int32 references (saturation at both ends, zero points 0/255/-128/127,
# per-channel weights, uint8 weights, K = 1 and K = 8064/9000/9001, odd channel
# counts, groups, strides, dilations; the qk_blk_* and qk_mm* cases aim at the
# tails of the blocked x86 kernel: channel blocks, pixel tiles, odd K, dilated
# segments); run_case.py compares the integer outputs exactly on x86 (AVX2,
# x86-64-v2 and this CPU's -mcpu=native), aarch64 (with and without +dotprod,
# with +i8mm, and on a Cortex-A53) and riscv64 (with and without +v). The rule
# the cases check: a result never depends on the CPU. Included from tests/CMakeLists.txt after MLCC_RUN_CASE is
# set.
set(MLCC_QUANT_KERNEL_CASES ${CMAKE_CURRENT_BINARY_DIR}/quant_kernel_cases)
mlcc_case_generator(quant_kernel.generate quant_kernel_cases quant_kernel
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/make_quant_kernel_cases.py ${MLCC_QUANT_KERNEL_CASES})
set(MLCC_QUANT_KERNEL_CASE_NAMES
  qk_conv3x3_u8s8_perchannel qk_conv_saturate_u8 qk_conv_saturate_s8 qk_conv_zp_extremes_a
  qk_conv_zp_extremes_b qk_conv_s8x_u8w qk_conv_groups_stride qk_conv_k1 qk_conv1x1_k67
  qk_convint_huge_k qk_convint_u8_zp qk_convint_s8
  qk_blk_m40_odd_k qk_blk_dilated_odd_seg qk_blk_group_mg5_u8w qk_blk_convint_huge_k
  qk_mm_u8s8_percol qk_mm_s8_u8w_saturate qk_mm_1d_a qk_mmint_huge_k qk_mmint_k1
  qk_amx_k216_m40_ow53 qk_amx_k81_ow150_s8x qk_amx_dilated_s2 qk_amx_1pixel_k2700
  qk_amx_mm_m1_k3000 qk_amx_mm_s8a_m100
  qk_dw3x3_pad qk_dw_stride2_mult2 qk_dw5x5_dilated_u8w qk_convint_dw
  qk_pack_vec_u8_3x3 qk_pack_vec_s8_u8w_stride2 qk_pack_vec_1x1_groups
  qk_dwp_cast_f32 qk_dwp_cast_i32_tail qk_dwp_w32_s8_sat qk_dwp_stride2_mult3 qk_dwp_stride3_5x5_u8w qk_dwp_7x7 qk_dwp_big_plane
  qk_dwd_14_wzp qk_dwd_5x5_s2_mult2 qk_dwd_w64_s4 qk_dwp_w30_wzp qk_convint_dwd
  qdq_mobilenet_block qdq_conv_relu_u8 qdq_conv_clip_s8 qdq_conv_float_bias_stride qdq_conv_chain
  qdq_conv_axis1_stays_float
  qk_arm_k45_m17 qk_arm_s8x_dilated_m33 qk_arm_1x1_k6 qk_arm_mm_k19_n21 qk_arm_mm_s8a_n48
  qk_arm_mmint_s8a_k70)
foreach(variant x86 x86_v2 x86_native x86_amx aarch64 aarch64_dotprod aarch64_i8mm aarch64_a53 riscv
        riscv_v128 riscv_v256)
  if(variant STREQUAL "x86")
    set(args --target x86)
  elseif(variant STREQUAL "x86_v2")
    set(args --target x86 --mcpu x86-64-v2)
  elseif(variant STREQUAL "x86_native")  # this CPU's features (VNNI's vpdpwssd where it has it)
    set(args --target x86 --mcpu native)
  elseif(variant STREQUAL "x86_amx")  # the AMX form (amx_block), skipped on CPUs without AMX-INT8
    set(args --target x86 --mcpu sapphirerapids --require-cpu-flag amx_int8)
  elseif(variant STREQUAL "aarch64")
    set(args --target aarch64)
  elseif(variant STREQUAL "aarch64_dotprod")
    set(args --target aarch64 --mattr=+neon,+dotprod)
  elseif(variant STREQUAL "aarch64_i8mm")  # usmmla (qemu's default "max" CPU has FEAT_I8MM)
    set(args --target aarch64 --mattr=+neon,+dotprod,+i8mm)
  elseif(variant STREQUAL "aarch64_a53")  # no dotprod: built for and run on a Cortex-A53
    set(args --target aarch64 --mcpu cortex-a53 --qemu-cpu cortex-a53)
  elseif(variant STREQUAL "riscv")
    set(args --target riscv)
  else()
    string(REPLACE "riscv_v" "" vlen ${variant})
    set(args --target riscv --mattr=+v --qemu-cpu rv64,v=true,vlen=${vlen},vext_spec=v1.0)
  endif()
  foreach(case ${MLCC_QUANT_KERNEL_CASE_NAMES})
    mlcc_case_test(quant_kernel.${case}.${variant} ${MLCC_QUANT_KERNEL_CASES}/${case}
      FIXTURE quant_kernel_cases SKIP77 LABELS quant_kernel TIMEOUT 600 ARGS ${args})
  endforeach()
endforeach()
# The QDQ graphs without quant-fuse (float Conv between Q/DQ, the unfused
# graph) against the same exact references: issue 16's rule, every element
# within one quantization step and at least 99% identical (run_case.py
# --quant-step). The default -O2 pipeline minus quant-fuse and quant-pack:
set(MLCC_QUANT_UNFUSED_PASSES
  infer-shapes,remove-identity,fold-constants,fold-batchnorm,fold-constants,canonicalize,dce,pack-weights,fuse,plan-memory)
foreach(case qdq_mobilenet_block qdq_conv_relu_u8 qdq_conv_clip_s8 qdq_conv_float_bias_stride qdq_conv_chain
             qdq_conv_axis1_stays_float)
  mlcc_case_test(quant_kernel.${case}.unfused.x86 ${MLCC_QUANT_KERNEL_CASES}/${case}
    FIXTURE quant_kernel_cases LABELS quant_kernel TIMEOUT 600
    ARGS --target x86 --quant-step auto --mlcc-flag=--passes=${MLCC_QUANT_UNFUSED_PASSES})
endforeach()
# A re-quantized model (new weights, scales, zero points, bias) compiles 0
# kernels against the original's cache, and both match their references.
add_test(NAME quant_kernel.requantized_zero_kernels
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/quant_requantized_test.py
          $<TARGET_FILE:mlcc>)
set_tests_properties(quant_kernel.requantized_zero_kernels PROPERTIES
  LABELS quant_kernel TIMEOUT 600)
# The same cases on the microcontroller boards (issue 17; tests/mcu/run_mcu.py
# under qemu-system, integer outputs compared exactly): the dense kernels run
# targets/kernels/qgemm_mcu.c's inner loops, SMLAD on cortex-m4, Helium
# VMLADAVA on cortex-m55, plain 32-bit code on rv32 (rv32f runs the same
# integer code as rv32).
foreach(target cortex-m4 cortex-m55 rv32)
  foreach(case ${MLCC_QUANT_KERNEL_CASE_NAMES})
    add_test(NAME quant_kernel.${case}.${target}
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc>
              --case ${MLCC_QUANT_KERNEL_CASES}/${case} --target ${target})
    set_tests_properties(quant_kernel.${case}.${target} PROPERTIES
      FIXTURES_REQUIRED quant_kernel_cases LABELS "quant_kernel;mcu" TIMEOUT 600)
  endforeach()
endforeach()
# The other two inner loops on Arm: the plain one on a Cortex-M4 without DSP
# (-mattr=-dsp) and SMLAD on a Cortex-M55 without Helium (-mattr=-mve.fp,-mve).
foreach(variant cortex-m4_nodsp cortex-m55_dsp)
  if(variant STREQUAL "cortex-m4_nodsp")
    set(args --target cortex-m4 --mlcc-flag=-mattr=-dsp)
  else()
    set(args --target cortex-m55 --mlcc-flag=-mattr=-mve.fp,-mve)
  endif()
  foreach(case qk_conv3x3_u8s8_perchannel qk_conv_s8x_u8w qk_conv1x1_k67 qk_convint_huge_k
               qk_conv_zp_extremes_a qdq_conv_chain)
    add_test(NAME quant_kernel.${case}.${variant}
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc>
              --case ${MLCC_QUANT_KERNEL_CASES}/${case} ${args})
    set_tests_properties(quant_kernel.${case}.${variant} PROPERTIES
      FIXTURES_REQUIRED quant_kernel_cases LABELS "quant_kernel;mcu" TIMEOUT 600)
  endforeach()
endforeach()
