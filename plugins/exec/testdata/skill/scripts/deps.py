#!/usr/bin/env -S uv run --script
"""Print the weather (needs httpx)."""

# /// script
# requires-python = ">=3.11"
# dependencies = [
#   "httpx<1",
#   "rich>=13",  # pretty output
# ]
# [tool.uv]
# exclude-newer = "2025-01-01T00:00:00Z"
# ///

import sys

if __name__ == "__main__":
    print("needs uv", file=sys.stderr)
