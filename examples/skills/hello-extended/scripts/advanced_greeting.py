#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Write greetings that fit the time of day, in several languages.

Follows the agent script conventions: --help, --json (only JSON on stdout),
logs on stderr, UTF-8 output, exit 0 on success.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import sys

log = logging.getLogger("advanced_greeting")

# language -> time of day -> greeting
GREETINGS = {
    "en": {"morning": "Good morning", "afternoon": "Good afternoon", "evening": "Good evening"},
    "es": {"morning": "Buenos días", "afternoon": "Buenas tardes", "evening": "Buenas noches"},
    "fr": {"morning": "Bonjour", "afternoon": "Bon après-midi", "evening": "Bonsoir"},
    "de": {"morning": "Guten Morgen", "afternoon": "Guten Tag", "evening": "Guten Abend"},
    "it": {"morning": "Buongiorno", "afternoon": "Buon pomeriggio", "evening": "Buonasera"},
    "pt": {"morning": "Bom dia", "afternoon": "Boa tarde", "evening": "Boa noite"},
    "ja": {"morning": "おはようございます", "afternoon": "こんにちは", "evening": "こんばんは"},
}

TIMES = ("morning", "afternoon", "evening")


def time_of_day(hour: int) -> str:
    if 5 <= hour < 12:
        return "morning"
    if 12 <= hour < 18:
        return "afternoon"
    return "evening"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="advanced_greeting",
        description="Greet one or more people with a greeting that fits the time of day.",
        epilog="example: advanced_greeting Ada Alan --language es --time-of-day evening --json",
    )
    p.add_argument("names", nargs="+", help="people to greet")
    p.add_argument(
        "--language",
        default="en",
        choices=sorted(GREETINGS),
        help="ISO 639-1 language code (default: en)",
    )
    p.add_argument(
        "--time-of-day",
        default="auto",
        choices=("auto",) + TIMES,
        help="which greeting to use; auto picks it from the local clock (default: auto)",
    )
    p.add_argument("--excited", action="store_true", help="end with an exclamation mark")
    p.add_argument("--json", action="store_true", help="print only a JSON object on stdout")
    p.add_argument("-v", "--verbose", action="store_true", help="log details to stderr")
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    when = args.time_of_day
    if when == "auto":
        when = time_of_day(datetime.datetime.now().hour)
        log.debug("local time picked %s", when)
    word = GREETINGS[args.language][when]
    end = "!" if args.excited else "."
    lines = [f"{word}, {name.strip()}{end}" for name in args.names if name.strip()]
    if len(lines) < len(args.names):
        log.warning("skipped %d empty name(s)", len(args.names) - len(lines))

    # Scripts must emit UTF-8 whatever the locale says.
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)
    if args.json:
        json.dump(
            {"greetings": lines, "language": args.language, "time_of_day": when},
            out,
            ensure_ascii=False,
        )
        out.write("\n")
    else:
        out.write("\n".join(lines) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
