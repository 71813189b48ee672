# SPDX-License-Identifier: Apache-2.0
# Kernel cache tests (issue 4): one CTest test per case of cache_test.py.
# Included from tests/CMakeLists.txt. The remote case starts its own nginx
# (Debian package nginx) on a loopback port and skips when nginx is missing.
set(MLCC_CACHE_TEST ${CMAKE_CURRENT_LIST_DIR}/cache_test.py)
foreach(case cold_warm weights_changed shape_changed concurrent killed damaged size_limit
             stats_clear remote mcu_targets)
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

# >>> fleet: one cache for builds and hosts of one commit (issue 12 item 3; fleet_test.py) >>>
# cache.fleet.twin_build builds a second mlcc from a copy of the sources in its own build
# folder (the fixture); the others compare it with this build's mlcc, edit one emitter line
# in the copy (RESOURCE_LOCK: one at a time), and run two hosts in network namespaces.
set(_mlcc_fleet_args --mlcc $<TARGET_FILE:mlcc> --src ${PROJECT_SOURCE_DIR}
  --twin ${CMAKE_BINARY_DIR}/fleet-twin --build-type "${CMAKE_BUILD_TYPE}"
  --cc "${CMAKE_C_COMPILER}" "--c-flags=${CMAKE_C_FLAGS}")
foreach(case twin_build twin_share emitter_edit two_host two_host_bazel)
  add_test(NAME cache.fleet.${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/fleet_test.py ${case} ${_mlcc_fleet_args})
  set_tests_properties(cache.fleet.${case} PROPERTIES LABELS cache TIMEOUT 600
    SKIP_RETURN_CODE 77)
  if(NOT case STREQUAL "twin_build" AND NOT case STREQUAL "two_host_bazel")
    set_tests_properties(cache.fleet.${case} PROPERTIES FIXTURES_REQUIRED mlcc_fleet_twin
      RESOURCE_LOCK mlcc_fleet_twin)
  endif()
endforeach()
set_tests_properties(cache.fleet.twin_build PROPERTIES FIXTURES_SETUP mlcc_fleet_twin
  RESOURCE_LOCK mlcc_fleet_twin)
# <<< fleet <<<

# Trust tests (issue 14): forged cache objects and signed remote entries.
foreach(case forged_local forged_entry forged_remote signed_remote no_false_rejection
             hostile_headers)
  add_test(NAME cache.trust_${case}
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/trust_test.py $<TARGET_FILE:mlcc> ${case})
  set_tests_properties(cache.trust_${case} PROPERTIES LABELS cache TIMEOUT 600
    SKIP_RETURN_CODE 77)
endforeach()
