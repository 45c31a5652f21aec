/* Board family table. Mode lists: ../shared/reference/jetson-platforms.md §4.4 (NVIDIA confs:
 * nvpmodel_t194.conf, nvpmodel_t194_p3668.conf, nvpmodel_t210_jetson-nano.conf,
 * nvpmodel_p3701_0000.conf, nvpmodel_p3767_0003.conf). Orin Nano uses the 8 GB pre-Super conf. */
#include "jf_board.h"

#include <string.h>

static const jf_board_family_t s_families[JF_BOARD_TYPE_COUNT] = {
    [JF_BOARD_AGX_XAVIER] = {JF_BOARD_AGX_XAVIER, "agx-xavier", "tegra194", 2, 8,
                             {{0, "MAXN"},
                              {1, "MODE_10W"},
                              {2, "MODE_15W"},
                              {3, "MODE_30W_ALL"},
                              {4, "MODE_30W_6CORE"},
                              {5, "MODE_30W_4CORE"},
                              {6, "MODE_30W_2CORE"},
                              {7, "MODE_15W_DESKTOP"}}},
    [JF_BOARD_XAVIER_NX] = {JF_BOARD_XAVIER_NX, "xavier-nx", "tegra194", 2, 9,
                            {{0, "MODE_15W_2CORE"},
                             {1, "MODE_15W_4CORE"},
                             {2, "MODE_15W_6CORE"},
                             {3, "MODE_10W_2CORE"},
                             {4, "MODE_10W_4CORE"},
                             {5, "MODE_10W_DESKTOP"},
                             {6, "MODE_20W_2CORE"},
                             {7, "MODE_20W_4CORE"},
                             {8, "MODE_20W_6CORE"}}},
    [JF_BOARD_NANO] = {JF_BOARD_NANO, "nano", "tegra210", 0, 2, {{0, "MAXN"}, {1, "5W"}}},
    [JF_BOARD_ORIN_AGX] = {JF_BOARD_ORIN_AGX, "orin-agx", "tegra234", 2, 4,
                           {{0, "MAXN"}, {1, "MODE_15W"}, {2, "MODE_30W"}, {3, "MODE_50W"}}},
    [JF_BOARD_ORIN_NANO] = {JF_BOARD_ORIN_NANO, "orin-nano", "tegra234", 0, 2,
                            {{0, "15W"}, {1, "7W"}}},
    // A host has no nvpmodel: one mode stands for "as the machine is configured".
    [JF_BOARD_HOST] = {JF_BOARD_HOST, "host", "", 0, 1, {{0, "DEFAULT"}}},
    // A sim board takes the modes of the type it simulates; this entry is only a placeholder.
    [JF_BOARD_SIM] = {JF_BOARD_SIM, "sim", "", -1, 0, {{0, ""}}},
};

bool jf_board_type_parse(const char *name, jf_board_type_t *ret_type)
{
    for (int i = 0; name && i < JF_BOARD_TYPE_COUNT; i++) {
        if (strcmp(name, s_families[i].name) == 0) {
            *ret_type = (jf_board_type_t) i;
            return true;
        }
    }
    return false;
}

const char *jf_board_type_name(jf_board_type_t type)
{
    if ((int) type < 0 || type >= JF_BOARD_TYPE_COUNT) {
        return "?";
    }
    return s_families[type].name;
}

const jf_board_family_t *jf_board_family(jf_board_type_t type)
{
    if ((int) type < 0 || type >= JF_BOARD_TYPE_COUNT) {
        return NULL;
    }
    return &s_families[type];
}

const char *jf_board_type_names(void)
{
    return "agx-xavier, xavier-nx, nano, orin-agx, orin-nano, host, sim";
}

bool jf_board_is_mode_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > JF_POWER_MODE_NAME_MAX) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_')) {
            return false;
        }
    }
    return true;
}
