#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
echo "remote_coverage_tools: coverage tools are not available offline (mlcc's stand-in)" >&2
exit 1
