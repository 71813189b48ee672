# CMake generated Testfile for 
# Source directory: /work/main
# Build directory: /work/main/build
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[unit.status_test]=] "/work/main/build/status_test")
set_tests_properties([=[unit.status_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.graph_test]=] "/work/main/build/graph_test")
set_tests_properties([=[unit.graph_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.onnx_import_test]=] "/work/main/build/onnx_import_test")
set_tests_properties([=[unit.onnx_import_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.print_test]=] "/work/main/build/print_test")
set_tests_properties([=[unit.print_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.verify_test]=] "/work/main/build/verify_test")
set_tests_properties([=[unit.verify_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.pass_test]=] "/work/main/build/pass_test")
set_tests_properties([=[unit.pass_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.codegen_test]=] "/work/main/build/codegen_test")
set_tests_properties([=[unit.codegen_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.emit_compute_test]=] "/work/main/build/emit_compute_test")
set_tests_properties([=[unit.emit_compute_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.emit_elementwise_test]=] "/work/main/build/emit_elementwise_test")
set_tests_properties([=[unit.emit_elementwise_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.emit_shape_ops_test]=] "/work/main/build/emit_shape_ops_test")
set_tests_properties([=[unit.emit_shape_ops_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
add_test([=[unit.target_test]=] "/work/main/build/target_test")
set_tests_properties([=[unit.target_test]=] PROPERTIES  LABELS "unit" _BACKTRACE_TRIPLES "/work/main/CMakeLists.txt;85;add_test;/work/main/CMakeLists.txt;0;")
subdirs("tests")
