# Integration tests: real processes on 127.0.0.1 (STYLE.md §9). They need the executables built.
set(JF_ITEST_DEPS jetfleet jetfleet-agent jetfleet-coordinator jetfleet-datagen jetfleet-train)

foreach(t config_errors hostile sweep_e2e train_failure)
  jf_add_integration_test(${t} SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/${t}_test.c
                          LIBS jft_support jf_common)
  add_dependencies(${t}_itest ${JF_ITEST_DEPS})
endforeach()
