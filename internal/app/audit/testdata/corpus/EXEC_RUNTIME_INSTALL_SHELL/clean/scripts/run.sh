#!/bin/sh
# Needs requests: pip install requests
python3 "$(dirname "$0")/run.py"
