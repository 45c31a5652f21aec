# Unit tests of the coordinator's store and board registry (STYLE.md §9).
jf_add_unit_test(store
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)
jf_add_unit_test(store_tables
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_tables_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)
jf_add_unit_test(registry
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/registry_test.c LIBS jf_coord)
jf_add_unit_test(pending
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/pending_test.c LIBS jf_coord)
jf_add_unit_test(store_power
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_power_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)
# The store's identity, check, backup and salvage (issue #17 §3): also under the reliability label.
jf_add_unit_test(store_admin
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_admin_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord jft_support)
set_property(TEST unit.store_admin APPEND PROPERTY LABELS reliability)

jf_add_unit_test(fdguard
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/fdguard_test.c LIBS jf_coord)

jf_add_unit_test(store_schema
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_schema_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)
# Built against the libraries with the test-only run field (JF_SCHEMA_TEST_FIELD comes with
# jf_common_testfield): a field added to the schema table alone, end to end.
jf_add_unit_test(schema_field
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/schema_field_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c
  LIBS jf_store_testfield jf_train_options_testfield)

# The CLI's table printer: wide tables and column lists whole, a missing column an error.
jf_add_unit_test(cli_table
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/cli_table_test.c
  ${PROJECT_SOURCE_DIR}/coordinator/cli/cli_table.c LIBS jf_coord)
target_include_directories(cli_table_test PRIVATE ${PROJECT_SOURCE_DIR}/coordinator/cli)

# The NTP-style clock offset estimator (issue #11): also under the reliability label.
jf_add_unit_test(clock
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/clock_test.c LIBS jf_coord)
set_property(TEST unit.clock APPEND PROPERTY LABELS reliability)
jf_add_unit_test(store_clock
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_clock_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)

# Telemetry retention and the free-space reading (issue #17 §4): also under the reliability label.
jf_add_unit_test(store_retention
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_retention_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)
set_property(TEST unit.store_retention APPEND PROPERTY LABELS reliability)

# Typed telemetry (issue #17 §4): packing, round trip, migration 8 -> 9, means, bytes per sample.
jf_add_unit_test(store_telemetry
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_telemetry_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)

# jetfleet import (issue #12): CSV rows into the store, bad rows, idempotence, rollback.
jf_add_unit_test(store_import
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_import_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)

# The analysis (issue #12): statistics against independent reference values, variability from
# coord_obs_t arrays, measurement validity over a store built with the store API.
jf_add_unit_test(stats
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/stats_test.c LIBS jf_analysis)
jf_add_unit_test(variability
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/variability_test.c LIBS jf_analysis)
jf_add_unit_test(validity
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/validity_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_analysis)

# Model fitting, Pareto fronts, the models table (issue #12, docs/analysis.md).
jf_add_unit_test(fit
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/fit_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/fit_support.c LIBS jf_fit)
# Six MLP trainings on 576 points: ~13 s on a loaded 2-core machine, more under the sanitizers.
math(EXPR jf_fit_timeout "120 * ${JF_TEST_TIMEOUT_SCALE}")
set_tests_properties(unit.fit PROPERTIES TIMEOUT ${jf_fit_timeout})
# The phys kind: a few dozen L-BFGS descents on 50 to 576 points, a few seconds.
jf_add_unit_test(fit_phys
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/fit_phys_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/fit_support.c LIBS jf_fit)
set_tests_properties(unit.fit_phys PROPERTIES TIMEOUT ${jf_fit_timeout})
jf_add_unit_test(adaptive
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/adaptive_test.c LIBS jf_fit)
jf_add_unit_test(pareto
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/pareto_test.c LIBS jf_fit)
jf_add_unit_test(store_models
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_models_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)

# Per-board message limits and the coordinator.limits section of fleet.yaml (issue #11).
jf_add_unit_test(limits
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/limits_test.c LIBS jf_coord)
set_property(TEST unit.limits APPEND PROPERTY LABELS security)

# The HTML report's data and page (issue #13; docs/report.md), on imported sweeps.
jf_add_unit_test(report
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/report_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_report)
set_property(TEST unit.report APPEND PROPERTY LABELS ecosystem)

# The committed Chart.js is the pinned version: scripts/vendor-charts.sh --check (no network).
add_test(NAME unit.vendor_charts COMMAND ${PROJECT_SOURCE_DIR}/scripts/vendor-charts.sh --check)
set_tests_properties(unit.vendor_charts PROPERTIES LABELS "unit;ecosystem" TIMEOUT 30)

# The InfluxDB exporter's line protocol and points (docs/metrics.md).
jf_add_unit_test(influx_line
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/influx_line_test.c LIBS jf_export)
set_property(TEST unit.influx_line APPEND PROPERTY LABELS ecosystem)
# The exporter's HTTP requests (1.x and 2.x write API) as a request recorder receives them.
jf_add_unit_test(influx_http
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/influx_http_test.c LIBS jf_export jft_support)
set_property(TEST unit.influx_http APPEND PROPERTY LABELS ecosystem)
# The concurrent training and inference searches on synthetic landscapes (issue #15).
jf_add_unit_test(csearch
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/csearch_test.c LIBS jf_csearch)


# Weight blobs of federated rounds (issue 14).
jf_add_unit_test(store_blobs
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_blobs_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_coord)

# The rounds planner (issue #14, docs/rounds.md "Planning"): brute-forced synthetic tables and
# the real AGX Orin modes.
jf_add_unit_test(rounds_plan
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/rounds_plan_test.c LIBS jf_rounds)
jf_add_unit_test(rounds_boards
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/rounds_boards_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_rounds)


# The roofline maths (coord_roofline.h, docs/roofline.md).
jf_add_unit_test(roofline
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/roofline_test.c LIBS jf_fit)

# Run kinds in the analysis (docs/analysis.md "Run kinds"): roofline, idle, concurrent and
# container runs left out of training figures, and counted.
jf_add_unit_test(run_kinds
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/run_kinds_test.c
  ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS jf_report)

# The store's database seam (coordinator/coord_db.h, issue #13): its contract on SQLite.
jf_add_unit_test(db
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/db_test.c LIBS jf_coord)
# The PostgreSQL back end of the store's database seam (docs/store.md "PostgreSQL"): the
# statement rewriter (pure C), and the back end against a server the test starts (jft_pg).
jf_add_unit_test(db_sql
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/db_sql_test.c LIBS jf_dbsql)
if(LIBPQ_FOUND)
  # unit.db's cases on PostgreSQL (db_test.c built with JF_DB_TEST_PG), and the back end's own
  # cases (rewritten statements, compat functions against SQLite, errors, a stopped server).
  jf_add_unit_test(db_postgres
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/db_test.c LIBS jf_coord jft_pg)
  target_compile_definitions(db_postgres_test PRIVATE JF_DB_TEST_PG)
  jf_add_unit_test(db_pg
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/db_pg_test.c LIBS jf_coord jft_pg)
  # initdb and the server's start on a loaded machine: more than the unit tests' 30 s.
  math(EXPR t "90 * ${JF_TEST_TIMEOUT_SCALE}")
  set_tests_properties(unit.db_postgres unit.db_pg PROPERTIES TIMEOUT ${t} SKIP_RETURN_CODE 77)
  set_property(TEST unit.db_postgres unit.db_pg APPEND PROPERTY LABELS ecosystem)
endif()
if(LIBPQ_FOUND)
  # The store's own cases on PostgreSQL (issue 13, docs/store.md §10): a store test file and
  # store_support.c built with JF_DB_TEST_PG as unit.<name>_postgres, a fresh database per case
  # on a server its main starts (jft_pg); cases about the SQLite file itself skip with a
  # printed reason.
  # Arguments after the name are the libraries under test (default jf_coord).
  function(jf_add_store_pg_test name)
    set(libs ${ARGN})
    if(NOT libs)
      set(libs jf_coord)
    endif()
    jf_add_unit_test(${name}_postgres
      SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/${name}_test.c
      ${PROJECT_SOURCE_DIR}/tests/unit/coordinator/store_support.c LIBS ${libs} jft_pg)
    target_compile_definitions(${name}_postgres_test PRIVATE JF_DB_TEST_PG)
    # initdb and the server's start on a loaded machine: more than the unit tests' 30 s.
    math(EXPR t "90 * ${JF_TEST_TIMEOUT_SCALE}")
    set_tests_properties(unit.${name}_postgres PROPERTIES TIMEOUT ${t} SKIP_RETURN_CODE 77)
    set_property(TEST unit.${name}_postgres APPEND PROPERTY LABELS ecosystem)
  endfunction()
  jf_add_store_pg_test(store)
  jf_add_store_pg_test(store_tables)
  jf_add_store_pg_test(store_power)
  jf_add_store_pg_test(store_blobs)
  jf_add_store_pg_test(store_models)
  jf_add_store_pg_test(store_retention)
  jf_add_store_pg_test(store_telemetry)
  jf_add_store_pg_test(store_import)
  jf_add_store_pg_test(store_clock)
  jf_add_store_pg_test(run_kinds jf_report)
  jf_add_store_pg_test(validity jf_analysis)
  jf_add_store_pg_test(report jf_report)
  jf_add_store_pg_test(rounds_boards jf_rounds)
endif()
