# Unit tests of the config loaders: the YAML layer, fleet.yaml and sweep files (STYLE.md §9).
jf_add_unit_test(yaml SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/yaml_test.c LIBS jf_common jft_support)
jf_add_unit_test(fleet_config
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/fleet_config_test.c LIBS jf_common jft_support)
jf_add_unit_test(sweep SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/sweep_test.c LIBS jf_common jft_support)
jf_add_unit_test(sweep_power
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/sweep_power_test.c LIBS jf_common jft_support)
# fleet.yaml coordinator.influx (docs/fleet-yaml.md, docs/metrics.md).
jf_add_unit_test(influx_config
  SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/influx_config_test.c LIBS jf_common)
set_property(TEST unit.influx_config APPEND PROPERTY LABELS ecosystem)
# Rounds files (issue #14, docs/rounds.md "Rounds file").
jf_add_unit_test(rounds SOURCES ${PROJECT_SOURCE_DIR}/tests/unit/common/rounds_test.c LIBS jf_common jft_support)
