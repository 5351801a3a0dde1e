#!/bin/sh
echo "$LANG" > /tmp/report.txt
