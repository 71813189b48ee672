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

# Cache administration (issue 12 item 5) and the cache/remote regressions of
# issue 14 (items 2, 3, 4, 9, 10): admin_test.py, a few seconds each (its
# HTTP servers are local Python threads with bounded waits).
set(MLCC_CACHE_ADMIN_TEST ${CMAKE_CURRENT_LIST_DIR}/admin_test.py)
foreach(case fifo remote_slow remote_errors credentials readonly rejected_warning config
             zero_stats cleanup print_stats explain)
  add_test(NAME cache.admin.${case}
    COMMAND /usr/bin/python3 ${MLCC_CACHE_ADMIN_TEST} $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(cache.admin.${case} PROPERTIES LABELS cache TIMEOUT 300
    SKIP_RETURN_CODE 77)
endforeach()
