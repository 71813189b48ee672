# SPDX-License-Identifier: Apache-2.0
#[=======================================================================[.rst:
MLModel
-------

CMake rules that compile ONNX models with mlcc into static libraries, for one
or several CPU targets in the same build (DESIGN.md section 6). Loaded by
``find_package(mlcc)`` (installed package config) or directly with
``include(<mlcc source>/cmake/MLModel.cmake)``. Needs CMake >= 3.20 (custom
command ``DEPFILE`` with both Ninja and Unix Makefiles; policy CMP0116 NEW).

add_ml_model
^^^^^^^^^^^^

::

  add_ml_model(<name> <model.onnx>
    [TARGETS <target>...]            # x86 aarch64 riscv cortex-m4 cortex-m55 rv32 rv32f, or
                                     # triples (x86_64-*, aarch64-*, riscv64-*, thumbv7em-*,
                                     # thumbv8.1m.main-*, riscv32-*)
                                     # default: the target of the current toolchain
    [CPU <alias>=<cpu>...]           # -mcpu per target, e.g. CPU aarch64=cortex-a72 x86=native
    [FEATURES <alias>=<features>...] # -mattr per target, e.g. FEATURES riscv=+v (RVV 1.0)
    [OPT_LEVEL 0|1|2|3]              # -O<n> (default: mlcc's -O2)
    [OPTIONS <mlcc flag>...]         # passed through, e.g. --input-shape=x=1x3x224x224
    [DEPENDS <file>...]              # extra files whose change reruns mlcc
    [TUNING_RECORDS <file.json>]     # --tuning-records (docs/tuning.md); a dependency
    [EXCLUDE_FROM_ALL])              # do not build the variants by default

``<name>`` is both the CMake target name and the C symbol prefix
(``<name>_run``, ``<NAME>_WORKSPACE_SIZE``, header ``<name>.h``); it must be a
C identifier. A relative ``<model.onnx>`` is relative to the current source
directory. For every entry of ``TARGETS`` one ``add_custom_command`` runs
``mlcc ... -o lib<name>.a --describe=<name>.json -MD -MF <depfile>`` once, which
writes the library, ``<name>.h`` and the JSON description (docs/bundle.md)
together, through the kernel cache. The model, its external data files and
mlcc itself are dependencies: edit any of them and only the libraries built
from them are rebuilt; touch nothing and the build does nothing. mlcc leaves
an output whose bytes did not change untouched (same mtime): the rule's
output is a stamp, the files are Ninja ``BYPRODUCTS`` (CMake gives the rule
``restat``), so ``touch model.onnx`` or new weights relink at most the
library's users and recompile no C file that includes the header.

Targets created:

``<name>_<alias>``
  every variant, as an IMPORTED STATIC GLOBAL library (``lib<name>.a``
  written and archived by mlcc) with its include directory and, for the
  Linux targets outside a bare-metal build (``CMAKE_SYSTEM_NAME``
  ``Generic``), ``-lm`` (microcontroller code calls no libm),
  built by its own custom target (one owning target per output, so parallel
  Make never races).
``<name>``
  an ALIAS of the variant for the current toolchain: its
  ``MLCC_TARGET_ALIAS`` when it sets one (the bare-metal toolchain files
  do: cortex-m4, cortex-m55, rv32 or rv32f), else from
  ``CMAKE_SYSTEM_PROCESSOR`` (x86_64 -> x86, aarch64 -> aarch64,
  riscv64 -> riscv). Link it with ``target_link_libraries(app PRIVATE
  <name>)``. Only created when that target is in ``TARGETS``. Every variant
  is made the same way, so the bundle's bytes do not depend on the toolchain
  that configured the build.
``<name>_all``
  builds every variant of the model.

Files go to ``${CMAKE_CURRENT_BINARY_DIR}/mlcc/<name>/<alias>/``.

The mlcc executable is a host tool, never built with the cross compiler. It is,
in this order: the cache variable ``MLCC_EXECUTABLE`` if set; the target
``mlcc::mlcc`` (imported by ``find_package(mlcc)``, or the in-tree tool when
mlcc's own project is being built natively); the target ``mlcc`` of an
enclosing mlcc build that is not cross compiling; else ``find_program(mlcc)``
on the host.

ml_model_board_executable
^^^^^^^^^^^^^^^^^^^^^^^^^

::

  ml_model_board_executable(<exe> TARGET <mcu-alias> SOURCES <file.c>...
                            MODELS <name>... [COMPILE_OPTIONS <flag>...])

A program for the qemu-system board of a microcontroller target
(docs/mcu.md; the boards of tests/mcu/): ``cortex-m4`` on ``mps2-an386``,
``cortex-m55`` on ``mps3-an547``, ``rv32``/``rv32f`` on ``virt`` (``-bios
none``). It is linked with the board's start-up file, linker script (flash
and SRAM regions, the weights' ``.mlcc_weights`` output section), the
semihosting calls of ``semihost.h`` (on its include path), picolibc and
libgcc, and the ``<mcu-alias>`` variant of every model in ``MODELS``.

* In a build configured with that board's toolchain file
  (``toolchains/arm-none-eabi.cmake``, ``riscv32-unknown-elf.cmake``: their
  ``MLCC_TARGET_ALIAS`` is ``<mcu-alias>``) ``<exe>`` is a normal
  executable of that toolchain (``${MLCC_MCU_STARTUP}`` added to it).
* In any other build (the host's, say, building the whole fleet) ``<exe>``
  is a custom target that links ``<exe>.elf`` in the current binary
  directory with the board's cross gcc (``arm-none-eabi-gcc`` or
  ``riscv64-unknown-elf-gcc``, found on the host).

Either way ``<exe>_RUN_COMMAND`` is set in the caller's scope (and the
target property ``MLCC_RUN_COMMAND``): the qemu-system command that runs the
program with semihosting (its file I/O is relative to the working
directory; qemu exits with ``main``'s status), for
``add_test(NAME t COMMAND ${<exe>_RUN_COMMAND})``.

ml_model_bundle
^^^^^^^^^^^^^^^

::

  ml_model_bundle(<bundle> MODELS <name>... [TARGETS <alias>...]
                  [OUTPUT <file.tar.gz>] [ALL])

A custom target ``<bundle>`` that lays out, under
``${CMAKE_CURRENT_BINARY_DIR}/<bundle>/``::

  manifest.json
  <triple>/lib/lib<name>.a
  <triple>/include/<name>.h

and packs that folder as ``<bundle>.tar.gz`` (default, in the current binary
directory). ``manifest.json`` (format 2, docs/bundle.md) records per model its
name, file name, sha256 and size; per target the alias, triple, CPU, features,
opt level, code-changing options, entry ABI, workspace size and alignment,
stack size, weights and code size, RAM (workspace + stack + static data) and
flash (code + read-only data + data), input/output signature and the sha256 of
the library and header
(copied from mlcc's ``--describe`` files); and mlcc's version, commit,
codegen hash and LLVM version. The tarball is byte-identical when rebuilt
from the same inputs (sorted names, mtime 0, owner and group 0, fixed modes,
gzip without a timestamp; needs GNU tar and gzip), whatever toolchain
configured the build, and equal to Bazel's ``ml_model_fleet`` of the same
model and targets. ``TARGETS`` defaults to the targets of the first model;
every model must have been added with all of them. ``ALL`` adds the bundle
to the default build.
#]=======================================================================]

cmake_minimum_required(VERSION 3.20)
include_guard(GLOBAL)

set(_MLCC_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")

# Functions record the policies in effect where they are defined.
cmake_policy(PUSH)
cmake_policy(SET CMP0116 NEW)   # Ninja: DEPFILE paths relative to the binary dir

# _mlcc_alias(<out> <target-spec>): the alias (x86, aarch64, riscv,
# cortex-m4, cortex-m55, rv32, rv32f) of a --target value, or "" when mlcc
# has no such target. A triple maps to its architecture's alias as mlcc
# resolves it (thumbv7em-* and the other M-profile thumbv6m-, thumbv7m-,
# thumbv8m.main-* -> cortex-m4, thumbv8.1m.main-* -> cortex-m55, riscv32-* ->
# rv32; rv32f is only reached by its alias).
function(_mlcc_alias out spec)
  string(TOLOWER "${spec}" s)
  if(s MATCHES "^(x86|x86_64|x86-64|amd64|x64)$" OR s MATCHES "^x86_64-")
    set(a x86)
  elseif(s MATCHES "^(aarch64|arm64)$" OR s MATCHES "^aarch64-")
    set(a aarch64)
  elseif(s MATCHES "^(riscv|riscv64)$" OR s MATCHES "^riscv64-")
    set(a riscv)
  elseif(s MATCHES "^(cortex-m4|cortex-m55|rv32|rv32f)$")
    set(a "${s}")
  elseif(s MATCHES "^thumbv(6m|7m|7em|8m\\.main)-")
    set(a cortex-m4)   # mlcc resolves these M-profile triples like cortex-m4
  elseif(s MATCHES "^thumbv8\\.1m\\.main-")
    set(a cortex-m55)
  elseif(s MATCHES "^riscv32-")
    set(a rv32)
  else()
    set(a "")
  endif()
  set(${out} "${a}" PARENT_SCOPE)
endfunction()

# _mlcc_is_mcu(<out> <alias>): TRUE for the bare-metal aliases.
function(_mlcc_is_mcu out alias)
  if(alias MATCHES "^(cortex-m4|cortex-m55|rv32|rv32f)$")
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# _mlcc_current_alias(<out>): the alias for this build's toolchain ("" if
# none): MLCC_TARGET_ALIAS when the toolchain file sets it (the bare-metal
# files of toolchains/ do: their CMAKE_SYSTEM_PROCESSOR, arm or riscv32, does
# not tell the core or the FPU), else from CMAKE_SYSTEM_PROCESSOR.
function(_mlcc_current_alias out)
  if(MLCC_TARGET_ALIAS)
    _mlcc_alias(a "${MLCC_TARGET_ALIAS}")
    if(NOT a)
      message(FATAL_ERROR "MLCC_TARGET_ALIAS '${MLCC_TARGET_ALIAS}' is not an mlcc target")
    endif()
  else()
    _mlcc_alias(a "${CMAKE_SYSTEM_PROCESSOR}")
  endif()
  set(${out} "${a}" PARENT_SCOPE)
endfunction()

# _mlcc_tool(<cmd-out> <dep-out>): how to run mlcc, and the file to depend on.
function(_mlcc_tool cmd_out dep_out)
  if(MLCC_EXECUTABLE)
    set(cmd "${MLCC_EXECUTABLE}")
    set(dep "${MLCC_EXECUTABLE}")
  elseif(TARGET mlcc::mlcc)
    get_target_property(real mlcc::mlcc ALIASED_TARGET)
    if(NOT real)
      set(real mlcc::mlcc)
    endif()
    set(cmd "$<TARGET_FILE:${real}>")
    get_target_property(imported ${real} IMPORTED)
    if(imported)
      set(dep "$<TARGET_FILE:${real}>")   # file-level dependency on the installed tool
    else()
      set(dep ${real})                    # target- and file-level (in-tree tool)
    endif()
  elseif(TARGET mlcc AND NOT CMAKE_CROSSCOMPILING)
    get_target_property(type mlcc TYPE)
    if(NOT type STREQUAL "EXECUTABLE")
      message(FATAL_ERROR "add_ml_model: the target 'mlcc' is not an executable; "
        "set MLCC_EXECUTABLE to the mlcc compiler")
    endif()
    set(cmd "$<TARGET_FILE:mlcc>")
    set(dep mlcc)
  else()
    find_program(MLCC_EXECUTABLE mlcc NO_CMAKE_FIND_ROOT_PATH
      DOC "the mlcc model compiler (a host program)")
    if(NOT MLCC_EXECUTABLE)
      message(FATAL_ERROR "add_ml_model: mlcc not found. Use find_package(mlcc), or set "
        "MLCC_EXECUTABLE to the host mlcc program (-DMLCC_EXECUTABLE=/path/to/mlcc).")
    endif()
    set(cmd "${MLCC_EXECUTABLE}")
    set(dep "${MLCC_EXECUTABLE}")
  endif()
  set(${cmd_out} "${cmd}" PARENT_SCOPE)
  set(${dep_out} "${dep}" PARENT_SCOPE)
endfunction()

# _mlcc_per_alias(<out-prefix> <keyword> <aliases> <items>...): parses
# "alias=value" items into <out-prefix>_<alias> in the caller's scope.
function(_mlcc_per_alias prefix keyword aliases)
  foreach(item IN LISTS ARGN)
    if(NOT item MATCHES "^([^=]+)=(.*)$")
      message(FATAL_ERROR "add_ml_model: ${keyword} '${item}' is not <target>=<value>")
    endif()
    set(v "${CMAKE_MATCH_2}")
    _mlcc_alias(a "${CMAKE_MATCH_1}")
    if(NOT a OR NOT a IN_LIST aliases)
      message(FATAL_ERROR "add_ml_model: ${keyword} '${item}' names a target that is not "
        "in TARGETS (${aliases})")
    endif()
    set(${prefix}_${a} "${v}" PARENT_SCOPE)
  endforeach()
endfunction()

function(add_ml_model name model)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "EXCLUDE_FROM_ALL" "OPT_LEVEL;TUNING_RECORDS"
    "TARGETS;CPU;FEATURES;OPTIONS;DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_ml_model(${name}): unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "add_ml_model: '${name}' is not a C identifier (it is the symbol prefix)")
  endif()
  if(TARGET ${name} OR TARGET ${name}_all)
    message(FATAL_ERROR "add_ml_model: a target named '${name}' already exists")
  endif()
  cmake_path(ABSOLUTE_PATH model BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    NORMALIZE OUTPUT_VARIABLE model_abs)
  if(NOT EXISTS "${model_abs}")
    message(FATAL_ERROR "add_ml_model(${name}): model '${model_abs}' does not exist")
  endif()
  _mlcc_current_alias(current)

  # TARGETS -> aliases (names) and the --target value given for each.
  if(NOT ARG_TARGETS)
    if(NOT current)
      message(FATAL_ERROR "add_ml_model(${name}): mlcc has no target for this toolchain's "
        "processor '${CMAKE_SYSTEM_PROCESSOR}'; list TARGETS explicitly")
    endif()
    set(ARG_TARGETS ${current})
  endif()
  set(aliases "")
  foreach(t IN LISTS ARG_TARGETS)
    _mlcc_alias(a "${t}")
    if(NOT a)
      message(FATAL_ERROR "add_ml_model(${name}): unknown target '${t}' "
        "(use x86, aarch64, riscv, cortex-m4, cortex-m55, rv32, rv32f, or a triple starting "
        "with x86_64-, aarch64-, riscv64-, thumbv7em-, thumbv8.1m.main-, riscv32-)")
    endif()
    if(a IN_LIST aliases)
      message(FATAL_ERROR "add_ml_model(${name}): target '${t}' given twice (as ${a})")
    endif()
    list(APPEND aliases ${a})
    set(spec_${a} "${t}")
  endforeach()
  _mlcc_per_alias(cpu CPU "${aliases}" ${ARG_CPU})
  _mlcc_per_alias(feat FEATURES "${aliases}" ${ARG_FEATURES})
  set(common "")
  if(DEFINED ARG_OPT_LEVEL)
    if(NOT ARG_OPT_LEVEL MATCHES "^[0-3]$")
      message(FATAL_ERROR "add_ml_model(${name}): OPT_LEVEL must be 0, 1, 2 or 3")
    endif()
    list(APPEND common -O${ARG_OPT_LEVEL})
  endif()
  list(APPEND common ${ARG_OPTIONS})
  # Tuning records (docs/tuning.md): each variant uses the records of its own
  # triple and CPU from the one file; mlcc's depfile lists the file too.
  set(records_dep "")
  if(DEFINED ARG_TUNING_RECORDS)
    cmake_path(ABSOLUTE_PATH ARG_TUNING_RECORDS BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
      NORMALIZE OUTPUT_VARIABLE records_abs)
    if(NOT EXISTS "${records_abs}")
      message(FATAL_ERROR "add_ml_model(${name}): TUNING_RECORDS '${records_abs}' does not exist")
    endif()
    list(APPEND common "--tuning-records=${records_abs}")
    set(records_dep "${records_abs}")
  endif()

  _mlcc_tool(mlcc mlcc_dep)
  set(all_flag ALL)
  if(ARG_EXCLUDE_FROM_ALL)
    set(all_flag "")
  endif()
  set(depends "${model_abs}" ${mlcc_dep} ${records_dep})
  foreach(d IN LISTS ARG_DEPENDS)
    cmake_path(ABSOLUTE_PATH d BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    list(APPEND depends "${d}")
  endforeach()
  get_filename_component(model_file "${model_abs}" NAME)

  add_custom_target(${name}_all)
  set_target_properties(${name}_all PROPERTIES
    MLCC_MODEL "${model_abs}" MLCC_ALIASES "${aliases}" MLCC_COMMAND "${mlcc}")
  foreach(a IN LISTS aliases)
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/mlcc/${name}/${a}")
    set(lib "${dir}/lib${name}.a")
    set(hdr "${dir}/${name}.h")
    set(desc "${dir}/${name}.json")
    set(stamp "${dir}/${name}.stamp")
    set(flags "--name=${name}" "--target=${spec_${a}}")
    if(DEFINED cpu_${a})
      list(APPEND flags "-mcpu=${cpu_${a}}")
    endif()
    if(DEFINED feat_${a})
      list(APPEND flags "-mattr=${feat_${a}}")
    endif()
    list(APPEND flags ${common})
    file(MAKE_DIRECTORY "${dir}")
    # One mlcc run per variant writes the library, its header and its JSON
    # description together (every variant alike, archived by mlcc, so a
    # bundle's bytes do not depend on the toolchain that configured the
    # build). mlcc keeps an output whose bytes did not change, mtime and all;
    # the stamp records that the run happened. With Ninja the files are
    # byproducts (CMake gives the rule restat, so nothing downstream of an
    # unchanged file reruns); Make sees only the stamp and compares the
    # files' own mtimes. The depfile names the stamp (_mlcc_stamp.cmake).
    set(byproducts "")
    if(CMAKE_GENERATOR MATCHES "Ninja")
      set(byproducts BYPRODUCTS "${lib}" "${hdr}" "${desc}")
    endif()
    add_custom_command(
      OUTPUT "${stamp}"
      ${byproducts}
      COMMAND ${mlcc} "${model_abs}" -o "${lib}" ${flags} "--describe=${desc}"
              -MD -MF "${dir}/${name}.d"
      COMMAND "${CMAKE_COMMAND}" "-DDEPFILE=${dir}/${name}.d" "-DSTAMP=${stamp}"
              -P "${_MLCC_MODULE_DIR}/_mlcc_stamp.cmake"
      DEPENDS ${depends}
      DEPFILE "${dir}/${name}.d"
      COMMENT "mlcc ${model_file} -> lib${name}.a (${a})"
      VERBATIM COMMAND_EXPAND_LISTS)
    set(owner mlcc_gen_${name}_${a})
    add_custom_target(${owner} ${all_flag} DEPENDS "${stamp}")
    add_library(${name}_${a} STATIC IMPORTED GLOBAL)
    set_target_properties(${name}_${a} PROPERTIES
      IMPORTED_LOCATION "${lib}"
      INTERFACE_INCLUDE_DIRECTORIES "${dir}")
    # libm for the Linux variants (the generated code may call expf and
    # friends there); a microcontroller variant calls no libm (docs/mcu.md),
    # and a bare-metal toolchain (CMAKE_SYSTEM_NAME Generic) has none.
    _mlcc_is_mcu(mcu ${a})
    if(NOT mcu AND NOT CMAKE_SYSTEM_NAME STREQUAL "Generic")
      set_target_properties(${name}_${a} PROPERTIES INTERFACE_LINK_LIBRARIES m)
    endif()
    add_dependencies(${name}_${a} ${owner})
    if(a STREQUAL current)
      # The toolchain's own variant, linked as target_link_libraries(app <name>).
      add_library(${name} ALIAS ${name}_${a})
    endif()
    add_dependencies(${name}_all ${owner})
    set_target_properties(${name}_all PROPERTIES
      MLCC_LIB_${a} "${lib}" MLCC_HEADER_${a} "${hdr}" MLCC_DESCRIPTION_${a} "${desc}"
      MLCC_OWNER_${a} ${owner} MLCC_FLAGS_${a} "${flags}")
  endforeach()
endfunction()

# _mlcc_board(<prefix> <mcu-alias>): the qemu board of a microcontroller
# alias as <prefix>_CC, _FLAGS (compiler flags for the core), _LD (linker
# script file name), _STARTUP (start-up file name) and _QEMU (the emulator
# command up to -kernel); FATAL_ERROR for any other alias. Keep in step with
# toolchains/arm-none-eabi.cmake, riscv32-unknown-elf.cmake and
# tests/mcu/run_mcu.py.
function(_mlcc_board prefix alias)
  set(semi -semihosting-config enable=on,target=native -nographic -monitor none -serial none)
  if(alias STREQUAL "cortex-m4")
    set(cc arm-none-eabi-gcc)
    set(flags -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
    set(ld mps2-an386.ld)
    set(startup startup_cortex_m.c)
    set(qemu qemu-system-arm -M mps2-an386 -cpu cortex-m4 ${semi})
  elseif(alias STREQUAL "cortex-m55")
    set(cc arm-none-eabi-gcc)
    set(flags -mcpu=cortex-m55 -mthumb -mfloat-abi=hard)
    set(ld mps3-an547.ld)
    set(startup startup_cortex_m.c)
    set(qemu qemu-system-arm -M mps3-an547 ${semi})
  elseif(alias STREQUAL "rv32" OR alias STREQUAL "rv32f")
    set(cc riscv64-unknown-elf-gcc)
    if(alias STREQUAL "rv32")
      set(flags -march=rv32imac -mabi=ilp32 -mcmodel=medany)
    else()
      set(flags -march=rv32imafc -mabi=ilp32f -mcmodel=medany)
    endif()
    set(ld virt-rv32.ld)
    set(startup startup_rv32.S)
    set(qemu qemu-system-riscv32 -M virt -bios none -m 32M ${semi})
  else()
    message(FATAL_ERROR "'${alias}' is not a microcontroller target "
      "(cortex-m4, cortex-m55, rv32, rv32f)")
  endif()
  foreach(v cc flags ld startup qemu)
    string(TOUPPER ${v} V)
    set(${prefix}_${V} "${${v}}" PARENT_SCOPE)
  endforeach()
endfunction()

# _mlcc_board_dir(<out>): the folder with the boards' start-up files, linker
# scripts and semihosting calls: the toolchain's MLCC_MCU_INCLUDE_DIR, else
# tests/mcu of this checkout, else <prefix>/share/mlcc/mcu of an installed
# package.
function(_mlcc_board_dir out)
  if(MLCC_MCU_INCLUDE_DIR AND EXISTS "${MLCC_MCU_INCLUDE_DIR}/semihost.h")
    set(d "${MLCC_MCU_INCLUDE_DIR}")
  elseif(EXISTS "${_MLCC_MODULE_DIR}/../tests/mcu/semihost.h")
    get_filename_component(d "${_MLCC_MODULE_DIR}/../tests/mcu" ABSOLUTE)
  elseif(MLCC_TOOLCHAIN_DIR AND EXISTS "${MLCC_TOOLCHAIN_DIR}/../mcu/semihost.h")
    get_filename_component(d "${MLCC_TOOLCHAIN_DIR}/../mcu" ABSOLUTE)
  else()
    message(FATAL_ERROR "ml_model_board_executable: the board files (semihost.h, start-up "
      "files, linker scripts of mlcc's tests/mcu) are not found")
  endif()
  set(${out} "${d}" PARENT_SCOPE)
endfunction()

function(ml_model_board_executable exe)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "TARGET" "SOURCES;MODELS;COMPILE_OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ml_model_board_executable(${exe}): unexpected arguments: "
      "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGET OR NOT ARG_SOURCES OR NOT ARG_MODELS)
    message(FATAL_ERROR "ml_model_board_executable(${exe}): TARGET, SOURCES and MODELS are "
      "required")
  endif()
  _mlcc_alias(alias "${ARG_TARGET}")
  _mlcc_board(board "${alias}")
  _mlcc_board_dir(dir)
  foreach(m IN LISTS ARG_MODELS)
    if(NOT TARGET ${m}_${alias})
      message(FATAL_ERROR "ml_model_board_executable(${exe}): model '${m}' was not added "
        "with add_ml_model(... TARGETS ${alias})")
    endif()
  endforeach()
  set(sources "")
  foreach(f IN LISTS ARG_SOURCES)
    cmake_path(ABSOLUTE_PATH f BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    list(APPEND sources "${f}")
  endforeach()
  _mlcc_current_alias(current)
  if(current STREQUAL alias AND CMAKE_SYSTEM_NAME STREQUAL "Generic")
    # This board's toolchain: its flags and linker script are in the
    # toolchain file; the executable adds the start-up sources.
    add_executable(${exe} ${sources} "${dir}/${board_STARTUP}" "${dir}/semihost.c")
    target_include_directories(${exe} PRIVATE "${dir}")
    foreach(opt IN LISTS ARG_COMPILE_OPTIONS)   # C only: not the start-up assembly
      target_compile_options(${exe} PRIVATE "$<$<COMPILE_LANGUAGE:C>:${opt}>")
    endforeach()
    foreach(m IN LISTS ARG_MODELS)
      target_link_libraries(${exe} PRIVATE ${m}_${alias})
    endforeach()
    target_link_libraries(${exe} PRIVATE c gcc)
    set(run ${board_QEMU} -kernel "$<TARGET_FILE:${exe}>")
  else()
    find_program(MLCC_BOARD_CC_${alias} ${board_CC} NO_CMAKE_FIND_ROOT_PATH)
    if(NOT MLCC_BOARD_CC_${alias})
      message(FATAL_ERROR "ml_model_board_executable(${exe}): ${board_CC} not found "
        "(Debian: gcc-arm-none-eabi / gcc-riscv64-unknown-elf, with picolibc)")
    endif()
    set(elf "${CMAKE_CURRENT_BINARY_DIR}/${exe}.elf")
    set(incs "")
    set(libs "")
    set(owners "")
    foreach(m IN LISTS ARG_MODELS)
      get_target_property(inc ${m}_${alias} INTERFACE_INCLUDE_DIRECTORIES)
      get_target_property(lib ${m}_${alias} IMPORTED_LOCATION)
      list(APPEND incs "-I${inc}")
      list(APPEND libs "${lib}")
      list(APPEND owners mlcc_gen_${m}_${alias})
    endforeach()
    # The start-up file on its own (COMPILE_OPTIONS are for the C sources).
    set(startup_obj "${CMAKE_CURRENT_BINARY_DIR}/${exe}.startup.o")
    add_custom_command(OUTPUT "${elf}"
      COMMAND "${MLCC_BOARD_CC_${alias}}" ${board_FLAGS} -O2 "-I${dir}" -c
              "${dir}/${board_STARTUP}" -o "${startup_obj}"
      COMMAND "${MLCC_BOARD_CC_${alias}}" ${board_FLAGS} -O2 --specs=picolibc.specs
              -nostartfiles "-I${dir}" ${incs} ${ARG_COMPILE_OPTIONS}
              ${sources} "${startup_obj}" "${dir}/semihost.c"
              "-L${dir}" "-T${dir}/${board_LD}" -Wl,--no-warn-rwx-segments -Wl,--no-warn-execstack
              ${libs} -lc -lgcc -o "${elf}"
      DEPENDS ${sources} ${libs} "${dir}/${board_STARTUP}" "${dir}/semihost.c"
              "${dir}/${board_LD}"
      COMMENT "${board_CC} ${exe}.elf (${alias})"
      VERBATIM COMMAND_EXPAND_LISTS)
    add_custom_target(${exe} ALL DEPENDS "${elf}")
    add_dependencies(${exe} ${owners})
    set(run ${board_QEMU} -kernel "${elf}")
  endif()
  set_target_properties(${exe} PROPERTIES MLCC_RUN_COMMAND "${run}")
  set(${exe}_RUN_COMMAND "${run}" PARENT_SCOPE)
endfunction()

function(ml_model_bundle bundle)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "ALL" "OUTPUT" "MODELS;TARGETS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ml_model_bundle(${bundle}): unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODELS)
    message(FATAL_ERROR "ml_model_bundle(${bundle}): MODELS is required")
  endif()
  find_program(MLCC_TAR_EXECUTABLE NAMES tar gtar NO_CMAKE_FIND_ROOT_PATH)
  find_program(MLCC_GZIP_EXECUTABLE NAMES gzip NO_CMAKE_FIND_ROOT_PATH)
  if(NOT MLCC_TAR_EXECUTABLE OR NOT MLCC_GZIP_EXECUTABLE)
    message(FATAL_ERROR "ml_model_bundle(${bundle}): needs GNU tar and gzip on the host")
  endif()
  set(out "${ARG_OUTPUT}")
  if(NOT out)
    set(out "${CMAKE_CURRENT_BINARY_DIR}/${bundle}.tar.gz")
  endif()
  cmake_path(ABSOLUTE_PATH out BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE)
  set(targets "")
  foreach(t IN LISTS ARG_TARGETS)
    _mlcc_alias(a "${t}")
    if(NOT a)
      message(FATAL_ERROR "ml_model_bundle(${bundle}): unknown target '${t}'")
    endif()
    list(APPEND targets ${a})
  endforeach()

  # The spec: everything the packing script needs; generator expressions
  # (library paths of normal targets, the mlcc tool) resolved at generate time.
  set(spec "set(BUNDLE_NAME [==[${bundle}]==])\n")
  string(APPEND spec "set(BUNDLE_DIR [==[${CMAKE_CURRENT_BINARY_DIR}/${bundle}]==])\n")
  string(APPEND spec "set(BUNDLE_OUTPUT [==[${out}]==])\n")
  string(APPEND spec "set(BUNDLE_TAR [==[${MLCC_TAR_EXECUTABLE}]==])\n")
  string(APPEND spec "set(BUNDLE_GZIP [==[${MLCC_GZIP_EXECUTABLE}]==])\n")
  string(APPEND spec "set(BUNDLE_MODELS [==[${ARG_MODELS}]==])\n")
  set(depends "${_MLCC_MODULE_DIR}/MLModelBundle.cmake")
  set(owners "")
  set(mlcc_cmd "")
  foreach(m IN LISTS ARG_MODELS)
    if(NOT TARGET ${m}_all)
      message(FATAL_ERROR "ml_model_bundle(${bundle}): '${m}' is not a model added with "
        "add_ml_model() (before this call)")
    endif()
    get_target_property(model ${m}_all MLCC_MODEL)
    get_target_property(have ${m}_all MLCC_ALIASES)
    get_target_property(mlcc_cmd ${m}_all MLCC_COMMAND)
    if(NOT targets)
      set(targets ${have})
    endif()
    string(APPEND spec "set(BUNDLE_${m}_MODEL [==[${model}]==])\n")
    foreach(a IN LISTS targets)
      if(NOT a IN_LIST have)
        message(FATAL_ERROR "ml_model_bundle(${bundle}): model '${m}' was not added with "
          "target ${a} (it has: ${have})")
      endif()
      foreach(p LIB HEADER DESCRIPTION OWNER)
        get_target_property(v_${p} ${m}_all MLCC_${p}_${a})
      endforeach()
      string(APPEND spec "set(BUNDLE_${m}_${a}_LIB [==[${v_LIB}]==])\n")
      string(APPEND spec "set(BUNDLE_${m}_${a}_HEADER [==[${v_HEADER}]==])\n")
      string(APPEND spec "set(BUNDLE_${m}_${a}_DESCRIPTION [==[${v_DESCRIPTION}]==])\n")
      list(APPEND depends "${v_LIB}" "${v_HEADER}" "${v_DESCRIPTION}")
      list(APPEND owners ${v_OWNER})
    endforeach()
  endforeach()
  string(APPEND spec "set(BUNDLE_TARGETS [==[${targets}]==])\n")
  string(APPEND spec "set(BUNDLE_MLCC [==[${mlcc_cmd}]==])\n")
  list(JOIN ARG_MODELS " " models_text)
  list(JOIN targets " " targets_text)
  set(spec_file "${CMAKE_CURRENT_BINARY_DIR}/mlcc/${bundle}$<$<BOOL:$<CONFIG>>:-$<CONFIG>>.bundle.cmake")
  file(GENERATE OUTPUT "${spec_file}" CONTENT "${spec}")
  add_custom_command(
    OUTPUT "${out}" "${CMAKE_CURRENT_BINARY_DIR}/${bundle}/manifest.json"
    COMMAND "${CMAKE_COMMAND}" "-DSPEC=${spec_file}" -P "${_MLCC_MODULE_DIR}/MLModelBundle.cmake"
    DEPENDS ${depends} "${spec_file}"
    COMMENT "mlcc bundle ${bundle}: ${models_text} for ${targets_text}"
    VERBATIM)
  if(ARG_ALL)
    add_custom_target(${bundle} ALL DEPENDS "${out}")
  else()
    add_custom_target(${bundle} DEPENDS "${out}")
  endif()
  list(REMOVE_DUPLICATES owners)
  add_dependencies(${bundle} ${owners})
endfunction()

cmake_policy(POP)
