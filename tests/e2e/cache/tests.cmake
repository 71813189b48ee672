# SPDX-License-Identifier: Apache-2.0
# Kernel cache tests (issue 4): one CTest test per case of cache_test.py.
# Included from tests/CMakeLists.txt. The remote case starts its own nginx
# (Debian package nginx) on a loopback port and skips when nginx is missing.
set(MLCC_CACHE_TEST ${CMAKE_CURRENT_LIST_DIR}/cache_test.py)
foreach(case cold_warm weights_changed shape_changed concurrent killed damaged size_limit
             stats_clear remote)
  add_test(NAME cache.${case}
    COMMAND /usr/bin/python3 ${MLCC_CACHE_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(cache.${case} PROPERTIES LABELS cache TIMEOUT 1800
    SKIP_RETURN_CODE 77)
endforeach()
# Trust tests (issue 14): forged cache objects and signed remote entries.
foreach(case forged_local forged_entry forged_remote signed_remote no_false_rejection
             hostile_headers)
  add_test(NAME cache.trust_${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/trust_test.py $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(cache.trust_${case} PROPERTIES LABELS cache TIMEOUT 600
    SKIP_RETURN_CODE 77)
endforeach()
