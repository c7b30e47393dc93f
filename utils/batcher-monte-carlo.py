#!/usr/bin/env python3
"""Monte Carlo of a request batcher, to check runtime/walls/TailLatency.cpp.

A batch opens with a request, collects the Poisson arrivals until its first
has waited the window W or it holds N requests (N = 0: no bound), and is
sent. Prints, for each (rate, window, bound) given, the mean batch size,
the waits' p50/p90/p99 and mean, and the squared coefficients of variation
of the batch size and of the gaps between batches - the quantities
batcher_requests, batcher_wait_quantile, batcher_size_cv2 and
batcher_gap_cv2 compute in closed form (test/unit/TailLatencyTest.cpp,
BatcherCappedByHandAndByMonteCarlo, quotes this script's output).

Usage: batcher-monte-carlo.py RATE WINDOW_S BOUND [RATE WINDOW_S BOUND ...]
"""
import random
import sys


def run(rate, window, bound, arrivals=400000, seed=1):
    rnd = random.Random(seed)
    t, times = 0.0, []
    for _ in range(arrivals):
        t += rnd.expovariate(rate)
        times.append(t)
    waits, sizes, sends = [], [], []
    i = 0
    while i < len(times):
        opened, batch, j = times[i], [times[i]], i + 1
        while (j < len(times) and times[j] < opened + window
               and (bound < 1 or len(batch) < bound)):
            batch.append(times[j])
            j += 1
        sent = batch[-1] if bound >= 1 and len(batch) >= bound else opened + window
        waits.extend(sent - a for a in batch)
        sizes.append(len(batch))
        sends.append(sent)
        i = j
    waits.sort()
    n = len(waits)

    def cv2(xs):
        m = sum(xs) / len(xs)
        return sum((x - m) ** 2 for x in xs) / len(xs) / (m * m)

    # The last batch is cut short by the end of the arrivals: left out of
    # the batches' statistics (its requests' waits are still counted).
    sizes, sends = sizes[:-1], sends[:-1]
    gaps = [b - a for a, b in zip(sends, sends[1:])]
    return {
        "mean_size": sum(sizes) / len(sizes),
        "p50_ms": 1e3 * waits[n // 2],
        "p90_ms": 1e3 * waits[int(n * 0.9)],
        "p99_ms": 1e3 * waits[int(n * 0.99)],
        "mean_ms": 1e3 * sum(waits) / n,
        "size_cv2": cv2(sizes),
        "gap_cv2": cv2(gaps),
    }


def main(argv):
    if len(argv) < 3 or len(argv) % 3:
        print(__doc__, file=sys.stderr)
        return 2
    for k in range(0, len(argv), 3):
        rate, window, bound = float(argv[k]), float(argv[k + 1]), int(argv[k + 2])
        r = run(rate, window, bound)
        print(f"rate {rate:g} window {window:g} s bound {bound}: " +
              ", ".join(f"{key} {value:.5g}" for key, value in r.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
