#include <stdio.h>

#include "cli.h"

int cli_explain(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "nccl-rail explain: not built yet\n");
    return 2;
}
