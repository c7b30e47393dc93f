"""Prints the first key of the JSON object on stdin and its value, in the
order the document has them (json-format-version.test)."""
import json
import sys

pairs = json.load(sys.stdin, object_pairs_hook=list)
print(pairs[0][0], pairs[0][1])
