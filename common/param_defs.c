/* SPDX-License-Identifier: Apache-2.0 */
#include "param_defs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strutil.h"

static const struct rail_param_def g_params[RAIL_PARAM_COUNT] = {
#define RAIL_PARAM(id, name, type, def, min, max, choices, doc)                                    \
    [RAIL_PARAM_##id] = {name, RAIL_PT_##type, def, min, max, choices, doc},
#include "params_table.h"
#undef RAIL_PARAM
};

const struct rail_param_def *rail_param_def(enum rail_param_id id)
{
    if ((int)id < 0 || id >= RAIL_PARAM_COUNT)
        return NULL;
    return &g_params[id];
}

const char *rail_param_type_name(enum rail_param_type type)
{
    switch (type) {
    case RAIL_PT_INT:
        return "integer";
    case RAIL_PT_BOOL:
        return "boolean";
    case RAIL_PT_STRING:
        return "string";
    case RAIL_PT_ENUM:
        return "enum";
    case RAIL_PT_FRACTION:
        return "fraction";
    }
    return "?";
}

/* Anything but blanks after a number: true, with the reason in err. */
static bool trailing(const char *end, char *err, size_t errlen)
{
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end == '\0')
        return false;
    snprintf(err, errlen, "trailing characters '%s'", end);
    return true;
}

int rail_param_parse_int(const struct rail_param_def *def, const char *text, long long *out,
                         char *err, size_t errlen)
{
    char *end = NULL;
    long long v;

    while (*text == ' ' || *text == '\t')
        text++;
    errno = 0;
    v = strtoll(text, &end, 0);
    if (end == text || errno == ERANGE) {
        snprintf(err, errlen, "not an integer");
        return -EINVAL;
    }
    if (trailing(end, err, errlen))
        return -EINVAL;
    if (v < def->min || v > def->max) {
        snprintf(err, errlen, "out of range");
        return -EINVAL;
    }
    *out = v;
    return 0;
}

int rail_param_parse_fraction(const struct rail_param_def *def, const char *text, double *out,
                              char *err, size_t errlen)
{
    char *end = NULL;
    while (*text == ' ' || *text == '\t')
        text++;
    /* Decimal only: no hex floats, infinities or NaN. */
    for (const char *c = text; *c && *c != ' ' && *c != '\t'; c++)
        if (!strchr("0123456789.eE+-", *c)) {
            snprintf(err, errlen, "not a decimal number");
            return -EINVAL;
        }
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno == ERANGE || v != v) {
        snprintf(err, errlen, "not a decimal number");
        return -EINVAL;
    }
    if (trailing(end, err, errlen))
        return -EINVAL;
    if (v < (double)def->min / 1e6 || v > (double)def->max / 1e6) {
        snprintf(err, errlen, "out of range");
        return -EINVAL;
    }
    *out = v;
    return 0;
}

int rail_param_parse_enum(const struct rail_param_def *def, const char *text, char *err,
                          size_t errlen)
{
    const char *p = def->choices ? def->choices : "";
    size_t tlen = strlen(text);
    int idx = 0;

    while (*p) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == tlen && strncasecmp(p, text, n) == 0)
            return idx;
        idx++;
        p += n + (bar ? 1 : 0);
    }
    snprintf(err, errlen, "unknown value");
    return -EINVAL;
}

int rail_param_invalid_text(const struct rail_param_def *def, const char *value, const char *why,
                            char *buf, size_t len)
{
    if (def->type == RAIL_PT_ENUM)
        return snprintf(buf, len, "%s='%s' is invalid (%s): accepted values are %s; ignoring it",
                        def->name, value, why, def->choices);
    if (def->type == RAIL_PT_FRACTION)
        return snprintf(
            buf, len, "%s='%s' is invalid (%s): expected a fraction in [%g, %g]; using %s",
            def->name, value, why, (double)def->min / 1e6, (double)def->max / 1e6, def->def);
    return snprintf(buf, len, "%s='%s' is invalid (%s): expected %s in [%lld, %lld]; using %s",
                    def->name, value, why, rail_param_type_name(def->type), def->min, def->max,
                    def->def);
}

size_t rail_params_markdown(char *buf, size_t len)
{
    struct rail_text_buf o = {buf, len, 0};
    rail_text_printf(&o, "# Configuration reference\n\n");
    rail_text_printf(&o, "Generated from `common/params_table.h` by `nccl-rail params --markdown`; "
                         "a test fails when this file and the table differ.\n\n");
    rail_text_printf(
        &o, "Invalid values never pass silently: the plugin logs a WARN naming the variable, "
            "the value and the accepted range, and uses the default.\n\n");
    rail_text_printf(&o, "| variable | type | default | accepted | description |\n");
    rail_text_printf(&o, "|---|---|---|---|---|\n");
    for (int i = 0; i < RAIL_PARAM_COUNT; i++) {
        const struct rail_param_def *d = &g_params[i];
        char range[160];
        switch (d->type) {
        case RAIL_PT_INT:
            snprintf(range, sizeof(range), "%lld..%lld", d->min, d->max);
            break;
        case RAIL_PT_BOOL:
            snprintf(range, sizeof(range), "0, 1");
            break;
        case RAIL_PT_FRACTION:
            snprintf(range, sizeof(range), "%g..%g", (double)d->min / 1e6, (double)d->max / 1e6);
            break;
        case RAIL_PT_ENUM:
            snprintf(range, sizeof(range), "%s", d->choices);
            for (char *c = range; *c; c++)
                if (*c == '|')
                    *c = ',';
            break;
        default:
            snprintf(range, sizeof(range), "text");
        }
        rail_text_printf(&o, "| `%s` | %s | %s | %s | %s |\n", d->name,
                         rail_param_type_name(d->type), *d->def ? d->def : "(unset)", range,
                         d->doc);
    }
    return rail_text_finish(&o);
}
