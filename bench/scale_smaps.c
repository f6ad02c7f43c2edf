/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_smaps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *const cat_name[SM_NCAT] = {"uverbs", "heap", "anon", "shm", "file", "other"};

static int classify(const char *path)
{
    if (!*path)
        return SM_ANON;
    if (strncmp(path, "/dev/infiniband/", 16) == 0)
        return SM_UVERBS;
    if (strcmp(path, "[heap]") == 0)
        return SM_HEAP;
    if (strncmp(path, "/dev/shm/", 9) == 0 || strncmp(path, "/SYSV", 5) == 0)
        return SM_SHM;
    if (path[0] == '/')
        return SM_FILE;
    return SM_OTHER; /* [stack], [vdso], ... */
}

static int size_slot(struct smaps_snap *s, long kib)
{
    for (int i = 0; i < s->nsizes; i++)
        if (s->size_kib[i] == kib)
            return i;
    if (s->nsizes == SM_NSIZES)
        return -1;
    s->size_kib[s->nsizes] = kib;
    return s->nsizes++;
}

int smaps_snapshot(struct smaps_snap *s)
{
    memset(s, 0, sizeof(*s));
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -errno;
    char line[512];
    int cat = SM_OTHER, slot = -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        char path[384] = "";
        long kib;
        bool header = (line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f');
        if (header && sscanf(line, "%lx-%lx %*s %*s %*s %*s %383[^\n]", &lo, &hi, path) >= 2) {
            char *p = path;
            while (*p == ' ')
                p++;
            cat = classify(p);
            s->maps[cat]++;
            slot = cat == SM_UVERBS ? size_slot(s, (long)((hi - lo) >> 10)) : -1;
            if (slot >= 0)
                s->size_maps[slot]++;
        } else if (sscanf(line, "Rss: %ld kB", &kib) == 1) {
            s->rss_kib[cat] += kib;
            if (slot >= 0)
                s->size_rss_kib[slot] += kib;
        }
    }
    fclose(f);
    return 0;
}

static long size_of(const struct smaps_snap *s, long kib, int maps)
{
    for (int i = 0; i < s->nsizes; i++)
        if (s->size_kib[i] == kib)
            return maps ? s->size_maps[i] : s->size_rss_kib[i];
    return 0;
}

void smaps_report(const char *label, const struct smaps_snap *before,
                  const struct smaps_snap *after, int n)
{
    double d = n > 0 ? n : 1;
    printf("scale smaps side=%s per_conn", label);
    for (int c = 0; c < SM_NCAT; c++)
        printf(" %s_kib=%.1f", cat_name[c], (double)(after->rss_kib[c] - before->rss_kib[c]) / d);
    for (int c = 0; c < SM_NCAT; c++)
        printf(" %s_maps=%.2f", cat_name[c], (double)(after->maps[c] - before->maps[c]) / d);
    printf("\n");
    for (int i = 0; i < after->nsizes; i++) {
        long kib = after->size_kib[i];
        long dm = after->size_maps[i] - size_of(before, kib, 1);
        long dr = after->size_rss_kib[i] - size_of(before, kib, 0);
        if (dm || dr)
            printf("scale smaps side=%s uverbs_map size_kib=%ld per_conn maps=%.2f rss_kib=%.1f\n",
                   label, kib, (double)dm / d, (double)dr / d);
    }
}
