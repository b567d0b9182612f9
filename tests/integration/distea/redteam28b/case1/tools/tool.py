#!/usr/bin/env python3
import sys

from wf import helper

open(sys.argv[1], "w").write(f"{helper.tool_fn(1)}\n")
