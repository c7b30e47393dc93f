# Recomputes the Pareto front from the sweep's CSV and compares it with the
# solve's JSON: the same points, in the same order.
import csv
import json
import sys

solve = json.load(open(sys.argv[1]))["solves"][0]
rows = list(csv.DictReader(open(sys.argv[2])))
points = [(float(r["latency.p99 [s]"]), float(r["energy_per_token [J/tok]"]),
           float(r["chat.batch"]), float(r["chat.parallel.tp"]))
          for r in rows]
front = [p for p in points
         if not any(q[0] <= p[0] and q[1] <= p[1] and q[:2] != p[:2]
                    for q in points)]
front.sort()
got = [(r[2], r[3], r[0], r[1]) for r in solve["rows"]]
want = [(p[0], p[1], p[2], p[3]) for p in front]
if got != want:
    sys.exit("front differs:\n got  %r\n want %r" % (got, want))
if solve["kept"] != len(points):
    sys.exit("kept %d, the sweep kept %d" % (solve["kept"], len(points)))
print("front of", len(got), "points matches")
