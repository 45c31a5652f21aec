/* Custom power-mode tables per Jetson family: jetson-platforms.md §6 ("Frequency tables and the
 * custom power-mode space"). Xavier NX's EMC steps are unconfirmed in the reference; it uses the
 * AGX Xavier (tegra194) list, which holds its mode caps 1600 and 1866 MHz, as the privileged
 * helper does. Orin Nano is the 8 GB module with the pre-Super confs. Data only. */
#include "jf_board_clocks.h"

#define KHZ(v) ((int64_t) (v) *1000)
#define MHZ(v) ((int64_t) ((v) *1e6 + 0.5))

#define S_EMC_T194                                                                                 \
    9,                                                                                             \
    {                                                                                              \
        MHZ(204), MHZ(408), MHZ(665.6), MHZ(800), MHZ(1065.6), MHZ(1331.2), MHZ(1600), MHZ(1866), \
            MHZ(2133)                                                                              \
    }

static const jf_board_clocks_t s_clocks[] = {
    {.type = JF_BOARD_NANO,
     .n_cpus = 4,
     .n_cpu_steps = 15,
     .cpu_steps_hz = {KHZ(102000), KHZ(204000), KHZ(307200), KHZ(403200), KHZ(518400),
                      KHZ(614400), KHZ(710400), KHZ(825600), KHZ(921600), KHZ(1036800),
                      KHZ(1132800), KHZ(1224000), KHZ(1326000), KHZ(1428000), KHZ(1479000)},
     .n_gpu_steps = 12,
     .gpu_steps_hz = {MHZ(76.8), MHZ(153.6), MHZ(230.4), MHZ(307.2), MHZ(384), MHZ(460.8),
                      MHZ(537.6), MHZ(614.4), MHZ(691.2), MHZ(768), MHZ(844.8), MHZ(921.6)},
     .n_emc_steps = 7,
     .emc_steps_hz = {MHZ(204), MHZ(408), MHZ(665.6), MHZ(800), MHZ(1065.6), MHZ(1331.2),
                      MHZ(1600)}},
    {.type = JF_BOARD_AGX_XAVIER,
     .n_cpus = 8,
     .n_cpu_steps = 29,
     .cpu_steps_hz = {KHZ(115200),  KHZ(192000),  KHZ(268800),  KHZ(345600),  KHZ(422400),
                      KHZ(499200),  KHZ(576000),  KHZ(652800),  KHZ(729600),  KHZ(806400),
                      KHZ(883200),  KHZ(960000),  KHZ(1036800), KHZ(1113600), KHZ(1190400),
                      KHZ(1267200), KHZ(1344000), KHZ(1420800), KHZ(1497600), KHZ(1574400),
                      KHZ(1651200), KHZ(1728000), KHZ(1804800), KHZ(1881600), KHZ(1958400),
                      KHZ(2035200), KHZ(2112000), KHZ(2188800), KHZ(2265600)},
     .n_gpu_steps = 14,
     .gpu_steps_hz = {MHZ(114.75), MHZ(216.75), MHZ(318.75), MHZ(420.75), MHZ(522.75),
                      MHZ(624.75), MHZ(675.75), MHZ(828.75), MHZ(905.25), MHZ(1032.75),
                      MHZ(1198.5), MHZ(1236.75), MHZ(1338.75), MHZ(1377)},
     .n_emc_steps = S_EMC_T194},
    {.type = JF_BOARD_XAVIER_NX,
     .n_cpus = 6,
     .n_cpu_steps = 25,
     .cpu_steps_hz = {KHZ(115200),  KHZ(192000),  KHZ(268800),  KHZ(345600),  KHZ(422400),
                      KHZ(499200),  KHZ(576000),  KHZ(652800),  KHZ(729600),  KHZ(806400),
                      KHZ(883200),  KHZ(960000),  KHZ(1036800), KHZ(1113600), KHZ(1190400),
                      KHZ(1267200), KHZ(1344000), KHZ(1420800), KHZ(1497600), KHZ(1574400),
                      KHZ(1651200), KHZ(1728000), KHZ(1804800), KHZ(1881600), KHZ(1907200)},
     .n_gpu_steps = 15,
     .gpu_steps_hz = {MHZ(114.75), MHZ(204), MHZ(306), MHZ(408), MHZ(510), MHZ(599.25),
                      MHZ(701.25), MHZ(752.25), MHZ(803.25), MHZ(854.25), MHZ(905.25),
                      MHZ(956.25), MHZ(1007.25), MHZ(1058.25), MHZ(1109.25)},
     .n_emc_steps = S_EMC_T194},
    {.type = JF_BOARD_ORIN_AGX,
     .n_cpus = 12,
     .n_cpu_steps = 29,
     .cpu_steps_hz = {KHZ(115200),  KHZ(192000),  KHZ(268800),  KHZ(345600),  KHZ(422400),
                      KHZ(499200),  KHZ(576000),  KHZ(652800),  KHZ(729600),  KHZ(806400),
                      KHZ(883200),  KHZ(960000),  KHZ(1036800), KHZ(1113600), KHZ(1190400),
                      KHZ(1267200), KHZ(1344000), KHZ(1420800), KHZ(1497600), KHZ(1574400),
                      KHZ(1651200), KHZ(1728000), KHZ(1804800), KHZ(1881600), KHZ(1958400),
                      KHZ(2035200), KHZ(2112000), KHZ(2188800), KHZ(2201600)},
     .n_gpu_steps = 11,
     .gpu_steps_hz = {MHZ(306), MHZ(408), MHZ(510), MHZ(612), MHZ(714), MHZ(816), MHZ(918),
                      MHZ(1020), MHZ(1122), MHZ(1224), MHZ(1300.5)},
     .n_emc_steps = 4,
     .emc_steps_hz = {MHZ(204), MHZ(665.6), MHZ(2133), MHZ(3199)}},
    {.type = JF_BOARD_ORIN_NANO,
     .n_cpus = 6,
     .n_cpu_steps = 20,
     .cpu_steps_hz = {KHZ(115200),  KHZ(192000),  KHZ(268800),  KHZ(345600),  KHZ(422400),
                      KHZ(499200),  KHZ(576000),  KHZ(652800),  KHZ(729600),  KHZ(806400),
                      KHZ(883200),  KHZ(960000),  KHZ(1036800), KHZ(1113600), KHZ(1190400),
                      KHZ(1267200), KHZ(1344000), KHZ(1420800), KHZ(1497600), KHZ(1510400)},
     .n_gpu_steps = 5,
     .gpu_steps_hz = {MHZ(306), MHZ(408), MHZ(510), MHZ(612), MHZ(624.75)},
     .n_emc_steps = 3,
     .emc_steps_hz = {MHZ(204), MHZ(665.6), MHZ(2133)}},
};

const jf_board_clocks_t *jf_board_clocks(jf_board_type_t type)
{
    for (size_t i = 0; i < sizeof s_clocks / sizeof s_clocks[0]; i++) {
        if (s_clocks[i].type == type) {
            return &s_clocks[i];
        }
    }
    return NULL;
}

bool jf_board_clocks_has_step(const int64_t *steps_hz, size_t n, int64_t hz)
{
    for (size_t i = 0; i < n; i++) {
        if (steps_hz[i] == hz) {
            return true;
        }
    }
    return false;
}
