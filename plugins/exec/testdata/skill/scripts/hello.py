"""Say hello; follows the script conventions."""
import argparse
import json

parser = argparse.ArgumentParser(description="Say hello.")
parser.add_argument("name", nargs="?", default="world")
parser.add_argument("--json", action="store_true", help="print only JSON")
args = parser.parse_args()
if args.json:
    print(json.dumps({"greeting": f"hello {args.name}"}))
else:
    print(f"hello {args.name}")
