# Integration tests: real processes on 127.0.0.1 (STYLE.md §9). They need the executables built.
set(JF_ITEST_DEPS jetfleet jetfleet-agent jetfleet-coordinator jetfleet-datagen jetfleet-train
    jetfleet-train-sim)

foreach(t config_errors hostile sweep_e2e train_failure)
  jf_add_integration_test(${t} SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/${t}_test.c
                          LIBS jft_support jf_common)
  add_dependencies(${t}_itest ${JF_ITEST_DEPS})
endforeach()

# Measured runs: agents on Jetson fixture trees with the privileged helper's test build (power
# modes, cache drops, restore) and the fake nvpmodel, one of them with its rails from a fake
# tegrastats, next to a host agent.
if(JF_PRIVHELPER_TEST_HOOKS)
  jf_add_integration_test(measure_e2e TIMEOUT 90
                          SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/measure_e2e_test.c
                          LIBS jft_support jf_agent jf_common)
  add_dependencies(measure_e2e_itest ${JF_ITEST_DEPS} jetfleet-privhelper jft-fake-nvpmodel
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
  JF_SIM_PARAMS_SOURCE="${PROJECT_SOURCE_DIR}/agent/sim/sim_params.yaml")
add_dependencies(sim_energy_itest ${JF_ITEST_DEPS})

# Idle TCP connections against a coordinator with 256 descriptors (docs/protocol.md §1.6).
jf_add_integration_test(fdguard TIMEOUT 120
                        SOURCES ${PROJECT_SOURCE_DIR}/tests/integration/fdguard_test.c
                        LIBS jft_support jf_common)
set_tests_properties(integration.fdguard PROPERTIES LABELS "integration;security")
add_dependencies(fdguard_itest ${JF_ITEST_DEPS})
