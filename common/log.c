// SPDX-License-Identifier: BSD-2-Clause
#include "common/log.h"

int log_verbose;
