# Unit tests of the core common modules: checked parsing, the run spec, the wire protocol,
# energy integration and the seeded generator (STYLE.md §9). msg_test reads
# tests/fixtures/messages/{good,bad}/ through JF_FIXTURES.
jf_add_unit_test(parse SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/parse_test.c LIBS jf_common)
jf_add_unit_test(run_spec
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/run_spec_test.c LIBS jf_common)
# The workload catalogue (common/jf_workload.c).
jf_add_unit_test(workload
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/workload_test.c LIBS jf_common)
jf_add_unit_test(msg SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/msg_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/common/msg_support.c LIBS jf_common)
jf_add_unit_test(msg_roundtrip SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/msg_roundtrip_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/common/msg_support.c LIBS jf_common)
jf_add_unit_test(energy
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/energy_test.c LIBS jf_common)
jf_add_unit_test(energy_counter
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/energy_counter_test.c LIBS jf_common)
jf_add_unit_test(rng SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/rng_test.c LIBS jf_common)
