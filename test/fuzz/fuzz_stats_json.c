/* SPDX-License-Identifier: Apache-2.0 */
/* A telemetry snapshot (`nccl-rail stats` input) through the file loader; an accepted snapshot
 * prints as a table without control characters and formats back to JSON that parses again. */
#include "fuzz_util.h"
#include "telemetry/rail_stats_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rail_stats_snapshot s, back;
    char err[512], *table = NULL, *json = NULL;
    if (size > (1 << 20))
        return 0;
    if (rail_stats_load_file(fuzz_file(data, size, ".json"), &s, err, sizeof(err)) != 0)
        return 0;
    if (rail_stats_format_table(&s, &table) == 0) {
        for (const char *p = table; *p; p++)
            if ((unsigned char)*p < 0x20 && *p != '\n')
                fuzz_fail("control character 0x%02x in the table", (unsigned char)*p);
        free(table);
    }
    if (rail_stats_format_json(&s, &json) == 0) {
        if (rail_stats_parse_json(json, &back, err, sizeof(err)) != 0)
            fuzz_fail("formatted snapshot does not parse: %s", err);
        rail_stats_snapshot_free(&back);
        free(json);
    }
    rail_stats_snapshot_free(&s);
    return 0;
}
