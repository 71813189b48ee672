# SPDX-License-Identifier: Apache-2.0
# Packs a fleet bundle; run by the custom command of ml_model_bundle() (see
# MLModel.cmake) as `cmake -DSPEC=<spec.cmake> -P MLModelBundle.cmake`.
#
# The spec (written by ml_model_bundle with file(GENERATE)) sets BUNDLE_NAME,
# BUNDLE_DIR (the folder to lay out, recreated), BUNDLE_OUTPUT (the .tar.gz),
# BUNDLE_TAR, BUNDLE_GZIP, BUNDLE_MLCC, BUNDLE_MODELS, BUNDLE_TARGETS and, per
# model m and alias a: BUNDLE_<m>_MODEL, BUNDLE_<m>_<a>_LIB, _HEADER, _FLAGS.
#
# Output: BUNDLE_DIR/manifest.json, BUNDLE_DIR/<triple>/lib/lib<m>.a,
# BUNDLE_DIR/<triple>/include/<m>.h, and BUNDLE_OUTPUT, a gzip'd tar of
# BUNDLE_DIR that depends only on the bytes of the inputs (sorted names, mtime
# 0, uid/gid 0, fixed modes, no gzip timestamp or name). Any failure is a
# FATAL_ERROR that leaves no tarball behind.
cmake_minimum_required(VERSION 3.20)
if(NOT SPEC OR NOT EXISTS "${SPEC}")
  message(FATAL_ERROR "MLModelBundle.cmake: pass -DSPEC=<bundle spec>")
endif()
include("${SPEC}")

# _json_str(<out> <text>): <text> as a JSON string literal.
function(_json_str out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

execute_process(COMMAND "${BUNDLE_MLCC}" --version
  OUTPUT_VARIABLE version_text RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bundle ${BUNDLE_NAME}: '${BUNDLE_MLCC} --version' failed: ${rc} ${err}")
endif()
if(NOT version_text MATCHES "mlcc version ([^\n]+)")
  message(FATAL_ERROR "bundle ${BUNDLE_NAME}: no version in: ${version_text}")
endif()
set(mlcc_version "${CMAKE_MATCH_1}")
set(llvm_version "unknown")
if(version_text MATCHES "LLVM:? ([0-9][^\n ]*)")
  set(llvm_version "${CMAKE_MATCH_1}")
endif()

file(REMOVE_RECURSE "${BUNDLE_DIR}")
file(MAKE_DIRECTORY "${BUNDLE_DIR}")
get_filename_component(bundle_parent "${BUNDLE_DIR}" DIRECTORY)
get_filename_component(bundle_leaf "${BUNDLE_DIR}" NAME)

_json_str(j "${BUNDLE_NAME}")
set(json "{\n  \"bundle\": ${j},\n")
_json_str(j "${mlcc_version}")
string(APPEND json "  \"mlcc_version\": ${j},\n")
_json_str(j "${llvm_version}")
string(APPEND json "  \"llvm_version\": ${j},\n  \"models\": [")
set(msep "")
foreach(m IN LISTS BUNDLE_MODELS)
  set(model "${BUNDLE_${m}_MODEL}")
  file(SHA256 "${model}" model_sha)
  get_filename_component(model_file "${model}" NAME)
  string(TOUPPER "${m}" upper)
  _json_str(jn "${m}")
  _json_str(jf "${model_file}")
  string(APPEND json "${msep}\n    {\n      \"name\": ${jn},\n      \"model\": ${jf},\n"
    "      \"model_sha256\": \"${model_sha}\",\n      \"targets\": [")
  set(msep ",")
  set(tsep "")
  set(seen_triples "")
  foreach(a IN LISTS BUNDLE_TARGETS)
    # The resolved triple, CPU and features, exactly as mlcc reports them for
    # the flags the library was built with (-### runs nothing).
    execute_process(COMMAND "${BUNDLE_MLCC}" "-###" ${BUNDLE_${m}_${a}_FLAGS} "${model}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE jobs)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: mlcc -### for ${m} (${a}) failed: ${jobs}")
    endif()
    set(triple "")
    set(cpu "")
    set(features "")
    if(jobs MATCHES "(^|\n)Target: ([^\n]*)")
      set(triple "${CMAKE_MATCH_2}")
    endif()
    if(jobs MATCHES "(^|\n)CPU: ([^\n]*)")
      set(cpu "${CMAKE_MATCH_2}")
    endif()
    if(jobs MATCHES "(^|\n)Features: ([^\n]*)")
      set(features "${CMAKE_MATCH_2}")
      string(STRIP "${features}" features)
    endif()
    if(NOT triple MATCHES "^[A-Za-z0-9_.-]+$")
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: no target triple for ${m} (${a}) in: ${jobs}")
    endif()
    if(triple IN_LIST seen_triples)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: two variants of ${m} for ${triple}")
    endif()
    list(APPEND seen_triples "${triple}")

    set(lib_rel "${triple}/lib/lib${m}.a")
    set(hdr_rel "${triple}/include/${m}.h")
    file(MAKE_DIRECTORY "${BUNDLE_DIR}/${triple}/lib" "${BUNDLE_DIR}/${triple}/include")
    configure_file("${BUNDLE_${m}_${a}_LIB}" "${BUNDLE_DIR}/${lib_rel}" COPYONLY)
    configure_file("${BUNDLE_${m}_${a}_HEADER}" "${BUNDLE_DIR}/${hdr_rel}" COPYONLY)
    file(SHA256 "${BUNDLE_DIR}/${lib_rel}" lib_sha)
    file(SHA256 "${BUNDLE_DIR}/${hdr_rel}" hdr_sha)
    file(READ "${BUNDLE_DIR}/${hdr_rel}" header)
    set(ws 0)
    set(align 0)
    if(header MATCHES "#define ${upper}_WORKSPACE_SIZE ([0-9]+)")
      set(ws "${CMAKE_MATCH_1}")
    else()
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: no ${upper}_WORKSPACE_SIZE in "
        "${BUNDLE_${m}_${a}_HEADER}")
    endif()
    if(header MATCHES "#define ${upper}_WORKSPACE_ALIGN ([0-9]+)")
      set(align "${CMAKE_MATCH_1}")
    endif()
    _json_str(ja "${a}")
    _json_str(jt "${triple}")
    _json_str(jc "${cpu}")
    _json_str(jfe "${features}")
    _json_str(jl "${lib_rel}")
    _json_str(jh "${hdr_rel}")
    string(APPEND json "${tsep}\n        {\n"
      "          \"alias\": ${ja},\n"
      "          \"triple\": ${jt},\n"
      "          \"cpu\": ${jc},\n"
      "          \"features\": ${jfe},\n"
      "          \"workspace_size\": ${ws},\n"
      "          \"workspace_align\": ${align},\n"
      "          \"library\": ${jl},\n"
      "          \"library_sha256\": \"${lib_sha}\",\n"
      "          \"header\": ${jh},\n"
      "          \"header_sha256\": \"${hdr_sha}\"\n"
      "        }")
    set(tsep ",")
  endforeach()
  string(APPEND json "\n      ]\n    }")
endforeach()
string(APPEND json "\n  ]\n}\n")
file(WRITE "${BUNDLE_DIR}/manifest.json" "${json}")

# Deterministic tarball: written to a temporary, renamed on success.
set(tmp "${BUNDLE_OUTPUT}.tmp")
file(REMOVE "${tmp}")
execute_process(
  COMMAND "${BUNDLE_TAR}" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner
          --mtime=@0 --mode=u=rwX,go=rX -C "${bundle_parent}" -cf - "${bundle_leaf}"
  COMMAND "${BUNDLE_GZIP}" -9 -n
  OUTPUT_FILE "${tmp}"
  RESULTS_VARIABLE rcs ERROR_VARIABLE err)
if(NOT rcs STREQUAL "0;0")
  file(REMOVE "${tmp}")
  message(FATAL_ERROR "bundle ${BUNDLE_NAME}: tar | gzip failed (${rcs}): ${err}")
endif()
file(RENAME "${tmp}" "${BUNDLE_OUTPUT}")
file(SHA256 "${BUNDLE_OUTPUT}" sha)
message(STATUS "bundle ${BUNDLE_OUTPUT} (sha256 ${sha})")
