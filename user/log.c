// SPDX-License-Identifier: BSD-2-Clause
#include "user/log.h"

int log_verbose;
