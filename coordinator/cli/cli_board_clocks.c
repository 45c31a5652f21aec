/* A board's custom-mode space for the CLI's searches (cli_board_clocks.h): the hello's clocks
 * from the store's facts, within the family's table. */
#include "cli_board_clocks.h"

#include "jf_msg_session.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

// The steps of own that family has too, into out; returns how many.
static size_t s_common(const int64_t *own, size_t n_own, const int64_t *family, size_t n_family,
                       int64_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n_own; i++) {
        if (jf_board_clocks_has_step(family, n_family, own[i])) {
            out[k++] = own[i];
        }
    }
    return k;
}

// The hello clocks in the board's stored facts into *ret (false when there are none).
static int s_stored(cli_ctx_t *ctx, const char *board, jf_board_clocks_t *ret, bool *ret_has,
                    jf_err_t *err)
{
    *ret_has = false;
    coord_store_t *store = cli_ctx_store(ctx, err);
    char *text = NULL;
    int rc = store ? coord_store_board_facts(store, board, &text, err) : -EIO;
    json_t *facts = text ? json_loads(text, 0, NULL) : NULL;
    jf_hello_t *h = facts ? calloc(1, sizeof *h) : NULL;
    // Facts a coordinator stored passed its decoder; one that does not parse now (another
    // version's) counts as none.
    if (h && jf_msg_hello_parse(facts, h, NULL) == 0 && h->has_clocks) {
        *ret = h->clocks;
        *ret_has = true;
    }
    free(h);
    json_decref(facts);
    free(text);
    return rc;
}

int cli_board_clocks(cli_ctx_t *ctx, const jf_board_spec_t *b, jf_board_clocks_t *ret,
                     cli_clocks_source_t *ret_source, jf_err_t *err)
{
    const jf_board_clocks_t *family = jf_board_clocks(b->simulates);
    if (!family) {
        return jf_err_set(err, -ENOTSUP, "board '%s' (%s) has no custom power modes", b->name,
                          jf_board_type_name(b->simulates));
    }
    jf_board_clocks_t own;
    bool has = false;
    int rc = s_stored(ctx, b->name, &own, &has, err);
    if (rc != 0) {
        return rc;
    }
    jf_board_clocks_t c = {.type = family->type,
                           .n_cpus =
                               has && own.n_cpus < family->n_cpus ? own.n_cpus : family->n_cpus};
    c.n_cpu_steps = s_common(own.cpu_steps_hz, has ? own.n_cpu_steps : 0, family->cpu_steps_hz,
                             family->n_cpu_steps, c.cpu_steps_hz);
    c.n_gpu_steps = s_common(own.gpu_steps_hz, has ? own.n_gpu_steps : 0, family->gpu_steps_hz,
                             family->n_gpu_steps, c.gpu_steps_hz);
    c.n_emc_steps = s_common(own.emc_steps_hz, has ? own.n_emc_steps : 0, family->emc_steps_hz,
                             family->n_emc_steps, c.emc_steps_hz);
    // Every family has all three tables; a hello whose tables share no step of one of them
    // with the family's (another L4T release's, say) gives no space the loader would accept.
    bool usable = has && c.n_cpu_steps > 0 && c.n_gpu_steps > 0 && c.n_emc_steps > 0;
    *ret = usable ? c : *family;
    *ret_source = usable ? CLI_CLOCKS_BOARD : CLI_CLOCKS_FAMILY;
    return 0;
}

const char *cli_clocks_source_text(cli_clocks_source_t source)
{
    return source == CLI_CLOCKS_BOARD ? "the board's own tables (its hello)"
                                      : "the family's table (no hello clocks stored)";
}
