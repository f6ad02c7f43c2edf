/* SPDX-License-Identifier: Apache-2.0 */
/* The environment the checks read (the process's, a test's, or NCCL's merge of its configuration
 * files into it), knob by knob as the plugins read it. Below every check. */
#include "doctor_report.h"

#include <stdlib.h>
#include <string.h>

#include "root_path.h"

const char *doctor_env_get(const struct doctor_env *e, const char *name)
{
    size_t len = strlen(name);
    if (!e || !e->vars)
        return NULL;
    for (char *const *v = e->vars; *v; v++)
        if (strncmp(*v, name, len) == 0 && (*v)[len] == '=')
            return (*v)[len + 1] ? *v + len + 1 : NULL;
    return NULL;
}

long long doctor_env_int(const struct doctor_env *e, enum rail_param_id id, bool *invalid)
{
    const struct rail_param_def *d = rail_param_def(id);
    const char *v = doctor_env_get(e, d->name);
    char err[128];
    long long out;
    if (invalid)
        *invalid = false;
    if (v && rail_param_parse_int(d, v, &out, err, sizeof(err)) == 0)
        return out;
    if (v && invalid)
        *invalid = true;
    return strtoll(d->def, NULL, 0);
}

int doctor_env_enum(const struct doctor_env *e, enum rail_param_id id)
{
    const struct rail_param_def *d = rail_param_def(id);
    const char *v = doctor_env_get(e, d->name);
    char err[128];
    int idx = v ? rail_param_parse_enum(d, v, err, sizeof(err)) : -1;
    return idx < 0 ? -1 : idx;
}

const char *doctor_env_str(const struct doctor_env *e, enum rail_param_id id)
{
    const struct rail_param_def *d = rail_param_def(id);
    const char *v = doctor_env_get(e, d->name);
    return v ? v : (d->def && *d->def ? d->def : NULL);
}

const char *doctor_env_root(const struct doctor_ctx *c, const char *name)
{
    size_t len = strlen(name);
    if (rail_root_is_live(c->root) || !c->conf_vars || c->env.vars != c->conf_vars)
        return NULL;
    for (size_t i = 0; c->conf_vars[i]; i++)
        if (strncmp(c->conf_vars[i], name, len) == 0 && c->conf_vars[i][len] == '=')
            return i < c->conf_n_env ? NULL : c->root;
    return NULL;
}
