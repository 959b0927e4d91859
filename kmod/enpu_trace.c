// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The edgert authors
 */
#define CREATE_TRACE_POINTS
#include "enpu_trace.h"
