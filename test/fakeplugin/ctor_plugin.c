/* SPDX-License-Identifier: Apache-2.0 */
/* A net plugin library whose constructor leaves a mark: the file named by RAIL_CTOR_MARK.
 * doctor must report its table (name "CTOR", ABI v11, and a v5 tuner table) without ever
 * loading it (test_doctor_hostile). Never installed. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void leave_mark(void)
{
    const char *p = getenv("RAIL_CTOR_MARK");
    int fd = p ? open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600) : -1;
    if (fd >= 0)
        close(fd);
}

/* Only the first field (the name) of each table matters to the reader. */
struct table {
    const char *name;
    void *rest[8];
};
__attribute__((visibility("default"))) const struct table ncclNetPlugin_v11 = {"CTOR", {0}};
__attribute__((visibility("default"))) const struct table ncclNetPlugin_v8 = {"CTOR-old", {0}};
__attribute__((visibility("default"))) const struct table ncclTunerPlugin_v5 = {"ctor", {0}};
