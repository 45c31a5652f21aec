# Unit tests of the agent daemon's modules: the outgoing spool, the /proc and tegrastats parsers and
# the tegrastats log importer (STYLE.md §9).
jf_add_unit_test(spool SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/spool_test.c LIBS jf_agent)
jf_add_unit_test(procfs
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/procfs_test.c LIBS jf_agent)
jf_add_unit_test(tegrastats
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/tegrastats_test.c LIBS jf_agent)
