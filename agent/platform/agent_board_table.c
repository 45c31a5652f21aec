/* The per-family tables: identity (jetson-platforms.md §1.1), CPU clusters (§2.1), GPU devfreq
 * and load files (§2.2), EMC files (§2.3), INA3221 monitors and rails (§2.5) and thermal zone
 * names (§2.6), one layout per JetPack generation whose paths differ. Data only. */
#include "agent_board_table.h"

#include <string.h>

static const agent_board_ident_t s_idents[] = {
    {.type = JF_BOARD_NANO, .label = "Jetson Nano", .soc = "nvidia,tegra210",
     .compat = {"p3448", "p3450", "jetson-nano"}, .models = {"Jetson Nano"},
     .n_cpus = 4, .n_clusters = 1, .cluster_first_cpu = {0}},
    // Xavier NX before AGX Xavier: a vendor compatible such as "nvidia,jetson-xavier-nx" would
    // also contain the AGX token "jetson-xavier".
    {.type = JF_BOARD_XAVIER_NX, .label = "Jetson Xavier NX", .soc = "nvidia,tegra194",
     .compat = {"p3668"}, .models = {"Xavier NX"},
     .n_cpus = 6, .n_clusters = 3, .cluster_first_cpu = {0, 2, 4}},
    {.type = JF_BOARD_AGX_XAVIER, .label = "Jetson AGX Xavier", .soc = "nvidia,tegra194",
     .compat = {"p2888", "p2972", "p2822", "jetson-xavier"},
     .models = {"AGX Xavier", "Jetson-AGX"},
     .n_cpus = 8, .n_clusters = 4, .cluster_first_cpu = {0, 2, 4, 6}},
    {.type = JF_BOARD_ORIN_AGX, .label = "Jetson AGX Orin", .soc = "nvidia,tegra234",
     .compat = {"p3701", "p3737"}, .models = {"AGX Orin", "Orin Jetson-Small"},
     .n_cpus = 12, .n_clusters = 3, .cluster_first_cpu = {0, 4, 8}},
    {.type = JF_BOARD_ORIN_NANO, .label = "Jetson Orin Nano", .soc = "nvidia,tegra234",
     .compat = {"p3767-0003", "p3767-0004", "p3767-0005"}, .models = {"Orin Nano"},
     .n_cpus = 6, .n_clusters = 2, .cluster_first_cpu = {0, 4}},
    // Recognised so that detection can name them, but jf_board.h has no type for them.
    {.type = JF_BOARD_TYPE_COUNT, .label = "Jetson Orin NX", .soc = "nvidia,tegra234",
     .compat = {"p3767-0000", "p3767-0001"}, .models = {"Orin NX"},
     .n_cpus = 8, .n_clusters = 2, .cluster_first_cpu = {0, 4}},
    {.type = JF_BOARD_TYPE_COUNT, .label = "Jetson TX2", .soc = "nvidia,tegra186",
     .compat = {"p3310", "p3489", "p3636", "p2771"}, .models = {"TX2"},
     .n_cpus = 6, .n_clusters = 2, .cluster_first_cpu = {0, 1}},
    {.type = JF_BOARD_TYPE_COUNT, .label = "Jetson TX1", .soc = "nvidia,tegra210",
     .compat = {"p2180", "p2597"}, .models = {"TX1"},
     .n_cpus = 4, .n_clusters = 1, .cluster_first_cpu = {0}},
    {.type = JF_BOARD_TYPE_COUNT, .label = "Jetson Thor", .soc = "nvidia,tegra264",
     .models = {"Thor"}},
};

#define S_EMC_RATE_T210                                                                            \
    {"kernel/debug/clk/override.emc/clk_rate", "kernel/debug/clk/emc/clk_rate"}
#define S_EMC_RATE_T194   {"kernel/debug/bpmp/debug/clk/emc/rate", "kernel/clk/emc/rate"}
#define S_EMC_ACT_T194    {"kernel/actmon_avg_activity/mc_all", "kernel/debug/cactmon/mc_all"}
#define S_EMC_ACT_T234                                                                             \
    {"kernel/debug/cactmon/mc_all", "kernel/debug/bpmp/debug/actmon/mc_all_avg_activity"}
#define S_THERMAL_DIR "class/thermal"

#define S_ZONES_XAVIER                                                                             \
    {{"CPU-therm", "CPU"},       {"GPU-therm", "GPU"},         {"AUX-therm", "AUX"},              \
     {"AO-therm", "AO"},         {"PMIC-Die", "PMIC"},         {"Tboard_tegra", "Tboard"},        \
     {"Tdiode_tegra", "Tdiode"}, {"thermal-fan-est", "thermal"}}
// Xavier NX: the AGX's zones without its board and diode sensors (jetson-platforms.md thermal).
#define S_ZONES_XAVIER_NX                                                                          \
    {{"CPU-therm", "CPU"}, {"GPU-therm", "GPU"}, {"AUX-therm", "AUX"},                             \
     {"AO-therm", "AO"},   {"PMIC-Die", "PMIC"}, {"thermal-fan-est", "thermal"}}
#define S_ZONES_ORIN_JP5                                                                           \
    {{"CPU-therm", "CPU"},   {"GPU-therm", "GPU"},   {"CV0-therm", "CV0"},                         \
     {"CV1-therm", "CV1"},   {"CV2-therm", "CV2"},   {"SOC0-therm", "SOC0"},                       \
     {"SOC1-therm", "SOC1"}, {"SOC2-therm", "SOC2"}, {"Tj-therm", "tj"},                           \
     {"Tboard_tegra", "Tboard"}, {"Tdiode_tegra", "Tdiode"}}
#define S_ZONES_ORIN_JP6                                                                           \
    {{"cpu-thermal", "cpu"},   {"gpu-thermal", "gpu"},   {"cv0-thermal", "cv0"},                   \
     {"cv1-thermal", "cv1"},   {"cv2-thermal", "cv2"},   {"soc0-thermal", "soc0"},                 \
     {"soc1-thermal", "soc1"}, {"soc2-thermal", "soc2"}, {"tj-thermal", "tj"}}

#define S_INA_AGX_XAVIER                                                                           \
    {{"1-0040", {"GPU", "CPU", "SOC"}}, {"1-0041", {"CV", "VDDRQ", "SYS5V"}}}
#define S_INA_XAVIER_NX {{"7-0040", {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"}}}
#define S_INA_ORIN_AGX                                                                             \
    {{"1-0040", {"VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0"}},                                     \
     {"1-0041", {"NC", "VDDQ_VDD2_1V8AO", "NC"}}}
#define S_INA_ORIN_NANO {{"1-0040", {"VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"}}}

#define S_GPU_XAVIER_JP4 "devices/17000000.gv11b/devfreq/17000000.gv11b"
#define S_GPU_XAVIER_JP5 "devices/platform/17000000.gv11b/devfreq/17000000.gv11b"
#define S_LOAD_XAVIER_JP5 {"devices/platform/17000000.gv11b/load", "devices/gpu.0/load"}
#define S_GPU_ORIN_JP5    "devices/17000000.ga10b/devfreq/17000000.ga10b"
#define S_LOAD_ORIN_JP5   {"devices/gpu.0/load", "devices/platform/gpu.0/load"}
#define S_GPU_ORIN_JP6    "devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu"
#define S_LOAD_ORIN_JP6   {"devices/platform/bus@0/17000000.gpu/load"}

// Per family, newest JetPack first. AGX Xavier and AGX Orin have no board-input rail: the
// monitored rails do not add up to the module input (§2.5, §8 pitfall 1), so input_rail is NULL
// and input_power_mw is left out rather than estimated from a sum.
static const agent_board_layout_t s_layouts[] = {
    {.type = JF_BOARD_NANO, .jetpack_min = 4, .jetpack_max = 4,
     .gpu_devfreq_dir = "devices/gpu.0/devfreq/57000000.gpu", .gpu_load = {"devices/gpu.0/load"},
     .emc_rate = S_EMC_RATE_T210, .emc_activity = {"kernel/actmon_avg_activity/mc_all"},
     .ina_driver = AGENT_INA_IIO, .n_ina = 1,
     .ina = {{"6-0040", {"POM_5V_IN", "POM_5V_GPU", "POM_5V_CPU"}}}, .input_rail = "POM_5V_IN",
     .thermal_dir = S_THERMAL_DIR,
     .zones = {{"AO-therm", "AO"}, {"CPU-therm", "CPU"}, {"GPU-therm", "GPU"},
               {"PLL-therm", "PLL"}, {"PMIC-Die", "PMIC"}, {"thermal-fan-est", "thermal"}}},
    {.type = JF_BOARD_AGX_XAVIER, .jetpack_min = 5, .jetpack_max = 5,
     .gpu_devfreq_dir = S_GPU_XAVIER_JP5, .gpu_load = S_LOAD_XAVIER_JP5,
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T194,
     .ina_driver = AGENT_INA_HWMON, .n_ina = 2, .ina = S_INA_AGX_XAVIER,
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_XAVIER},
    {.type = JF_BOARD_AGX_XAVIER, .jetpack_min = 4, .jetpack_max = 4,
     .gpu_devfreq_dir = S_GPU_XAVIER_JP4, .gpu_load = {"devices/gpu.0/load"},
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T194,
     .ina_driver = AGENT_INA_IIO, .n_ina = 2, .ina = S_INA_AGX_XAVIER,
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_XAVIER},
    {.type = JF_BOARD_XAVIER_NX, .jetpack_min = 5, .jetpack_max = 5,
     .gpu_devfreq_dir = S_GPU_XAVIER_JP5, .gpu_load = S_LOAD_XAVIER_JP5,
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T194,
     .ina_driver = AGENT_INA_HWMON, .n_ina = 1, .ina = S_INA_XAVIER_NX, .input_rail = "VDD_IN",
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_XAVIER_NX},
    {.type = JF_BOARD_XAVIER_NX, .jetpack_min = 4, .jetpack_max = 4,
     .gpu_devfreq_dir = S_GPU_XAVIER_JP4, .gpu_load = {"devices/gpu.0/load"},
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T194,
     .ina_driver = AGENT_INA_IIO, .n_ina = 1, .ina = S_INA_XAVIER_NX, .input_rail = "VDD_IN",
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_XAVIER_NX},
    {.type = JF_BOARD_ORIN_AGX, .jetpack_min = 6, .jetpack_max = 6,
     .gpu_devfreq_dir = S_GPU_ORIN_JP6, .gpu_load = S_LOAD_ORIN_JP6,
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T234,
     .ina_driver = AGENT_INA_HWMON, .n_ina = 2, .ina = S_INA_ORIN_AGX,
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_ORIN_JP6},
    {.type = JF_BOARD_ORIN_AGX, .jetpack_min = 5, .jetpack_max = 5,
     .gpu_devfreq_dir = S_GPU_ORIN_JP5, .gpu_load = S_LOAD_ORIN_JP5,
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T234,
     .ina_driver = AGENT_INA_HWMON, .n_ina = 2, .ina = S_INA_ORIN_AGX,
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_ORIN_JP5},
    {.type = JF_BOARD_ORIN_NANO, .jetpack_min = 6, .jetpack_max = 6,
     .gpu_devfreq_dir = S_GPU_ORIN_JP6, .gpu_load = S_LOAD_ORIN_JP6,
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T234,
     .ina_driver = AGENT_INA_HWMON, .n_ina = 1, .ina = S_INA_ORIN_NANO, .input_rail = "VDD_IN",
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_ORIN_JP6},
    {.type = JF_BOARD_ORIN_NANO, .jetpack_min = 5, .jetpack_max = 5,
     .gpu_devfreq_dir = S_GPU_ORIN_JP5, .gpu_load = S_LOAD_ORIN_JP5,
     .emc_rate = S_EMC_RATE_T194, .emc_activity = S_EMC_ACT_T234,
     .ina_driver = AGENT_INA_HWMON, .n_ina = 1, .ina = S_INA_ORIN_NANO, .input_rail = "VDD_IN",
     .thermal_dir = S_THERMAL_DIR, .zones = S_ZONES_ORIN_JP5},
};

static const agent_board_layout_t s_host = {
    .type = JF_BOARD_HOST, .rapl_dir = "class/powercap",
};

static const agent_ina_files_t s_ina_files[] = {
    {.driver = AGENT_INA_IIO, .subdir = "", .dir_prefix = "iio:device", .first_channel = 0,
     .label = {"rail_name_", ""}, .voltage_mv = {"in_voltage", "_input"},
     .current_ma = {"in_current", "_input"}, .power_mw = {"in_power", "_input"}},
    {.driver = AGENT_INA_HWMON, .subdir = "hwmon", .dir_prefix = "hwmon", .first_channel = 1,
     .label = {"in", "_label"}, .voltage_mv = {"in", "_input"}, .current_ma = {"curr", "_input"},
     .power_mw = {NULL, NULL}},
};

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

const agent_board_ident_t *agent_board_table_idents(size_t *ret_count)
{
    *ret_count = S_COUNT(s_idents);
    return s_idents;
}

const agent_board_ident_t *agent_board_table_ident(jf_board_type_t type)
{
    for (size_t i = 0; i < S_COUNT(s_idents); i++) {
        if (s_idents[i].type == type && type != JF_BOARD_TYPE_COUNT) {
            return &s_idents[i];
        }
    }
    return NULL;
}

const agent_board_layout_t *agent_board_table_layout(jf_board_type_t type, int jetpack_major)
{
    if (type == JF_BOARD_HOST) {
        return &s_host;
    }
    for (size_t i = 0; i < S_COUNT(s_layouts); i++) {
        const agent_board_layout_t *l = &s_layouts[i];
        if (l->type == type && jetpack_major >= l->jetpack_min &&
            jetpack_major <= l->jetpack_max) {
            return l;
        }
    }
    return NULL;
}

size_t agent_board_table_layouts(jf_board_type_t type, const agent_board_layout_t **ret,
                                 size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < S_COUNT(s_layouts) && n < max; i++) {
        if (s_layouts[i].type == type) {
            ret[n++] = &s_layouts[i];
        }
    }
    return n;
}

const agent_board_layout_t *agent_board_table_host(void)
{
    return &s_host;
}

const agent_ina_files_t *agent_board_table_ina_files(agent_ina_driver_t driver)
{
    for (size_t i = 0; i < S_COUNT(s_ina_files); i++) {
        if (s_ina_files[i].driver == driver) {
            return &s_ina_files[i];
        }
    }
    return NULL;
}

const char *agent_board_table_zone_name(const agent_board_layout_t *layout, const char *type)
{
    for (size_t i = 0; i < AGENT_BOARD_ZONES_MAX && layout->zones[i].type; i++) {
        if (strcmp(layout->zones[i].type, type) == 0) {
            return layout->zones[i].name;
        }
    }
    return type;
}
