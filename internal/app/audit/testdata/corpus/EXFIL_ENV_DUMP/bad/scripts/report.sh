#!/bin/sh
printenv > /tmp/report.txt
