# Unit tests of the core common modules: checked parsing, the run spec, the wire protocol
# and the seeded generator (STYLE.md §9). msg_test reads
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
# The typed payloads jf_msg_decode leaves for the coordinator's stream (decode once).
jf_add_unit_test(msg_decode SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/msg_decode_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/common/msg_support.c LIBS jf_common)
jf_add_unit_test(rng SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/rng_test.c LIBS jf_common)
# docs/protocol.md's message examples through the real decoder.
jf_add_unit_test(protocol_doc
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/protocol_doc_test.c LIBS jf_common)
target_compile_definitions(protocol_doc_test PRIVATE
  JF_PROTOCOL_DOC="${PROJECT_SOURCE_DIR}/docs/protocol.md")

jf_add_unit_test(schema SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/schema_test.c
  LIBS jf_common)
jf_add_unit_test(schema_nested SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/schema_nested_test.c
  LIBS jf_common)
jf_add_unit_test(blob SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/blob_test.c LIBS jf_common)
