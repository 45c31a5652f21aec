# Integration tests: real processes on 127.0.0.1 (STYLE.md §9). They need the executables built.
set(JF_ITEST_DEPS jetfleet jetfleet-agent jetfleet-coordinator jetfleet-datagen jetfleet-train
    jetfleet-train-sim)

foreach(t config_errors hostile hostile_blob sweep_e2e train_failure)
  jf_add_integration_test(${t} SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/${t}_test.c
                          LIBS jft_support jf_common)
  add_dependencies(${t}_itest ${JF_ITEST_DEPS})
endforeach()
# hostile's tables of hand-written messages live beside it.
target_sources(hostile_itest PRIVATE ${PROJECT_SOURCE_DIR}/tests/integration/hostile_cases.c)

# Reliability (issue #11): the coordinator never wedges — a peer that never reads, coordinator
# pauses, a board's stale connection holding its routing id, `sweep submit --wait` bounds — and
# estimates each board's clock offset (clock_offset).
foreach(t clock_offset wedge_flood wedge_handover wedge_hello wedge_pause wedge_wait)
  jf_add_integration_test(${t} SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/${t}_test.c
                          LIBS jft_support jf_common)
  add_dependencies(${t}_itest ${JF_ITEST_DEPS})
  set_property(TEST integration.${t} APPEND PROPERTY LABELS reliability)
endforeach()
# Alone: they bound how fast the coordinator answers and boards come back, which another test
# running beside them on a 2-core machine would measure too.
set_tests_properties(integration.wedge_flood integration.wedge_pause PROPERTIES RUN_SERIAL TRUE)

# Security (issue #11): CURVE with an allow-list, pending keys, impersonation, revocation.
jf_add_integration_test(curve_auth TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/curve_auth_test.c
                        LIBS jft_support jf_common)
add_dependencies(curve_auth_itest ${JF_ITEST_DEPS})
set_property(TEST integration.curve_auth APPEND PROPERTY LABELS security)

# Measured runs: agents on Jetson fixture trees with the privileged helper's test build (power
# modes, cache drops, restore) and the fake nvpmodel, one of them with its rails from a fake
# tegrastats, next to a host agent.
if(TARGET jft-privhelper-test)
  jf_add_integration_test(measure_e2e TIMEOUT 90
                          SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/measure_e2e_test.c
                          LIBS jft_support jf_agent jf_common)
  add_dependencies(measure_e2e_itest ${JF_ITEST_DEPS} jft-privhelper-test jft-fake-nvpmodel
                   jft-fake-tegrastats)
endif()

# Two simulated Xavier NX boards run a custom power-mode point and a mode, with DVFS off.
jf_add_integration_test(sim_power TIMEOUT 60
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/sim_power_test.c
                        LIBS jft_support jf_common)
add_dependencies(sim_power_itest ${JF_ITEST_DEPS})

# 50 simulated boards (agent --platform sim:<type>, jetfleet-train --simulate) run a sweep.
jf_add_integration_test(sim_fleet TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/sim_fleet_test.c
                        LIBS jft_support jf_common)
add_dependencies(sim_fleet_itest ${JF_ITEST_DEPS})

# One simulated board's run: the energy the agent measures in modelled time against the model's.
jf_add_integration_test(sim_energy TIMEOUT 90
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/sim_energy_test.c
                        LIBS jft_support jf_common)
target_compile_definitions(sim_energy_itest PRIVATE
  JF_SIM_PARAMS_SOURCE="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
add_dependencies(sim_energy_itest ${JF_ITEST_DEPS})

# The installed helper never takes the test options: `cmake --install` of this build, and the
# other configurations configured (not built) into temporary trees (docs/privileges.md §5).
if(TARGET jft-privhelper-test)
  jf_add_integration_test(privhelper_install TIMEOUT 120
                          SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/privhelper_install_test.c
                          LIBS jft_support PkgConfig::JANSSON)
  target_compile_definitions(privhelper_install_itest PRIVATE
    JFT_CMAKE_COMMAND="${CMAKE_COMMAND}" JFT_BUILD_DIR="${PROJECT_BINARY_DIR}"
    JFT_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(privhelper_install_itest jetfleet-privhelper jft-privhelper-test)
  set_property(TEST integration.privhelper_install APPEND PROPERTY LABELS security)
endif()

# The agent's on-disk spool across a coordinator outage and an agent SIGKILL, with the in-memory
# spool as the control that loses data (labels integration and reliability).
jf_add_integration_test(spool_restart TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/spool_restart_test.c
                        LIBS jft_support jf_common PkgConfig::SQLITE)
set_property(TEST integration.spool_restart APPEND PROPERTY LABELS reliability)
add_dependencies(spool_restart_itest ${JF_ITEST_DEPS})

# A trainer outlives a SIGKILLed agent and the restarted agent re-attaches to it (protocol.md §4.4).
jf_add_integration_test(reattach TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/reattach_test.c
                        LIBS jft_support jf_common PkgConfig::SQLITE)
set_property(TEST integration.reattach APPEND PROPERTY LABELS reliability)
add_dependencies(reattach_itest ${JF_ITEST_DEPS})

# A lost, replaced or damaged store is noticed; check, backup (during a sim sweep) and salvage.
jf_add_integration_test(store_guard TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/store_guard_test.c
                        LIBS jft_support jf_coord jf_common)
add_dependencies(store_guard_itest ${JF_ITEST_DEPS})
set_property(TEST integration.store_guard APPEND PROPERTY LABELS reliability)

# Idle TCP connections against a coordinator with 256 descriptors (docs/protocol.md §1.6).
jf_add_integration_test(fdguard TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/fdguard_test.c
                        LIBS jft_support jf_common)
# Alone: it holds 1,000 connections and samples status latency against a bound (issue #17).
set_tests_properties(integration.fdguard PROPERTIES LABELS "integration;security" RUN_SERIAL TRUE)
add_dependencies(fdguard_itest ${JF_ITEST_DEPS})

# Store retention and the free-space floor (issue #17 §4): a sweep with retention of 1 s keeps
# the telemetry row count bounded; a floor above the free space refuses new runs in status.
jf_add_integration_test(store_retention TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/store_retention_test.c
                        LIBS jft_support jf_common)
add_dependencies(store_retention_itest ${JF_ITEST_DEPS})
set_property(TEST integration.store_retention APPEND PROPERTY LABELS reliability)

# kill -9 chaos (issue #11): the coordinator and agents mid-run SIGKILLed during a sim sweep; no
# run lost, no result twice, no sample missing, the store intact. Full size: bench/chaos-kill.sh.
jf_add_integration_test(chaos_kill TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/chaos_kill_test.c
                        LIBS jft_support jf_common)
set_property(TEST integration.chaos_kill APPEND PROPERTY LABELS reliability)
add_dependencies(chaos_kill_itest ${JF_ITEST_DEPS})

# A partition (issue #11): one sim agent behind a cuttable TCP proxy (tests/support/jft_proxy.h)
# cut off for JF_PARTITION_CUT_S (default 15 s) while streaming at 10 Hz; every sample stored,
# in order, once. The control without acknowledgements (--spool-forget-on-send) loses samples.
jf_add_integration_test(partition TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/partition_test.c
                        LIBS jft_support jf_common)
set_property(TEST integration.partition APPEND PROPERTY LABELS reliability)
add_dependencies(partition_itest ${JF_ITEST_DEPS})

# jetfleet import (issue #12): fixture CSVs into a running coordinator's store, then the tables.
jf_add_integration_test(import TIMEOUT 60 SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/import_test.c
                        LIBS jft_support jf_common)
add_dependencies(import_itest ${JF_ITEST_DEPS})

# Issue #12: a small sim-fleet sweep, then `jetfleet check` and `jetfleet variability` against
# the test's own statistics from the store.
jf_add_integration_test(variability TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/variability_test.c
                        LIBS jft_support jf_common m)
add_dependencies(variability_itest ${JF_ITEST_DEPS})

# Issue #12: simulated throttling (thermal.throttle in a sim parameter file) seen in the measure
# record's thermal object and flagged by `jetfleet check`.
jf_add_integration_test(sim_throttle TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/sim_throttle_test.c
                        LIBS jft_support jf_common)
target_compile_definitions(sim_throttle_itest PRIVATE
  JF_SIM_PARAMS_SOURCE="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
add_dependencies(sim_throttle_itest ${JF_ITEST_DEPS})

# jetfleet model fit/list/predict/eval, pareto and recommend on a store built with the store API
# (issue #12, docs/analysis.md), with the bad requests; recommend without model ids (the store's
# newest models, else the rooflines; issue #15) is a test of its own, to fit in the timeout.
jf_add_integration_test(model_cli TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/model_cli_test.c
                        LIBS jft_support jf_coord jf_common
                        ARGS --skip test_recommend_newest)
add_dependencies(model_cli_itest ${JF_ITEST_DEPS})
jf_add_integration_test(model_cli_newest TIMEOUT 120 EXECUTABLE model_cli
                        ARGS --only test_recommend_newest)

# jetfleet containers on a store built with the store API (issue #15, docs/containers.md): every
# overhead figure (time, CPU, GPU, memory, energy) from known records, without a container engine.
jf_add_integration_test(containers_report TIMEOUT 60
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/containers_report_test.c
                        LIBS jft_support jf_coord jf_common)
add_dependencies(containers_report_itest ${JF_ITEST_DEPS})

# Issue #12: `jetfleet sweep submit --adaptive N` on one simulated board: N runs chosen in rounds,
# models stored, predictions for the other points; the bad requests.
jf_add_integration_test(adaptive TIMEOUT 180
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/adaptive_test.c
                        LIBS jft_support jf_common)
add_dependencies(adaptive_itest ${JF_ITEST_DEPS})

# Scale and credit (issues #11, #17): bench/fleet-scale.sh at CI size, jf-loadgen sessions
# against a real coordinator on 127.0.0.1. fleet_scale: a kill -9 restart, every session back
# with at most 2 hellos, nothing lost, and 10 probe boards whose runs end and are dispatched
# again (their samples counted in `lost`). fleet_credit: SIGSTOP bursts with 10 telemetry messages a
# second per session; the coordinator grants credit, no session has more in flight than the
# largest grant, nothing lost. They print the figures and assert only correctness, not timing.
math(EXPR jf_scale_timeout "150 * ${JF_TEST_TIMEOUT_SCALE}")
add_test(NAME integration.fleet_scale
         COMMAND ${PROJECT_SOURCE_DIR}/bench/fleet-scale.sh --bin-dir ${PROJECT_BINARY_DIR}/bin
                 --sessions 150 --seconds 20 --after 15 --probe-sessions 10 --check 2)
add_test(NAME integration.fleet_credit
         COMMAND ${PROJECT_SOURCE_DIR}/bench/fleet-scale.sh --bin-dir ${PROJECT_BINARY_DIR}/bin
                 --sessions 50 --seconds 16 --after 8 --batch-ms 100 --stops 3 --no-restart
                 --probe-sessions 0 --check 2)
set_tests_properties(integration.fleet_scale integration.fleet_credit PROPERTIES
                     LABELS "integration;reliability" TIMEOUT ${jf_scale_timeout} RUN_SERIAL TRUE)

# Security (issue #11): per-board limits and quarantine of repeat offenders, while simulated
# boards at 10 Hz telemetry and fast training are never limited (docs/protocol.md §1.9).
jf_add_integration_test(limits TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/limits_test.c
                        LIBS jft_support jf_common)
add_dependencies(limits_itest ${JF_ITEST_DEPS})
set_property(TEST integration.limits APPEND PROPERTY LABELS security reliability)

# Issue #13: `jetfleet report` on a small sim-fleet sweep, rendered by headless chromium from
# file:// (every figure drawn or saying why not, the simulated mark, no console message) and a
# screenshot (JF_REPORT_SCREENSHOT=path keeps it: docs/report.md).
jf_add_integration_test(report TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/report_test.c
                        LIBS jft_support jf_common)
add_dependencies(report_itest ${JF_ITEST_DEPS})
set_property(TEST integration.report APPEND PROPERTY LABELS ecosystem)

# Ecosystem (issue #13): the InfluxDB exporter against a real influxd started by the test.
jf_add_integration_test(influx TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/influx_test.c
                        LIBS jft_support jf_common PkgConfig::CURL PkgConfig::JANSSON)
add_dependencies(influx_itest ${JF_ITEST_DEPS})
target_compile_definitions(influx_itest PRIVATE JF_DASHBOARDS_DIR="${PROJECT_SOURCE_DIR}/dashboards")
set_property(TEST integration.influx APPEND PROPERTY LABELS ecosystem reliability)

# The concurrent training and inference run kind on a simulated AGX Orin (issue #15).
jf_add_integration_test(concurrent TIMEOUT 60
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/concurrent_test.c
                        LIBS jft_support jf_common m)
add_dependencies(concurrent_itest ${JF_ITEST_DEPS})

# Idle baselines on a simulated Xavier NX: jetfleet baseline, show and results --dynamic, each
# phase's idle power against the simulator's idle model (docs/baseline.md).
jf_add_integration_test(baseline TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/baseline_test.c
                        LIBS jft_support jf_sim jf_common)
target_compile_definitions(baseline_itest PRIVATE
  JF_SIM_PARAMS_SOURCE="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
add_dependencies(baseline_itest ${JF_ITEST_DEPS})

# A host board's trainer bare and in a container (podman --rootfs over the host's /usr and /etc,
# scripts/container-rootfs.sh), and jetfleet containers; skipped (77) where no engine works.
jf_add_integration_test(containers TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/containers_test.c
                        LIBS jft_support jf_common)
target_compile_definitions(containers_itest PRIVATE
  JF_CONTAINER_ROOTFS_SCRIPT="${PROJECT_SOURCE_DIR}/scripts/container-rootfs.sh"
  JF_BUILD_DIR="${PROJECT_BINARY_DIR}")
set_tests_properties(integration.containers PROPERTIES SKIP_RETURN_CODE 77)
add_dependencies(containers_itest ${JF_ITEST_DEPS})


# Federated rounds executed (issue #14): FedAvg checked against the boards' own weights, and a
# straggler killed mid-round, dropped and back for the next round.
jf_add_integration_test(rounds_run TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/rounds_run_test.c
                        LIBS jft_support jf_common jf_torch PkgConfig::SQLITE)
add_dependencies(rounds_run_itest ${JF_ITEST_DEPS})
set_property(TEST integration.rounds_run APPEND PROPERTY LABELS reliability)
# Issue #14: `jetfleet rounds plan` on two simulated boards without models: each profiled first
# (adaptive sweeps), then an equal-finish plan with a smaller predicted spread than maxn's.
jf_add_integration_test(rounds_plan TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/rounds_plan_test.c
                        LIBS jft_support jf_common)
add_dependencies(rounds_plan_itest ${JF_ITEST_DEPS})

# The agent's trainer handling: a clean stop keeps unread records, a crash before the trainer's
# spool row leaves no untracked trainer, a re-attached run keeps its deadline (protocol.md §4.4.1).
jf_add_integration_test(agent_trainer TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/agent_trainer_test.c
                        LIBS jft_support jf_common)
set_property(TEST integration.agent_trainer APPEND PROPERTY LABELS reliability)
add_dependencies(agent_trainer_itest ${JF_ITEST_DEPS})

# Rooflines end to end (docs/roofline.md): the microbenchmarks for real on this host's CPU and
# modelled on a sim board, stored, and `jetfleet roofline` over them.
jf_add_integration_test(roofline TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/roofline_test.c
                        LIBS jft_support jf_common)
add_dependencies(roofline_itest ${JF_ITEST_DEPS})

# Issue #15: `jetfleet concurrent search` on one simulated board: the descent's points run as
# concurrent runs through the coordinator, the answer checked against its stored records, the
# run count against the reported one; no point within a tiny power budget; bad arguments.
jf_add_integration_test(concurrent_search TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/concurrent_search_test.c
                        LIBS jft_support jf_common)
add_dependencies(concurrent_search_itest ${JF_ITEST_DEPS})

# The clock state stored before a run is restored after it when the agent that stored it died
# during the run and a restarted agent re-attached (a Jetson on fixture trees, docs/protocol.md
# §4.4.1).
if(TARGET jft-privhelper-test)
  jf_add_integration_test(reattach_clocks TIMEOUT 120
                          SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/reattach_clocks_test.c
                          LIBS jft_support jf_agent jf_common)
  set_property(TEST integration.reattach_clocks APPEND PROPERTY LABELS reliability)
  add_dependencies(reattach_clocks_itest ${JF_ITEST_DEPS} jft-privhelper-test jft-fake-nvpmodel)
endif()

# Issues #11, #17: the coordinator's memory after a kill -9 restart, with 200 jf-loadgen sessions
# that queue what they send while it is down, stays within its receive high-water mark: the
# restarted coordinator's peak under the first one's plus sessions x mark x largest message.
jf_add_integration_test(restart_memory TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/restart_memory_test.c
                        LIBS jft_support jf_common)
add_dependencies(restart_memory_itest ${JF_ITEST_DEPS} jf-loadgen)
set_tests_properties(integration.restart_memory PROPERTIES LABELS "integration;reliability"
                     RUN_SERIAL TRUE)

# Issue #13: two coordinators share one PostgreSQL store (a real server the test starts, jft_pg);
# both sweeps and their telemetry read back through one fleet's CLI (docs/store.md §10).
if(LIBPQ_FOUND)
  jf_add_integration_test(pg_shared TIMEOUT 120
                          SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/pg_shared_test.c
                          LIBS jft_pg jft_support jf_coord jf_common)
  add_dependencies(pg_shared_itest ${JF_ITEST_DEPS})
  set_property(TEST integration.pg_shared APPEND PROPERTY LABELS ecosystem)
endif()

# Issue #14: the coordinator SIGKILLed while a run returns its weights (~455 run.weights chunks of
# a ResNet-18) and while the agent fetches them for the next round; assembled once, intact.
jf_add_integration_test(blob_restart TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/blob_restart_test.c
                        LIBS jft_support jf_common PkgConfig::SQLITE)
add_dependencies(blob_restart_itest ${JF_ITEST_DEPS})
set_property(TEST integration.blob_restart APPEND PROPERTY LABELS reliability)

# Issue #13, "Programs behave like the ecosystem's": docs/programs.md against every installed
# program's --help (each long option has a row, each row's option is known or marked, and each
# jetfleet command is there). Bash only; it runs the built programs' --help.
add_test(NAME integration.programs_doc
         COMMAND bash ${PROJECT_SOURCE_DIR}/tests/integration/programs_doc_test.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/bin)
set_tests_properties(integration.programs_doc PROPERTIES LABELS "integration;ecosystem" TIMEOUT 60)
