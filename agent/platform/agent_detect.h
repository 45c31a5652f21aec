/* Board detection: which Jetson family this is, from <proc>/device-tree/model and compatible
 * matched against agent_board_table's identity rows, and which L4T / JetPack release it runs,
 * from <etc>/nv_tegra_release and jetson-platforms.md §1.3's map. Reads files once; not a
 * sampler. Implements jetson-platforms.md §1.1-1.4 (minus the EEPROM, which needs root). */
#ifndef AGENT_DETECT_H
#define AGENT_DETECT_H

#include "agent_board_table.h"
#include "jf_board.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>

#define AGENT_DETECT_MODEL_MAX   127  // longest device-tree model kept, in bytes
#define AGENT_DETECT_COMPAT_MAX  1024 // most bytes of device-tree compatible read
#define AGENT_DETECT_RELEASE_MAX 4096 // most bytes of nv_tegra_release read
#define AGENT_DETECT_VERSION_MAX 23   // longest version string ("36.4.7", "6.1 (rev1)")
#define AGENT_DETECT_NOTE_MAX    255  // longest note

// An L4T release: R<major>, REVISION <minor>.<patch>.
typedef struct agent_l4t {
    int major; // 32, 35, 36, ...
    int minor;
    int patch;
} agent_l4t_t;

// What detection found. A plain value record.
typedef struct agent_detect {
    bool is_tegra;                      // the device tree names an NVIDIA Tegra SoC / Jetson
    const agent_board_ident_t *ident;   // borrowed (static); NULL when no family matched
    jf_board_type_t type;               // ident->type, or JF_BOARD_TYPE_COUNT when none
    char model[AGENT_DETECT_MODEL_MAX + 1]; // device-tree model without its NUL; "" unreadable
    char soc[64];                       // last compatible token ("nvidia,tegra194"); ""
    bool has_l4t;                       // nv_tegra_release was read and understood
    agent_l4t_t l4t;                    // valid when has_l4t
    char l4t_text[AGENT_DETECT_VERSION_MAX + 1];     // "35.4.1"; "" without has_l4t
    char jetpack[AGENT_DETECT_VERSION_MAX + 1];      // "5.1.2"; "" when unknown
    int jetpack_major;                  // 4..7 from the L4T major; 0 when unknown
    char note[AGENT_DETECT_NOTE_MAX + 1]; // why the L4T release is unknown; "" otherwise
} agent_detect_t;

// Detects the board under proc_root ("/proc") and etc_root ("/etc"). Returns 0 with ret filled:
// a supported family (ret->ident and ret->type set), or not a Tegra at all (!ret->is_tegra, for
// example no device tree: run as host). Returns -ENOTSUP with err naming the model when it is a
// Tegra that no supported family matches (Orin NX, TX2, an unknown module). A missing or
// malformed nv_tegra_release is not an error: the release stays unknown and ret->note says why.
int agent_detect_board(const char *proc_root, const char *etc_root, agent_detect_t *ret,
                       jf_err_t *err);

// Matches a model string and a compatible list (NUL-separated, compat_len bytes, may be empty)
// against the identity rows: first the SoC (the last compatible entry) plus a module P-number,
// then the SoC plus a model substring; the model alone when there is no compatible list.
// Returns the row (borrowed; its type is JF_BOARD_TYPE_COUNT for a recognised but unsupported
// Jetson), or NULL.
const agent_board_ident_t *agent_detect_match(const char *model, const char *compat,
                                              size_t compat_len);

// Parses the first line of nv_tegra_release, "# R<major> (release), REVISION: <minor>.<patch>,
// ...". Returns 0, or -EINVAL with err saying what was expected.
int agent_detect_parse_release(const char *text, agent_l4t_t *ret_l4t, jf_err_t *err);

// The JetPack version of an L4T release per §1.3 ("4.5.1"); NULL when the map has no entry.
// Static string.
const char *agent_detect_jetpack(const agent_l4t_t *l4t);

// JetPack major version of an L4T major (32 -> 4, 34/35 -> 5, 36 -> 6, 38/39 -> 7); 0 otherwise.
int agent_detect_jetpack_major(int l4t_major);

#endif
