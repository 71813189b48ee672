# SPDX-License-Identifier: Apache-2.0
# Microcontroller tests (tests/mcu/README.md, label mcu): the MLPerf Tiny
# models of ../shared/models/tiny compiled for every MCU target and run on a
# qemu-system board through the semihosting harness (mcu.<model>.<target>; and
# with -fwinograd, mcu.winograd.ic_resnet8.<target>), each run's measured stack
# against NAME_STACK_SIZE,
# nm of every archive against the allowed symbols (mcu.symbols.<target>), and
# the weights section in the archive and the linked image
# (mcu.weights_section.<target>), and the toolchain files
# (mcu.cmake_toolchain.<target>), and the workspace against the planner's
# live-set bound (mcu.workspace_bound), and long sums (mcu.sum.<case>.<target>, made
# here, always run). The rest is skipped with a message when the shared
# models are absent.
set(MLCC_RUN_MCU ${CMAKE_CURRENT_LIST_DIR}/run_mcu.py)
set(MLCC_TINY_MODELS "${MLCC_SHARED_MODELS}/tiny")
set(MLCC_TINY kws_dscnn vww_mobilenet ic_resnet8 ad_autoencoder)
foreach(target cortex-m4 cortex-m55 rv32 rv32f)
  set(tiny_cases "")
  foreach(model ${MLCC_TINY})
    add_test(NAME mcu.${model}.${target}
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc>
              --case ${MLCC_TINY_MODELS}/${model} --target ${target} --skip-if-missing)
    set_tests_properties(mcu.${model}.${target} PROPERTIES SKIP_RETURN_CODE 77 LABELS mcu
      TIMEOUT 600)
    list(APPEND tiny_cases --case ${MLCC_TINY_MODELS}/${model})
  endforeach()
  add_test(NAME mcu.symbols.${target}
    COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc> --symbols
            --target ${target} ${tiny_cases} --skip-if-missing)
  set_tests_properties(mcu.symbols.${target} PROPERTIES SKIP_RETURN_CODE 77 LABELS mcu
    TIMEOUT 600)
endforeach()
foreach(target cortex-m4 rv32)
  add_test(NAME mcu.weights_section.${target}
    COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc>
            --weights-section .mlcc.flash_weights --target ${target}
            --case ${MLCC_TINY_MODELS}/kws_dscnn --skip-if-missing)
  set_tests_properties(mcu.weights_section.${target} PROPERTIES SKIP_RETURN_CODE 77
    LABELS mcu TIMEOUT 600)
endforeach()
# Winograd on (-fwinograd): its panels are stack buffers the target's own
# NAME_STACK_SIZE must cover (every run checks the painted stack against it).
foreach(target cortex-m4 cortex-m55)
  add_test(NAME mcu.winograd.ic_resnet8.${target}
    COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc> --mlcc-flag=-fwinograd
            --case ${MLCC_TINY_MODELS}/ic_resnet8 --target ${target} --skip-if-missing)
  set_tests_properties(mcu.winograd.ic_resnet8.${target} PROPERTIES SKIP_RETURN_CODE 77
    LABELS mcu TIMEOUT 600)
endforeach()
# The toolchain files (toolchains/arm-none-eabi.cmake, riscv32-unknown-elf.cmake):
# a consumer project built with each, its test run by ctest through
# CMAKE_CROSSCOMPILING_EMULATOR (qemu-system with semihosting).
foreach(target cortex-m4 cortex-m55 rv32 rv32f)
  add_test(NAME mcu.cmake_toolchain.${target}
    COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc> --cmake-consumer
            --target ${target} --case ${MLCC_TINY_MODELS}/kws_dscnn --skip-if-missing)
  set_tests_properties(mcu.cmake_toolchain.${target} PROPERTIES SKIP_RETURN_CODE 77
    LABELS mcu TIMEOUT 600)
endforeach()
# The planned workspace of every tiny model equals the planner's live-set lower
# bound (and that is within the manifest's memory.fused.peak_live_bytes).
set(tiny_cases "")
foreach(model ${MLCC_TINY})
  list(APPEND tiny_cases --case ${MLCC_TINY_MODELS}/${model})
endforeach()
add_test(NAME mcu.workspace_bound
  COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc> --workspace-bound
          --target cortex-m4 ${tiny_cases} --skip-if-missing)
set_tests_properties(mcu.workspace_bound PROPERTIES SKIP_RETURN_CODE 77 LABELS mcu TIMEOUT 600)
# Long float32 sums whose block sums a plain float accumulation would lose
# (make_sum_cases.py): the compensated sum (cortex-m4, rv32, rv32f) and the
# double one (cortex-m55) must give the float64 reference within rtol 1e-6.
set(MLCC_MCU_SUM_DIR ${CMAKE_CURRENT_BINARY_DIR}/mcu_sum_cases)
add_test(NAME mcu.sum.generate
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/make_sum_cases.py ${MLCC_MCU_SUM_DIR})
set_tests_properties(mcu.sum.generate PROPERTIES FIXTURES_SETUP mcu_sum LABELS mcu)
foreach(case reduce_sum_64k global_avgpool_64k)
  foreach(target cortex-m4 cortex-m55 rv32 rv32f)
    add_test(NAME mcu.sum.${case}.${target}
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc>
              --case ${MLCC_MCU_SUM_DIR}/${case} --target ${target} --rtol 1e-6 --atol 0)
    set_tests_properties(mcu.sum.${case}.${target} PROPERTIES FIXTURES_REQUIRED mcu_sum
      LABELS mcu TIMEOUT 600)
  endforeach()
endforeach()
# ONNX node cases on the Arm hard-float and the soft-float RISC-V targets
# (node_cases.txt).
set(MLCC_MCU_NODE_DATA /usr/share/libonnx-testdata/data/node)
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/node_cases.txt MLCC_MCU_NODE_CASES REGEX "^test_")
foreach(case ${MLCC_MCU_NODE_CASES})
  foreach(target cortex-m4 rv32)
    add_test(NAME mcu.node.${case}.${target}
      COMMAND ${MLCC_PYTHON} ${MLCC_RUN_MCU} --mlcc $<TARGET_FILE:mlcc>
              --case ${MLCC_MCU_NODE_DATA}/${case} --target ${target} --skip-if-missing)
    set_tests_properties(mcu.node.${case}.${target} PROPERTIES SKIP_RETURN_CODE 77
      LABELS mcu TIMEOUT 300)
  endforeach()
endforeach()
# int8 (issue 17): the tiny models quantized by scripts/quantize.py
# (mcu.q.<model>.prepare, the quant tests' prepare step: calibrated with
# onnxruntime-node from tools/ort, QDQ and QOperator forms), compiled for
# every MCU target, run on the board and compared with the exact numpy
# evaluation (tests/quant/qref.py): every quantized tensor teacher-forced and
# the output end to end within one step, >= 99% identical. The cortex-m4 runs
# also report onnxruntime-node's distance. Each takes a few seconds.
set(MLCC_MCU_QUANT_DIR ${CMAKE_CURRENT_BINARY_DIR}/mcu_quant)
set(MLCC_MCU_QUANT_RUN ${CMAKE_CURRENT_LIST_DIR}/../quant/run_quant_model.py)
foreach(model ${MLCC_TINY})
  add_test(NAME mcu.q.${model}.prepare
    COMMAND ${MLCC_PYTHON} ${MLCC_MCU_QUANT_RUN} prepare --model-dir ${MLCC_TINY_MODELS}/${model}
            --out ${MLCC_MCU_QUANT_DIR}/${model})
  set_tests_properties(mcu.q.${model}.prepare PROPERTIES FIXTURES_SETUP mcu_quant_${model}
    LABELS "mcu;quant" SKIP_RETURN_CODE 77 TIMEOUT 600)
  foreach(target cortex-m4 cortex-m55 rv32 rv32f)
    set(formats qdq)
    if(model STREQUAL "ic_resnet8" AND (target STREQUAL "cortex-m4" OR target STREQUAL "rv32"))
      list(APPEND formats qop)
    endif()
    # uint8 input (--integer-io; the float Softmax output stays float).
    if(model STREQUAL "kws_dscnn" AND (target STREQUAL "cortex-m4" OR target STREQUAL "rv32"))
      list(APPEND formats int)
    endif()
    set(report "")
    if(target STREQUAL "cortex-m4")
      set(report --ort-report)
    endif()
    foreach(format ${formats})
      set(name mcu.q.${model}.${target})
      if(NOT format STREQUAL "qdq")
        set(name mcu.q.${model}.${format}.${target})
      endif()
      add_test(NAME ${name}
        COMMAND ${MLCC_PYTHON} ${MLCC_MCU_QUANT_RUN} run --mlcc $<TARGET_FILE:mlcc>
                --out ${MLCC_MCU_QUANT_DIR}/${model} --format ${format} --target ${target}
                ${report})
      set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED mcu_quant_${model}
        LABELS "mcu;quant" SKIP_RETURN_CODE 77 TIMEOUT 600)
    endforeach()
  endforeach()
endforeach()
