// SPDX-License-Identifier: MIT
#include "trace.h"
int cmd_import_perf(int argc, char **argv) { (void)argc; (void)argv; return 1; }
