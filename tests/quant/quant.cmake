# SPDX-License-Identifier: Apache-2.0
# Quantized shared models (issue 16; docs/quantization.md). quant.<model>.prepare
# quantizes ../shared/models/<model> with scripts/quantize.py (calibrated by
# onnxruntime-node from tools/ort on the model's sample input plus two seeded
# random inputs) into the build dir: qdq.onnx, qop.onnx and int.onnx (QDQ with
# uint8 input/output), reused while the model and the quantizer are unchanged.
# quant.<model>.<format>.<target> compiles one with mlcc, runs it (qemu-user
# for aarch64/riscv64) and compares it with the exact numpy evaluation
# (tests/quant/qref.py): every quantized tensor within one step of its scale
# and >= 99% identical, and for QOperator also the output end to end; the
# x86 runs also report onnxruntime-node's distance (default session options
# and session.x64quantprecision=1). Skipped (77) without ../shared or tools/ort.
# Included from tests/CMakeLists.txt after MLCC_SHARED_MODELS is set.
set(MLCC_QUANT_RUN ${CMAKE_CURRENT_LIST_DIR}/run_quant_model.py)
set(MLCC_QUANT_DIR ${CMAKE_CURRENT_BINARY_DIR}/quant)
foreach(model resnet18 mobilenet_v2 squeezenet1_1 detector transformer)
  add_test(NAME quant.${model}.prepare
    COMMAND ${MLCC_PYTHON} ${MLCC_QUANT_RUN} prepare --model-dir ${MLCC_SHARED_MODELS}/${model}
            --out ${MLCC_QUANT_DIR}/${model})
  set_tests_properties(quant.${model}.prepare PROPERTIES FIXTURES_SETUP quant_${model}
    LABELS quant SKIP_RETURN_CODE 77 TIMEOUT 600)
  set(formats qdq qop)
  if(model STREQUAL "squeezenet1_1")
    list(APPEND formats int)
  endif()
  foreach(format ${formats})
    add_test(NAME quant.${model}.${format}.x86
      COMMAND ${MLCC_PYTHON} ${MLCC_QUANT_RUN} run --mlcc $<TARGET_FILE:mlcc>
              --out ${MLCC_QUANT_DIR}/${model} --format ${format} --target x86 --ort-report)
    set_tests_properties(quant.${model}.${format}.x86 PROPERTIES FIXTURES_REQUIRED quant_${model}
      LABELS quant SKIP_RETURN_CODE 77 TIMEOUT 1800)
  endforeach()
endforeach()
# The four conv models on the cross targets under qemu-user (issue 16's "three
# targets"; 30-60 s each on this 2-core machine). The transformer runs on x86 only.
foreach(model resnet18 mobilenet_v2 squeezenet1_1 detector)
  foreach(target aarch64 riscv)
    foreach(format qdq qop)
      add_test(NAME quant.${model}.${format}.${target}
        COMMAND ${MLCC_PYTHON} ${MLCC_QUANT_RUN} run --mlcc $<TARGET_FILE:mlcc>
                --out ${MLCC_QUANT_DIR}/${model} --format ${format} --target ${target})
      set_tests_properties(quant.${model}.${format}.${target} PROPERTIES
        FIXTURES_REQUIRED quant_${model} LABELS "quant;cross" SKIP_RETURN_CODE 77 TIMEOUT 1800)
    endforeach()
  endforeach()
endforeach()
# The integer fast-path feature sets (issue 16): aarch64 +dotprod (qemu's default
# "max" CPU has it) and x86 AVX-512 VNNI (skipped on CPUs without it; the
# blocked kernel's vpdpbusd form), and riscv64 +v (RVV at VLEN 128; the
# requantization converts float -> int32 -> uint8, so no narrowing vfncvt, on
# which Debian's qemu-riscv64 7.2 translator asserts, is emitted).
foreach(variant aarch64_dotprod x86_avx512vnni riscv_v128)
  if(variant STREQUAL "aarch64_dotprod")
    set(args --target aarch64 --mattr=+dotprod)
    set(labels "quant;cross")
  elseif(variant STREQUAL "riscv_v128")
    set(args --target riscv --mattr=+v --qemu-cpu rv64,v=true,vlen=128,vext_spec=v1.0)
    set(labels "quant;cross")
  else()
    set(args --target x86 --mattr=+avx512f,+avx512bw,+avx512vl,+avx512vnni
             --require-cpu-flag avx512_vnni)
    set(labels "quant")
  endif()
  add_test(NAME quant.squeezenet1_1.qop.${variant}
    COMMAND ${MLCC_PYTHON} ${MLCC_QUANT_RUN} run --mlcc $<TARGET_FILE:mlcc>
            --out ${MLCC_QUANT_DIR}/squeezenet1_1 --format qop ${args})
  set_tests_properties(quant.squeezenet1_1.qop.${variant} PROPERTIES
    FIXTURES_REQUIRED quant_squeezenet1_1 LABELS "${labels}" SKIP_RETURN_CODE 77 TIMEOUT 1800)
endforeach()
# Whole models on one CPU form of the blocked kernel, natively: each "model:format"
# of |pairs| as quant.<model>.<format>.<variant>, run_quant_model.py's arguments
# after the pairs (skipped, 77, on CPUs without the flag they require).
function(mlcc_quant_cpu_variant variant pairs)
  foreach(pair ${pairs})
    string(REPLACE ":" ";" mf ${pair})
    list(GET mf 0 model)
    list(GET mf 1 format)
    add_test(NAME quant.${model}.${format}.${variant}
      COMMAND ${MLCC_PYTHON} ${MLCC_QUANT_RUN} run --mlcc $<TARGET_FILE:mlcc>
              --out ${MLCC_QUANT_DIR}/${model} --format ${format} --target x86 ${ARGN})
    set_tests_properties(quant.${model}.${format}.${variant} PROPERTIES
      FIXTURES_REQUIRED quant_${model} LABELS quant SKIP_RETURN_CODE 77 TIMEOUT 1800)
  endforeach()
endfunction()
# The VNNI form (vpdpbusd quads, mlcc.qblock_k=4), skipped without avx512_vnni.
mlcc_quant_cpu_variant(x86_avx512vnni
  "resnet18:qdq;mobilenet_v2:qdq;detector:qop;transformer:qop"
  --mattr=+avx512f,+avx512bw,+avx512vl,+avx512vnni --require-cpu-flag avx512_vnni)
# The AMX form (amx_block: tdpbusd tiles, x86 with AMX-TILE and AMX-INT8) built
# with -mcpu=native, skipped without amx_int8: the numpy rule as above, and every
# quantized tensor and the output byte-identical to the VNNI form's build
# (-mattr=-amx-tile,-amx-int8).
mlcc_quant_cpu_variant(x86_amx
  "resnet18:qdq;mobilenet_v2:qdq;squeezenet1_1:qop;detector:qop;transformer:qop"
  --mlcc-flag=-mcpu=native --require-cpu-flag amx_int8 --same-as=-mattr=-amx-tile,-amx-int8)
# The blocked kernel's aarch64 sdot form (qa_block: the VNNI quad layout,
# mlcc.qblock_k=4) on whole models under qemu-user (its default "max" CPU has
# dotprod); squeezenet1_1 is quant.squeezenet1_1.qop.aarch64_dotprod above.
# aarch64_a53: built for and run on a Cortex-A53 (no dotprod: the row
# kernel's smlal). aarch64_i8mm: the usmmla form (mlcc.qblock_k=8).
foreach(pair resnet18:qdq mobilenet_v2:qdq detector:qop transformer:qop squeezenet1_1:qop:a53
             resnet18:qdq:i8mm squeezenet1_1:qop:i8mm transformer:qop:i8mm)
  string(REPLACE ":" ";" mf ${pair})
  list(GET mf 0 model)
  list(GET mf 1 format)
  list(LENGTH mf n)
  if(n EQUAL 3)
    list(GET mf 2 v)
  else()
    set(v dotprod)
  endif()
  if(v STREQUAL "a53")
    set(variant aarch64_a53)
    set(args --mlcc-flag=-mcpu=cortex-a53 --qemu-cpu cortex-a53)
  elseif(v STREQUAL "i8mm")
    set(variant aarch64_i8mm)
    set(args --mattr=+dotprod,+i8mm)
  else()
    set(variant aarch64_dotprod)
    set(args --mattr=+dotprod)
  endif()
  add_test(NAME quant.${model}.${format}.${variant}
    COMMAND ${MLCC_PYTHON} ${MLCC_QUANT_RUN} run --mlcc $<TARGET_FILE:mlcc>
            --out ${MLCC_QUANT_DIR}/${model} --format ${format} --target aarch64 ${args})
  set_tests_properties(quant.${model}.${format}.${variant} PROPERTIES
    FIXTURES_REQUIRED quant_${model} LABELS "quant;cross" SKIP_RETURN_CODE 77 TIMEOUT 1800)
endforeach()
# The header and --describe text of integer inputs/outputs.
add_test(NAME quant.header
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/header_test.py --mlcc $<TARGET_FILE:mlcc>
          --model ${MLCC_QUANT_DIR}/squeezenet1_1/int.onnx)
set_tests_properties(quant.header PROPERTIES FIXTURES_REQUIRED quant_squeezenet1_1
  LABELS "quant;driver" SKIP_RETURN_CODE 77 TIMEOUT 300)
# The quantizer itself: the layout of the models it wrote, and its errors.
add_test(NAME quant.quantize
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/quantize_test.py --quant-dir ${MLCC_QUANT_DIR})
set_tests_properties(quant.quantize PROPERTIES
  FIXTURES_REQUIRED "quant_resnet18;quant_mobilenet_v2;quant_squeezenet1_1;quant_detector;quant_transformer"
  LABELS quant TIMEOUT 300)
# A retrained, re-quantized squeezenet1_1 (new weights and scales, same shapes)
# compiles 0 kernels in QDQ and QOperator form.
add_test(NAME quant.requantized
  COMMAND ${MLCC_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/requant_test.py --mlcc $<TARGET_FILE:mlcc>
          --quant-dir ${MLCC_QUANT_DIR}/squeezenet1_1
          --model-dir ${MLCC_SHARED_MODELS}/squeezenet1_1)
set_tests_properties(quant.requantized PROPERTIES FIXTURES_REQUIRED quant_squeezenet1_1
  LABELS "quant;cache" SKIP_RETURN_CODE 77 TIMEOUT 900)
