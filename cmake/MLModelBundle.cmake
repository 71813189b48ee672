# SPDX-License-Identifier: Apache-2.0
# Packs a fleet bundle (docs/bundle.md); run by the custom command of
# ml_model_bundle() (see MLModel.cmake) as `cmake -DSPEC=<spec.cmake> -P MLModelBundle.cmake`.
# bazel/fleet_bundle.py writes the same bytes for Bazel's ml_model_fleet: keep
# the two in step.
#
# The spec (written by ml_model_bundle with file(GENERATE)) sets BUNDLE_NAME,
# BUNDLE_DIR (the folder to lay out, recreated), BUNDLE_OUTPUT (the .tar.gz),
# BUNDLE_TAR, BUNDLE_GZIP, BUNDLE_MLCC, BUNDLE_MODELS, BUNDLE_TARGETS and, per
# model m and alias a: BUNDLE_<m>_MODEL, BUNDLE_<m>_<a>_LIB, _HEADER and
# _DESCRIPTION (mlcc --describe's JSON for that library).
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

# mlcc's identity from `mlcc --version`: "mlcc version V", "commit: C",
# "codegen: H", "LLVM[:] L"; a line that is missing reads "unknown".
execute_process(COMMAND "${BUNDLE_MLCC}" --version
  OUTPUT_VARIABLE version_text RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bundle ${BUNDLE_NAME}: '${BUNDLE_MLCC} --version' failed: ${rc} ${err}")
endif()
foreach(field version commit codegen llvm)
  set(mlcc_${field} "unknown")
endforeach()
if(version_text MATCHES "mlcc version ([^\n ]+)")
  set(mlcc_version "${CMAKE_MATCH_1}")
endif()
if(version_text MATCHES "(^|\n)commit: ([^\n ]+)")
  set(mlcc_commit "${CMAKE_MATCH_2}")
endif()
if(version_text MATCHES "(^|\n)codegen: ([^\n ]+)")
  set(mlcc_codegen "${CMAKE_MATCH_2}")
endif()
if(version_text MATCHES "(^|\n)LLVM:? ([0-9][^\n ]*)")
  set(mlcc_llvm "${CMAKE_MATCH_2}")
endif()

file(REMOVE_RECURSE "${BUNDLE_DIR}")
file(MAKE_DIRECTORY "${BUNDLE_DIR}")
get_filename_component(bundle_parent "${BUNDLE_DIR}" DIRECTORY)
get_filename_component(bundle_leaf "${BUNDLE_DIR}" NAME)

_json_str(j "${BUNDLE_NAME}")
set(json "{\n  \"format\": 2,\n  \"bundle\": ${j},\n  \"mlcc\": {\n")
foreach(field version commit codegen llvm)
  _json_str(j "${mlcc_${field}}")
  set(sep ",")
  if(field STREQUAL "llvm")
    set(sep "")
  endif()
  string(APPEND json "    \"${field}\": ${j}${sep}\n")
endforeach()
string(APPEND json "  },\n  \"models\": [")
list(SORT BUNDLE_TARGETS)   # aliases: the order of targets in the manifest
set(msep "")
foreach(m IN LISTS BUNDLE_MODELS)
  set(model "${BUNDLE_${m}_MODEL}")
  file(SHA256 "${model}" model_sha)
  file(SIZE "${model}" model_size)
  get_filename_component(model_file "${model}" NAME)
  _json_str(jn "${m}")
  _json_str(jf "${model_file}")
  string(APPEND json "${msep}\n    {\n      \"name\": ${jn},\n      \"file\": ${jf},\n"
    "      \"sha256\": \"${model_sha}\",\n      \"size\": ${model_size},\n      \"targets\": [")
  set(msep ",")
  set(tsep "")
  set(seen_triples "")
  foreach(a IN LISTS BUNDLE_TARGETS)
    set(desc_file "${BUNDLE_${m}_${a}_DESCRIPTION}")
    file(READ "${desc_file}" desc)
    string(JSON triple ERROR_VARIABLE jerr GET "${desc}" target triple)
    if(jerr)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: ${desc_file}: ${jerr}")
    endif()
    string(JSON desc_format GET "${desc}" format)
    if(NOT desc_format EQUAL 2)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: ${desc_file} has format ${desc_format}; "
        "this bundler writes format 2 (docs/bundle.md)")
    endif()
    string(JSON lib_rel GET "${desc}" target library)
    string(JSON hdr_rel GET "${desc}" target header)
    string(JSON lib_want GET "${desc}" target library_sha256)
    string(JSON hdr_want GET "${desc}" target header_sha256)
    string(JSON desc_model_sha GET "${desc}" model sha256)
    if(NOT desc_model_sha STREQUAL model_sha)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: ${desc_file} describes another model "
        "than ${model} (rebuild ${m})")
    endif()
    if(triple IN_LIST seen_triples)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: two variants of ${m} for ${triple}")
    endif()
    list(APPEND seen_triples "${triple}")
    get_filename_component(lib_dir "${BUNDLE_DIR}/${lib_rel}" DIRECTORY)
    get_filename_component(hdr_dir "${BUNDLE_DIR}/${hdr_rel}" DIRECTORY)
    file(MAKE_DIRECTORY "${lib_dir}" "${hdr_dir}")
    configure_file("${BUNDLE_${m}_${a}_LIB}" "${BUNDLE_DIR}/${lib_rel}" COPYONLY)
    configure_file("${BUNDLE_${m}_${a}_HEADER}" "${BUNDLE_DIR}/${hdr_rel}" COPYONLY)
    file(SHA256 "${BUNDLE_DIR}/${lib_rel}" lib_sha)
    file(SHA256 "${BUNDLE_DIR}/${hdr_rel}" hdr_sha)
    if(NOT lib_sha STREQUAL lib_want OR NOT hdr_sha STREQUAL hdr_want)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: ${desc_file} does not describe "
        "${BUNDLE_${m}_${a}_LIB} and ${BUNDLE_${m}_${a}_HEADER} (rebuild ${m})")
    endif()
    # The description's "target" object, copied line for line (docs/bundle.md).
    string(FIND "${desc}" "\n  \"target\": {\n" begin)
    string(FIND "${desc}" "\n  }\n}" end REVERSE)
    if(begin LESS 0 OR end LESS begin)
      message(FATAL_ERROR "bundle ${BUNDLE_NAME}: ${desc_file} is not an mlcc --describe file")
    endif()
    math(EXPR begin "${begin} + 15")
    math(EXPR len "${end} - ${begin}")
    string(SUBSTRING "${desc}" ${begin} ${len} body)
    string(REPLACE "\n" "\n      " body "${body}")
    string(APPEND json "${tsep}\n        {\n      ${body}\n        }")
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
