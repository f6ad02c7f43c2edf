/* SPDX-License-Identifier: Apache-2.0 */
#ifndef NCCL_RAIL_CLI_H
#define NCCL_RAIL_CLI_H
/* Each subcommand takes argv with argv[0] = its own name; returns the process exit status
 * (0 ok, 1 findings/errors, 2 usage). */
int cli_explain(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_fit(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_params(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_stats(int argc, char **argv);
#endif
