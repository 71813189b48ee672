# CMake generated Testfile for 
# Source directory: /work/main/tests
# Build directory: /work/main/build/tests
# 
# This file includes the relevant testing commands required for 
# testing this directory and lists subdirectories to be tested as well.
add_test([=[model.resnet18.x86]=] "/usr/bin/python3" "/work/main/tests/e2e/run_case.py" "--mlcc" "/work/main/build/mlcc" "--case" "/work/main/../shared/models/resnet18" "--target" "x86" "--skip-if-missing")
set_tests_properties([=[model.resnet18.x86]=] PROPERTIES  LABELS "model" SKIP_RETURN_CODE "77" TIMEOUT "1800" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;15;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[model.mobilenet_v2.x86]=] "/usr/bin/python3" "/work/main/tests/e2e/run_case.py" "--mlcc" "/work/main/build/mlcc" "--case" "/work/main/../shared/models/mobilenet_v2" "--target" "x86" "--skip-if-missing")
set_tests_properties([=[model.mobilenet_v2.x86]=] PROPERTIES  LABELS "model" SKIP_RETURN_CODE "77" TIMEOUT "1800" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;15;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[model.squeezenet1_1.x86]=] "/usr/bin/python3" "/work/main/tests/e2e/run_case.py" "--mlcc" "/work/main/build/mlcc" "--case" "/work/main/../shared/models/squeezenet1_1" "--target" "x86" "--skip-if-missing")
set_tests_properties([=[model.squeezenet1_1.x86]=] PROPERTIES  LABELS "model" SKIP_RETURN_CODE "77" TIMEOUT "1800" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;15;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[model.detector.x86]=] "/usr/bin/python3" "/work/main/tests/e2e/run_case.py" "--mlcc" "/work/main/build/mlcc" "--case" "/work/main/../shared/models/detector" "--target" "x86" "--skip-if-missing")
set_tests_properties([=[model.detector.x86]=] PROPERTIES  LABELS "model" SKIP_RETURN_CODE "77" TIMEOUT "1800" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;15;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[model.mlp.x86]=] "/usr/bin/python3" "/work/main/tests/e2e/run_case.py" "--mlcc" "/work/main/build/mlcc" "--case" "/work/main/../shared/models/mlp" "--target" "x86" "--skip-if-missing")
set_tests_properties([=[model.mlp.x86]=] PROPERTIES  LABELS "model" SKIP_RETURN_CODE "77" TIMEOUT "1800" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;15;add_test;/work/main/tests/CMakeLists.txt;0;")
add_test([=[model.transformer.x86]=] "/usr/bin/python3" "/work/main/tests/e2e/run_case.py" "--mlcc" "/work/main/build/mlcc" "--case" "/work/main/../shared/models/transformer" "--target" "x86" "--skip-if-missing")
set_tests_properties([=[model.transformer.x86]=] PROPERTIES  LABELS "model" SKIP_RETURN_CODE "77" TIMEOUT "1800" _BACKTRACE_TRIPLES "/work/main/tests/CMakeLists.txt;15;add_test;/work/main/tests/CMakeLists.txt;0;")
