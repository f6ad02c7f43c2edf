/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compat_env.h"
#include "params.h"

int cli_params(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
        size_t need = rail_params_markdown(NULL, 0) + 1;
        char *buf = malloc(need);
        if (!buf)
            return 1;
        rail_params_markdown(buf, need);
        fputs(buf, stdout);
        free(buf);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--compat-markdown") == 0) {
        size_t need = rail_compat_markdown(NULL, 0) + 1;
        char *buf = malloc(need);
        if (!buf)
            return 1;
        rail_compat_markdown(buf, need);
        fputs(buf, stdout);
        free(buf);
        return 0;
    }
    if (argc == 1) {
        for (int i = 0; i < RAIL_PARAM_COUNT; i++) {
            const struct rail_param_def *d = rail_param_def((enum rail_param_id)i);
            const char *env = getenv(d->name);
            printf("%-28s %-8s default=%-8s %s%s\n", d->name, rail_param_type_name(d->type),
                   *d->def ? d->def : "(unset)", env ? "set=" : "", env ? env : "");
        }
        return 0;
    }
    fprintf(stderr, "usage: nccl-rail params [--markdown | --compat-markdown]\n");
    return 2;
}
