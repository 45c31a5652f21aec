# Tests of agent/train: loader (no torch involved), dataset reader and generator, the GLD-23k
# parts (train.csv, JPEG region decoding, transforms), records, options, and the two programs end
# to end through $JF_BIN_DIR.
foreach(module train_loader train_dataset train_gld train_records train_options)
  jf_add_unit_test(${module}
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/${module}_test.c
    LIBS jf_train jf_torch jf_common jft_support)
endforeach()

jf_add_unit_test(train_main
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/train_main_test.c
  LIBS jf_train jf_torch jf_common jft_support)
# The end-to-end test runs the programs, so they must be built first.
add_dependencies(train_main_test jetfleet-train jetfleet-datagen)

# jetfleet-train --simulate, in process and as the binary, against the simulator's model
# (jf_sim) and the real parameter file, which the test finds through JF_SIM_PARAMS.
jf_add_unit_test(train_sim
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/train_sim_test.c
  LIBS jf_train jf_torch jf_sim jf_common jft_support)
add_dependencies(train_sim_test jetfleet-train)
set_property(TEST unit.train_sim APPEND PROPERTY ENVIRONMENT
  "JF_SIM_PARAMS=${PROJECT_SOURCE_DIR}/agent/sim/sim_params.yaml")
