// SPDX-License-Identifier: MIT
#include "trace.h"
int cmd_compare(int argc, char **argv) { (void)argc; (void)argv; return 1; }
