/* SPDX-License-Identifier: Apache-2.0 */
/* The findings list: the bottom of the doctor, below every check. */
#include "doctor_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

const char *doctor_sev_name(enum doctor_sev s)
{
    switch (s) {
    case DOCTOR_OK:
        return "ok";
    case DOCTOR_INFO:
        return "info";
    case DOCTOR_WARN:
        return "warn";
    case DOCTOR_ERROR:
        return "error";
    }
    return "?";
}

void doctor_report_init(struct doctor_report *r)
{
    memset(r, 0, sizeof(*r));
}

void doctor_report_free(struct doctor_report *r)
{
    free(r->f);
    memset(r, 0, sizeof(*r));
}

void doctor_add(struct doctor_report *r, const char *id, enum doctor_sev sev, const char *subject,
                const char *fix, const char *fmt, ...)
{
    struct doctor_finding *f;
    va_list ap;
    if (r->n == r->cap) {
        int cap = r->cap ? r->cap * 2 : 32;
        struct doctor_finding *nf = realloc(r->f, (size_t)cap * sizeof(*nf));
        if (!nf) {
            r->oom = true;
            return;
        }
        r->f = nf;
        r->cap = cap;
    }
    f = &r->f[r->n++];
    memset(f, 0, sizeof(*f));
    snprintf(f->id, sizeof(f->id), "%s", id);
    f->sev = sev;
    snprintf(f->subject, sizeof(f->subject), "%s", subject ? subject : "");
    snprintf(f->fix, sizeof(f->fix), "%s", fix ? fix : "");
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof(f->message), fmt, ap);
    va_end(ap);
    /* Findings quote file contents (sysfs values, configuration lines, library names): what
     * reaches the terminal or the JSON is valid UTF-8 without control characters. */
    rail_text_sanitize(f->subject);
    rail_text_sanitize(f->fix);
    rail_text_sanitize(f->message);
}

int doctor_count(const struct doctor_report *r, enum doctor_sev sev)
{
    int n = 0;
    for (int i = 0; i < r->n; i++)
        n += r->f[i].sev == sev;
    return n;
}

const struct doctor_finding *doctor_find(const struct doctor_report *r, const char *id,
                                         const char *subject)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->f[i].id, id) == 0 && (!subject || strcmp(r->f[i].subject, subject) == 0))
            return &r->f[i];
    return NULL;
}

int doctor_worst(const struct doctor_report *r, const char *id)
{
    int worst = -1;
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->f[i].id, id) == 0 && (int)r->f[i].sev > worst)
            worst = (int)r->f[i].sev;
    return worst;
}
