//===- TailLatencyWall.h - Wall 7: queueing and tail latency ----*- C++ -*-===//
//
// Requests arrive at rate lambda and occupy one of c identical servers for a
// service time S (mu = 1/S). With continuous batching a server is one batch
// slot: c = replicas * concurrent sequences and S the residence time of one
// request. Server counts are whole numbers: a fractional count is rounded
// down (after a 1e-9 allowance for rounding noise), as part of a server
// serves nobody.
//
// Unstable queues (rho >= 1) have no steady state. They are reported on
// doubles, not as errors: P(wait) = 1, every wait, quantile and latency
// +infinity, queueIsStable = 0. NaN inputs give NaN (queueIsStable: 0), and
// so does an offered load above 1e9 Erlangs on more servers, outside the
// range the O(sqrt(a)) recursion serves.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_WALLS_TAILLATENCYWALL_H
#define MLSC_PASSES_WALLS_TAILLATENCYWALL_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

namespace mlsc::walls {

/// Offered load in Erlangs: a = lambda * S (one request per service).
/// Erlang 1917; Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3.
q::Number offeredLoad(q::RequestRate ArrivalRate, q::Time ServiceTime);

/// Utilisation of c servers: rho = lambda / (c * mu) = a / c (+infinity for
/// c < 1). Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3.
q::Number utilisation(q::RequestRate ArrivalRate, q::Time ServiceTime,
                      q::Number Servers);

/// 1 when the queue has a steady state (rho < 1), else 0.
/// Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3.
q::Number queueIsStable(q::RequestRate ArrivalRate, q::Time ServiceTime,
                        q::Number Servers);

/// Erlang C = P(wait) in M/M/c: C = B / (1 - rho*(1 - B)), 1/B(k) = 1 + k /
/// (a*B(k-1)) in log space; 1 when a >= c. Erlang 1917; Jagerman, BSTJ 1974.
q::Number erlangC(q::Number Servers, q::Number OfferedLoad);

/// Mean wait in queue of M/M/c: W_q = C(c, a) / (c*mu - lambda).
/// Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3.
q::Time meanQueueWait(q::RequestRate ArrivalRate, q::Time ServiceTime,
                      q::Number Servers);

/// M/M/c FCFS waiting-time tail: P(W_q > t) = C(c, a) * exp(-(c*mu - lambda)
/// * t). Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3.
q::Number waitExceedance(q::RequestRate ArrivalRate, q::Time ServiceTime,
                         q::Number Servers, q::Time Threshold);

/// p-quantile of the M/M/c wait: t_p = ln(C / (1 - p)) / (c*mu - lambda),
/// 0 when C <= 1 - p; p is a fraction (0.99). Inverse of waitExceedance.
q::Time waitQuantile(q::RequestRate ArrivalRate, q::Time ServiceTime,
                     q::Number Servers, q::Number Percentile);

/// Kingman's G/G/1 approximation: W_q ~= rho / (1 - rho) * (ca^2 + cs^2) / 2
/// * S. Kingman, Proc. Cambridge Philos. Soc. 57, 1961.
q::Time kingmanWait(q::RequestRate ArrivalRate, q::Time ServiceTime,
                    q::Number ArrivalCV, q::Number ServiceCV);

/// Allen-Cunneen G/G/c: W_q ~= W_q(M/M/c) * (ca^2 + cs^2) / 2. Allen,
/// Probability, Statistics, and Queueing Theory, 2nd ed., 1990.
q::Time allenCunneenWait(q::RequestRate ArrivalRate, q::Time ServiceTime,
                         q::Number Servers, q::Number ArrivalCV,
                         q::Number ServiceCV);

/// End-to-end latency quantile, Poisson arrivals: T_p = t_p(M/M/c) * (1 +
/// cs^2) / 2 + S. Wait scaled as in Allen-Cunneen; S deterministic in the sum.
q::Time latencyQuantile(q::RequestRate ArrivalRate, q::Time ServiceTime,
                        q::Number Servers, q::Number ServiceCV,
                        q::Number Percentile);

/// latencyQuantile at p = 0.5, 0.9, 0.99, 0.999.
q::Time latencyP50(q::RequestRate ArrivalRate, q::Time ServiceTime,
                   q::Number Servers, q::Number ServiceCV);
q::Time latencyP90(q::RequestRate ArrivalRate, q::Time ServiceTime,
                   q::Number Servers, q::Number ServiceCV);
q::Time latencyP99(q::RequestRate ArrivalRate, q::Time ServiceTime,
                   q::Number Servers, q::Number ServiceCV);
q::Time latencyP999(q::RequestRate ArrivalRate, q::Time ServiceTime,
                    q::Number Servers, q::Number ServiceCV);

/// Time-to-first-token quantile: TTFT_p = t_p(M/M/c) * (1 + cs^2) / 2 +
/// T_prefill, the wait of latencyQuantile; prefill deterministic.
q::Time ttftQuantile(q::RequestRate ArrivalRate, q::Time ServiceTime,
                     q::Number Servers, q::Number ServiceCV,
                     q::Time PrefillTime, q::Number Percentile);

/// ttftQuantile at p = 0.5, 0.9, 0.99, 0.999.
q::Time ttftP50(q::RequestRate ArrivalRate, q::Time ServiceTime,
                q::Number Servers, q::Number ServiceCV, q::Time PrefillTime);
q::Time ttftP90(q::RequestRate ArrivalRate, q::Time ServiceTime,
                q::Number Servers, q::Number ServiceCV, q::Time PrefillTime);
q::Time ttftP99(q::RequestRate ArrivalRate, q::Time ServiceTime,
                q::Number Servers, q::Number ServiceCV, q::Time PrefillTime);
q::Time ttftP999(q::RequestRate ArrivalRate, q::Time ServiceTime,
                 q::Number Servers, q::Number ServiceCV, q::Time PrefillTime);

/// Fewest servers whose latencyP99 is at most the target, searched upward
/// from the smallest stable count up to MaxSearchedServers; +infinity when
/// none meets it, which includes every target below the service time. As P99
/// falls with c, replicas of k slots each need ceil(servers / k).
q::Number serversForP99Latency(q::RequestRate ArrivalRate, q::Time ServiceTime,
                               q::Number ServiceCV, q::Time Target);

/// The bound of serversForP99Latency's search.
inline constexpr double MaxSearchedServers = 1e6;

/// ln C(c, a) of the queue, computed once per evaluation: the percentile
/// formulas below take it as an input instead of each walking Erlang-B.
q::Number logErlangCOf(q::RequestRate ArrivalRate, q::Time ServiceTime,
                       q::Number Servers);
/// latencyQuantile given ln C (same value, bit for bit).
q::Time latencyQuantileGiven(q::Number LogC, q::RequestRate ArrivalRate,
                             q::Time ServiceTime, q::Number Servers,
                             q::Number ServiceCV, q::Number Percentile);
/// ttftQuantile given ln C, with the first token's service (prefill, plus
/// any KV transfer) in place of the prefill.
q::Time ttftQuantileGiven(q::Number LogC, q::RequestRate ArrivalRate,
                          q::Time ServiceTime, q::Number Servers,
                          q::Number ServiceCV, q::Time FirstToken,
                          q::Number Percentile);

extern const Formula LogErlangCF, LatencyQuantileGivenF, TtftQuantileGivenF;
extern const Formula OfferedLoadF, UtilisationF, QueueIsStableF, ErlangCF,
    MeanQueueWaitF, WaitExceedanceF, WaitQuantileF, KingmanWaitF,
    AllenCunneenWaitF, LatencyQuantileF, LatencyP50F, LatencyP90F, LatencyP99F,
    LatencyP999F, TtftQuantileF, TtftP50F, TtftP90F, TtftP99F, TtftP999F,
    ServersForP99LatencyF;

} // namespace mlsc::walls

#endif
