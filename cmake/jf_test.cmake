# Test registration helpers (STYLE.md §9).
set(JF_TEST_TIMEOUT_SCALE "$ENV{JF_TEST_TIMEOUT_SCALE}")
if(NOT JF_TEST_TIMEOUT_SCALE)
  set(JF_TEST_TIMEOUT_SCALE 1)
endif()

# jf_add_unit_test(<module> SOURCES ... LIBS ...): tests/unit/<dir>/<module>_test.c -> unit.<module>
function(jf_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name}_test ${T_SOURCES})
  target_link_libraries(${name}_test PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
  target_include_directories(${name}_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  add_test(NAME unit.${name} COMMAND ${name}_test)
  math(EXPR t "30 * ${JF_TEST_TIMEOUT_SCALE}")
  set_tests_properties(unit.${name} PROPERTIES LABELS unit TIMEOUT ${t}
    ENVIRONMENT "JF_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures;JF_BIN_DIR=${PROJECT_BINARY_DIR}/bin")
endfunction()

# jf_add_integration_test(<scenario> SOURCES ... LIBS ... [TIMEOUT s] [ARGS ...]), or
# jf_add_integration_test(<scenario> EXECUTABLE <other scenario> [TIMEOUT s] [ARGS ...]): another
# test of that scenario's executable with its own arguments (a cmocka filter, for one that would
# not fit in one timeout).
function(jf_add_integration_test name)
  cmake_parse_arguments(T "" "TIMEOUT;EXECUTABLE" "SOURCES;LIBS;ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  math(EXPR t "${T_TIMEOUT} * ${JF_TEST_TIMEOUT_SCALE}")
  set(exe ${T_EXECUTABLE}_itest)
  if(NOT T_EXECUTABLE)
    set(exe ${name}_itest)
    add_executable(${exe} ${T_SOURCES})
    target_link_libraries(${exe} PRIVATE ${T_LIBS} PkgConfig::CMOCKA)
    target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  endif()
  add_test(NAME integration.${name} COMMAND ${exe} ${T_ARGS})
  set_tests_properties(integration.${name} PROPERTIES LABELS integration TIMEOUT ${t}
    ENVIRONMENT "JF_FIXTURES=${PROJECT_SOURCE_DIR}/tests/fixtures;JF_BIN_DIR=${PROJECT_BINARY_DIR}/bin;JF_TEST_TIMEOUT_SCALE=${JF_TEST_TIMEOUT_SCALE}")
endfunction()
