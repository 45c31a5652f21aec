# Tests of agent/train: loader (no torch involved), dataset reader and generator, the GLD-23k
# parts (train.csv, JPEG region decoding, transforms), records, options, a concurrent run's
# requests (train_conc), and the two programs end to end through $JF_BIN_DIR.
foreach(module train_loader train_dataset train_gld train_records train_options train_conc)
  jf_add_unit_test(${module}
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/${module}_test.c
    LIBS jf_train jf_torch jf_common jft_support)
endforeach()

jf_add_unit_test(train_main
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/train_main_test.c
  LIBS jf_train jf_torch jf_common jft_support)
# The end-to-end test runs the programs, so they must be built first.
add_dependencies(train_main_test jetfleet-train jetfleet-datagen)

# The simulated trainer, in process and as the binaries (jetfleet-train-sim, jetfleet-train
# --simulate), against the simulator's model (jf_sim) and the real parameter file, which the test
# finds through JF_SIM_PARAMS. It links jf_train_sim only, as jetfleet-train-sim does.
jf_add_unit_test(train_sim
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/train_sim_test.c
  LIBS jf_train_sim jf_sim jf_common jft_support)
add_dependencies(train_sim_test jetfleet-train jetfleet-train-sim)
set_property(TEST unit.train_sim APPEND PROPERTY ENVIRONMENT
  "JF_SIM_PARAMS=${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")

# jetfleet-train-sim must not load libtorch (the point of having it): ldd must succeed and name
# neither libtorch nor libc10.
add_test(NAME unit.train_sim_no_torch
  COMMAND sh -c "out=$(ldd \"$1\") && ! printf '%s' \"$out\" | grep -Eq 'libtorch|libc10'"
          sh $<TARGET_FILE:jetfleet-train-sim>)

# The workload catalogue (common/jf_workload.c) against the trainer's models and dataset kinds and
# the simulator's parameter file, its two sources.
jf_add_unit_test(workload_sources
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/workload_sources_test.c
  LIBS jf_train jf_torch jf_sim jf_common)
# The parameter file is moving from agent/sim/ to agent/share/ (the agent's installed data); take
# whichever this tree has.
set(jf_workload_sim_params ${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml)
if(NOT EXISTS ${jf_workload_sim_params})
  set(jf_workload_sim_params ${PROJECT_SOURCE_DIR}/agent/sim/sim_params.yaml)
endif()
target_compile_definitions(workload_sources_test PRIVATE
  SIM_PARAMS_PATH="${jf_workload_sim_params}")

# The trainers' local-round mode (issue 14): weight files chained across two rounds, --minibatches,
# and jetfleet-train-sim training for real (handed to jetfleet-train). Runs the programs; trains
# LeNet-5 on the CPU for a few seconds.
jf_add_unit_test(train_rounds
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/train_rounds_test.c
  LIBS jf_torch jf_common jft_support PkgConfig::JANSSON m)
add_dependencies(train_rounds_test jetfleet-train jetfleet-train-sim jetfleet-datagen)
math(EXPR jf_train_rounds_timeout "90 * ${JF_TEST_TIMEOUT_SCALE}")
set_tests_properties(unit.train_rounds PROPERTIES TIMEOUT ${jf_train_rounds_timeout})
set_property(TEST unit.train_rounds APPEND PROPERTY ENVIRONMENT
  "JF_SIM_PARAMS=${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
