/* SPDX-License-Identifier: Apache-2.0 */
/* The shape of one JSON object in a buffer, found before json-c builds a tree of it (pure, no
 * allocation). json-c spends about 80-250 bytes of memory per value it holds, so a document of
 * tens of millions of tiny values ("0,", "[],", "\"k\":0,") under a 64 MiB read cap used to cost
 * gigabytes before its shape was refused. This scan walks the object's bytes once (strings and
 * their escapes skipped, brackets counted) and refuses, at the first byte beyond a bound, an
 * object longer than max_bytes, deeper than max_depth or holding more than max_values values;
 * only an object within those bounds is handed to json-c. The scan does not validate the JSON
 * grammar (json-c does, on the bounded object); it only guarantees that every value json-c could
 * allocate was counted. */
#ifndef NCCL_RAIL_CALIB_JSON_SCAN_H
#define NCCL_RAIL_CALIB_JSON_SCAN_H

#include <stddef.h>

struct rail_json_bounds {
    size_t max_bytes; /* the whole object, braces included */
    int max_values;   /* objects, arrays, strings, numbers, literals; keys not counted */
    int max_depth;    /* nesting of objects and arrays, the object itself being 1 */
};

struct rail_json_shape {
    size_t end;  /* one past the object's closing '}' */
    int values;  /* values in it, itself included */
    int members; /* keys in all its objects (a key written twice counts twice) */
};

/* Scan the object that starts at buf[start] (which must be '{'). 0 with *out, or -EINVAL with
 * the reason in why and *at the offset the reason is about (for the caller's line number). */
int rail_json_scan(const char *buf, size_t len, size_t start, const struct rail_json_bounds *b,
                   struct rail_json_shape *out, size_t *at, char *why, size_t whylen);

/* A key written twice, byte for byte, in one object of the scanned object buf[start, end): 1 with
 * *at its second occurrence and its text (quoted, shortened) in key, else 0. For error messages
 * only (quadratic in the keys of one object; the scan's bounds keep that small). */
int rail_json_dup_key(const char *buf, size_t start, size_t end, size_t *at, char *key,
                      size_t keylen);

#endif
