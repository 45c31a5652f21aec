# Tests of agent/sim: the simulated boards' performance and power model against the published
# study's qualitative effects and numbers, and the parameter file's loader. The test reads the
# real parameter file from the source tree.
jf_add_unit_test(sim_model
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_model_test.c
  LIBS jf_sim jf_common jft_support)
target_compile_definitions(sim_model_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# A simulated board's page cache between runs (agent/platform/agent_sim_cache.c).
jf_add_unit_test(sim_cache
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_cache_test.c LIBS jf_agent)
# The simulated boards' thermal zones: the model (agent/sim/sim_thermal.c) and the fake tree's
# zone files read by the jetson reader (agent/platform/agent_sim_tree.c).
jf_add_unit_test(sim_thermal
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_thermal_test.c LIBS jf_agent jft_support)
target_compile_definitions(sim_thermal_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# The simulated boards' CPU and GPU load counters (agent/platform/agent_sim_load.c) and the fake
# tree's /proc/stat and GPU load file read by the jetson reader.
jf_add_unit_test(sim_load
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_load_test.c LIBS jf_agent jft_support)
target_compile_definitions(sim_load_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# The simulator physics of issue #12 (load, queue depth, board spread, per-family parameters)
# against figures the test computes from the parameter file.
jf_add_unit_test(sim_physics
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_physics_test.c
          ${PROJECT_SOURCE_DIR}/tests/support/jft_sim_modes.c
  LIBS jf_sim jf_common jft_support)
target_compile_definitions(sim_physics_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml"
  ORIN_MODES_SUBSET="${PROJECT_SOURCE_DIR}/tests/fixtures/orin_modes/resnet_every110.inc")
# The concurrent training and inference model (agent/sim/sim_concurrent.c, issue #15).
jf_add_unit_test(sim_concurrent
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_concurrent_test.c LIBS jf_sim jf_common)
target_compile_definitions(sim_concurrent_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# The simulated boards' idle power for idle baselines (agent/sim/sim_idle.c, docs/baseline.md).
jf_add_unit_test(sim_idle
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sim_idle_test.c LIBS jf_sim jf_common)
target_compile_definitions(sim_idle_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
