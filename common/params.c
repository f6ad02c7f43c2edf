/* SPDX-License-Identifier: Apache-2.0 */
#include "params.h"

#include <stdlib.h>

#include "log.h"

static void warn_invalid(const struct rail_param_def *def, const char *value, const char *why)
{
    char text[900];
    rail_param_invalid_text(def, value, why, text, sizeof(text));
    RAIL_WARN(NCCL_ENV, "%s", text);
}

long long rail_param_int(enum rail_param_id id)
{
    const struct rail_param_def *def = rail_param_def(id);
    const char *env = getenv(def->name);
    char err[128];
    long long v = 0;

    if (env && *env) {
        if (rail_param_parse_int(def, env, &v, err, sizeof(err)) == 0)
            return v;
        warn_invalid(def, env, err);
    }
    v = strtoll(def->def, NULL, 0);
    return v;
}

bool rail_param_bool(enum rail_param_id id)
{
    return rail_param_int(id) != 0;
}

double rail_param_fraction(enum rail_param_id id)
{
    const struct rail_param_def *def = rail_param_def(id);
    const char *env = getenv(def->name);
    char err[128];
    double v = 0.0;

    if (env && *env) {
        if (rail_param_parse_fraction(def, env, &v, err, sizeof(err)) == 0)
            return v;
        warn_invalid(def, env, err);
    }
    return strtod(def->def, NULL);
}

const char *rail_param_str(enum rail_param_id id)
{
    const struct rail_param_def *def = rail_param_def(id);
    const char *env = getenv(def->name);
    if (env && *env)
        return env;
    return (def->def && *def->def) ? def->def : NULL;
}

int rail_param_enum(enum rail_param_id id)
{
    const struct rail_param_def *def = rail_param_def(id);
    const char *env = getenv(def->name);
    char err[128];
    int idx;

    if (!env || !*env)
        return -1;
    idx = rail_param_parse_enum(def, env, err, sizeof(err));
    if (idx < 0) {
        warn_invalid(def, env, err);
        return -1;
    }
    return idx;
}
