# Unit tests of the agent daemon's modules: the outgoing spool, the /proc and tegrastats parsers and
# the tegrastats log importer (STYLE.md §9).
jf_add_unit_test(spool SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/spool_test.c LIBS jf_agent)
jf_add_unit_test(spool_disk
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/spool_disk_test.c LIBS jf_agent)
jf_add_unit_test(procfs
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/procfs_test.c LIBS jf_agent)
jf_add_unit_test(tegrastats
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/tegrastats_test.c LIBS jf_agent)
jf_add_unit_test(storage
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/storage_test.c LIBS jf_agent jft_support)
jf_add_unit_test(diskstats
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/diskstats_test.c LIBS jf_agent jft_support)
# The board tables the agent ships (agent/share/nvpmodel/) and the tests' copies stay identical.
jf_add_unit_test(share_data
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/share_data_test.c LIBS jft_support)
target_compile_definitions(share_data_test PRIVATE
  JF_SHARE_DIR="${PROJECT_SOURCE_DIR}/agent/share")
# Jetson power control: the nvpmodel conf parser (tests/fixtures/nvpmodel/, copies of
# agent/share/nvpmodel/).
jf_add_unit_test(nvpmodel
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/nvpmodel_test.c LIBS jf_agent_nvpmodel)
# The Jetson platform layer: the sysfs reader and board tables against tests/fixtures/sysfs/, and
# board detection, the platforms and `jetfleet-agent --sample-once` end to end.
jf_add_unit_test(sysfs
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/sysfs_test.c LIBS jf_agent jft_support)
jf_add_unit_test(platform
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/platform_test.c LIBS jf_agent jft_support)
add_dependencies(platform_test jetfleet-agent)
target_compile_definitions(platform_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# The platform's run interface: a host's and a sim board's trainer, timing, preparation, power
# record, clock tables and trainer lines.
jf_add_unit_test(platform_run
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/platform_run_test.c LIBS jf_agent jft_support)
target_compile_definitions(platform_run_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# Where a board's power modes come from: its nvpmodel conf (jetson), the embedded share/ conf
# (sim), the family's defaults when the conf cannot be loaded.
jf_add_unit_test(platform_modes
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/platform_modes_test.c LIBS jf_agent jft_support)
target_compile_definitions(platform_modes_test PRIVATE
  SIM_PARAMS_PATH="${PROJECT_SOURCE_DIR}/agent/share/sim_params.yaml")
# The root helper as a real process with its test options (jft-privhelper-test) on a copy of
# tests/fixtures/privhelper/, and the fake nvpmodel it runs there.
add_executable(jft-fake-nvpmodel ${PROJECT_SOURCE_DIR}/tests/unit/agent/nvpmodel_fake.c)
target_link_libraries(jft-fake-nvpmodel PRIVATE jf_agent_nvpmodel)
if(TARGET jft-privhelper-test)
  jf_add_unit_test(privhelper
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/privhelper_test.c
            ${PROJECT_SOURCE_DIR}/tests/unit/agent/power_tree.c
    LIBS jf_privhelper jft_support)
  add_dependencies(privhelper_test jft-privhelper-test jft-fake-nvpmodel)
  # Forged state slots, symlinked directories on a write's path, the strict path resolution.
  jf_add_unit_test(privhelper_security
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/privhelper_security_test.c
            ${PROJECT_SOURCE_DIR}/tests/unit/agent/power_tree.c
    LIBS jf_privhelper jft_support)
  add_dependencies(privhelper_security_test jft-privhelper-test jft-fake-nvpmodel)
  set_property(TEST unit.privhelper_security APPEND PROPERTY LABELS security)
  jf_add_unit_test(power
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/power_test.c
            ${PROJECT_SOURCE_DIR}/tests/unit/agent/power_tree.c
    LIBS jf_agent jft_support)
  add_dependencies(power_test jft-privhelper-test jft-fake-nvpmodel)
  # The run worker actor: preparing a run (storage, power mode, cache drop), restoring after it.
  jf_add_unit_test(worker
    SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/worker_test.c
            ${PROJECT_SOURCE_DIR}/tests/unit/agent/power_tree.c
    LIBS jf_agent jft_support)
  add_dependencies(worker_test jft-privhelper-test jft-fake-nvpmodel)
endif()
# Energy integration in the agent (agent/measure/): power readings (agent_energy) and RAPL
# counters (agent_energy_counter).
jf_add_unit_test(energy
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/energy_test.c LIBS jf_agent)
jf_add_unit_test(energy_counter
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/energy_counter_test.c LIBS jf_agent)
# The run's measurements in the agent: energy per epoch and the measure record (agent_measure),
# and the sampler actor against the Xavier NX fixture tree.
jf_add_unit_test(measure
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/measure_test.c LIBS jf_agent jft_support)
# Other load beside a run: CPU time outside the agent's process tree (agent_otherload).
jf_add_unit_test(otherload
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/otherload_test.c LIBS jf_agent jft_support)
# GPU load before a run's epoch 0 began, for the measure record's gpu_before (agent_gpubefore).
jf_add_unit_test(gpubefore
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/gpubefore_test.c LIBS jf_agent)
# Temperatures and clocks over a run for the measure record's thermal object (agent_thermal).
jf_add_unit_test(thermal
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/thermal_test.c LIBS jf_agent jft_support)
# The tegrastats fallback for rails sysfs cannot read: the live child, the platform's choice, the
# sampler running it for a run and --sample-once, against a fake tegrastats that prints the lines
# of a tests/fixtures/tegrastats log.
add_executable(jft-fake-tegrastats ${PROJECT_SOURCE_DIR}/tests/unit/agent/tegrastats_fake.c)
jf_add_unit_test(tegrastats_child
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/tegrastats_child_test.c LIBS jf_agent jft_support)
add_dependencies(tegrastats_child_test jft-fake-tegrastats)
# The container command around a trainer's (agent/session/agent_container.c, docs/containers.md).
jf_add_unit_test(container
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/container_test.c LIBS jf_agent)

# The trainer's start gate: a held child runs only once released (docs/protocol.md §4.4.1).
jf_add_unit_test(runner
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/agent/runner_test.c LIBS jf_agent jft_support)
