//===- TailLatencyWall.cpp - Wall 7: queueing and tail latency ------------===//
//
// Erlang C for M/M/c, the mean and quantiles of the wait in queue, Kingman's
// G/G/1 approximation and its Allen-Cunneen use on c servers, latency and
// TTFT percentiles, and the fewest servers meeting a P99 target. Erlang C is
// computed in log space from the Erlang-B recursion, so neither a^c nor c!
// is ever formed and thousands of servers cost one pass. Known answers:
// test/unit/TailLatencyTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/walls/TailLatencyWall.h"
#include "passes/walls/Formula.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlsc::walls {

using namespace q;

namespace {

const Requests OneRequest = in<Requests>(1.0);
constexpr double Inf = std::numeric_limits<double>::infinity();
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

/// Above this the recursion's O(sqrt(a)) steps stop being cheap; no serving
/// fleet offers a billion concurrent requests.
constexpr double MaxOfferedLoad = 1e9;

/// exp underflows to 0 below about -745: a smaller ln C is P(wait) = 0.
constexpr double NegligibleLogC = -800;

constexpr const char *PercentileCitation =
    "M/M/c wait tail (Gross et al. 2.3) scaled as in Allen-Cunneen; service "
    "time deterministic in the sum";

double wholeServers(Number Servers) {
  return std::floor(Servers.value() + 1e-9);
}

double erlangs(RequestRate ArrivalRate, Time ServiceTime) {
  return (ArrivalRate * ServiceTime / OneRequest).value();
}

/// Walks the Erlang-B recursion 1/B(k) = 1 + (k / a) / B(k-1) upward in k
/// on doubles, without a logarithm per step: I = 1/B is kept as
/// I_scaled * e^Shift and rescaled before it overflows, so any k works. The
/// recursion is the classical stable one (Jagerman 1974); only the result's
/// logarithm is taken, L = -ln B = ln I_scaled + Shift.
class ErlangBWalk {
public:
  explicit ErlangBWalk(double A) : A(A), InvA(1 / A) {
    // Starting from B(K) = 1 instead of B(0) = 1 is exact in doubles: since
    // 1 - B(k) <= k/a, the starting error shrinks by exp(-(a - K)^2 / 2a)
    // < e^-800 before k reaches a.
    K = std::max(0.0, std::floor(A - 40 * std::sqrt(A) - 2));
  }

  /// Walks to k = C > a. False once ln C(c', a) < NegligibleLogC for every
  /// c' >= k, which holds as -L_k - ln(1 - a/k) bounds them all (checked
  /// every 32 steps: the bound only falls).
  bool advanceTo(double C) {
    while (K < C) {
      K += 1;
      I = One + K * InvA * I;
      if (I > 1e250) {
        I *= 1e-250;
        One *= 1e-250; // underflows to 0 once the 1 is negligible
        Shift += 250 * 2.302585092994046;
      }
      if (K > A && (++Steps & 31) == 0 &&
          -L() - std::log((K - A) / K) < NegligibleLogC)
        return false;
    }
    return true;
  }

  /// ln C(k, a) = ln B - ln(1 - rho + rho * B), with 1 - rho as (k - a) / k
  /// so that it keeps its precision near rho = 1.
  double logErlangC() const {
    double LB = L();
    return -LB - std::log((K - A + A * std::exp(-LB)) / K);
  }

private:
  double L() const { return std::log(I) + Shift; }
  double A, InvA;
  double K;
  double I = 1, One = 1, Shift = 0;
  unsigned Steps = 0;
};

/// ln C(c, a) for whole c: 0 (C = 1) when a >= c.
double logErlangC(double C, double A) {
  if (std::isnan(C) || std::isnan(A) || A < 0)
    return NaN;
  if (A >= C)
    return 0;
  if (A > MaxOfferedLoad)
    return NaN;
  if (A == 0)
    return -Inf;
  ErlangBWalk Walk(A);
  return Walk.advanceTo(C) ? Walk.logErlangC() : -Inf;
}

/// p-quantile of an exponential tail P(W > t) = C * exp(-(c - a) t / (F S)):
/// F S / (c - a) * ln(C / (1 - p)), 0 when C <= 1 - p.
double waitQuantileOf(double LogC, double C, double A, double S, double F,
                      double P) {
  if (std::isnan(LogC) || std::isnan(F) || std::isnan(P))
    return NaN;
  if (A >= C)
    return Inf;
  if (P <= 0 || LogC == -Inf)
    return 0;
  if (P >= 1)
    return Inf;
  double Excess = LogC - std::log1p(-P);
  return Excess <= 0 ? 0 : F * S / (C - A) * Excess;
}

/// (ca^2 + cs^2) / 2 with Poisson arrivals, ca = 1.
double poissonArrivalFactor(Number ServiceCV) {
  double CS = ServiceCV.value();
  return (1 + CS * CS) / 2;
}

/// The p-quantile of the queue wait given ln C: the M/M/c tail scaled by
/// the Allen-Cunneen factor.
double waitGiven(double LogC, RequestRate ArrivalRate, Time ServiceTime,
                 Number Servers, Number ServiceCV, double P) {
  double C = wholeServers(Servers), A = erlangs(ArrivalRate, ServiceTime);
  return waitQuantileOf(LogC, C, A, ServiceTime.value(),
                        poissonArrivalFactor(ServiceCV), P);
}

double serviceWaitQuantile(RequestRate ArrivalRate, Time ServiceTime,
                           Number Servers, Number ServiceCV, double P) {
  double LogC =
      logErlangC(wholeServers(Servers), erlangs(ArrivalRate, ServiceTime));
  return waitGiven(LogC, ArrivalRate, ServiceTime, Servers, ServiceCV, P);
}

} // namespace

Number offeredLoad(RequestRate ArrivalRate, Time ServiceTime) {
  return ArrivalRate * ServiceTime / OneRequest;
}

Number utilisation(RequestRate ArrivalRate, Time ServiceTime, Number Servers) {
  double C = wholeServers(Servers);
  return in<Number>(C < 1 ? Inf : erlangs(ArrivalRate, ServiceTime) / C);
}

Number queueIsStable(RequestRate ArrivalRate, Time ServiceTime,
                     Number Servers) {
  return in<Number>(utilisation(ArrivalRate, ServiceTime, Servers).value() < 1);
}

Number erlangC(Number Servers, Number OfferedLoad) {
  return in<Number>(
      std::exp(logErlangC(wholeServers(Servers), OfferedLoad.value())));
}

Time meanQueueWait(RequestRate ArrivalRate, Time ServiceTime, Number Servers) {
  double C = wholeServers(Servers), A = erlangs(ArrivalRate, ServiceTime);
  double PWait = std::exp(logErlangC(C, A));
  // C / (c*mu - lambda) = C * S / (c - a).
  return in<Time>(A >= C ? Inf : PWait * ServiceTime.value() / (C - A));
}

Number waitExceedance(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                      Time Threshold) {
  double C = wholeServers(Servers), A = erlangs(ArrivalRate, ServiceTime);
  double LogC = logErlangC(C, A), T = Threshold.value();
  if (std::isnan(LogC) || std::isnan(T))
    return in<Number>(NaN);
  if (A >= C || T < 0)
    return in<Number>(1);
  if (LogC == -Inf)
    return in<Number>(0);
  // (c*mu - lambda) * t = (c - a) * t / S.
  return in<Number>(std::exp(LogC - (C - A) * T / ServiceTime.value()));
}

Time waitQuantile(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                  Number Percentile) {
  double C = wholeServers(Servers), A = erlangs(ArrivalRate, ServiceTime);
  return in<Time>(waitQuantileOf(logErlangC(C, A), C, A, ServiceTime.value(), 1,
                                 Percentile.value()));
}

Time kingmanWait(RequestRate ArrivalRate, Time ServiceTime, Number ArrivalCV,
                 Number ServiceCV) {
  double Rho = erlangs(ArrivalRate, ServiceTime);
  if (Rho >= 1)
    return in<Time>(Inf);
  Number Variability = (ArrivalCV * ArrivalCV + ServiceCV * ServiceCV) / 2.0;
  return Rho / (1 - Rho) * Variability * ServiceTime;
}

Time allenCunneenWait(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                      Number ArrivalCV, Number ServiceCV) {
  Time MMc = meanQueueWait(ArrivalRate, ServiceTime, Servers);
  if (std::isinf(MMc.value()))
    return MMc;
  return MMc * (ArrivalCV * ArrivalCV + ServiceCV * ServiceCV) / 2.0;
}

Time latencyQuantile(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                     Number ServiceCV, Number Percentile) {
  return in<Time>(serviceWaitQuantile(ArrivalRate, ServiceTime, Servers,
                                      ServiceCV, Percentile.value())) +
         ServiceTime;
}

Time latencyP50(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                Number ServiceCV) {
  return latencyQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV,
                         in<Number>(0.5));
}

Time latencyP90(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                Number ServiceCV) {
  return latencyQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV,
                         in<Number>(0.9));
}

Time latencyP99(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                Number ServiceCV) {
  return latencyQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV,
                         in<Number>(0.99));
}

Time latencyP999(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                 Number ServiceCV) {
  return latencyQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV,
                         in<Number>(0.999));
}

Number logErlangCOf(RequestRate ArrivalRate, Time ServiceTime, Number Servers) {
  return in<Number>(
      logErlangC(wholeServers(Servers), erlangs(ArrivalRate, ServiceTime)));
}

Time latencyQuantileGiven(Number LogC, RequestRate ArrivalRate,
                          Time ServiceTime, Number Servers, Number ServiceCV,
                          Number Percentile) {
  return in<Time>(waitGiven(LogC.value(), ArrivalRate, ServiceTime, Servers,
                            ServiceCV, Percentile.value())) +
         ServiceTime;
}

Time ttftQuantileGiven(Number LogC, RequestRate ArrivalRate, Time ServiceTime,
                       Number Servers, Number ServiceCV, Time FirstToken,
                       Number Percentile) {
  return in<Time>(waitGiven(LogC.value(), ArrivalRate, ServiceTime, Servers,
                            ServiceCV, Percentile.value())) +
         FirstToken;
}

Time ttftQuantile(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                  Number ServiceCV, Time PrefillTime, Number Percentile) {
  return in<Time>(serviceWaitQuantile(ArrivalRate, ServiceTime, Servers,
                                      ServiceCV, Percentile.value())) +
         PrefillTime;
}

Time ttftP50(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
             Number ServiceCV, Time PrefillTime) {
  return ttftQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV, PrefillTime,
                      in<Number>(0.5));
}

Time ttftP90(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
             Number ServiceCV, Time PrefillTime) {
  return ttftQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV, PrefillTime,
                      in<Number>(0.9));
}

Time ttftP99(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
             Number ServiceCV, Time PrefillTime) {
  return ttftQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV, PrefillTime,
                      in<Number>(0.99));
}

Time ttftP999(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
              Number ServiceCV, Time PrefillTime) {
  return ttftQuantile(ArrivalRate, ServiceTime, Servers, ServiceCV, PrefillTime,
                      in<Number>(0.999));
}

Number serversForP99Latency(RequestRate ArrivalRate, Time ServiceTime,
                            Number ServiceCV, Time Target) {
  double A = erlangs(ArrivalRate, ServiceTime), S = ServiceTime.value();
  double F = poissonArrivalFactor(ServiceCV);
  if (std::isnan(A) || std::isnan(F) || std::isnan(Target.value()) || A < 0)
    return in<Number>(NaN);
  if (Target < ServiceTime)
    return in<Number>(Inf);
  if (A == 0)
    return in<Number>(1);
  // The same walk and quantile as latencyP99, one server at a time: P99
  // latency falls as servers are added, so the first count that meets the
  // target is the answer.
  double First = std::floor(A) + 1;
  if (First > MaxSearchedServers)
    return in<Number>(Inf);
  ErlangBWalk Walk(A);
  for (double C = First; C <= MaxSearchedServers; ++C) {
    double LogC = Walk.advanceTo(C) ? Walk.logErlangC() : -Inf;
    if (waitQuantileOf(LogC, C, A, S, F, 0.99) + S <= Target.value())
      return in<Number>(C);
  }
  return in<Number>(Inf);
}

const Formula LogErlangCF = makeFormula<&logErlangCOf>(
    "log_erlang_c", Wall::TailLatency, "ln C(c, a), a = lambda * S",
    "Erlang 1917; Erlang-B recursion (Jagerman 1974), computed once per "
    "evaluation and shared by every percentile");
const Formula LatencyQuantileGivenF = makeFormula<&latencyQuantileGiven>(
    "latency_quantile", Wall::TailLatency,
    "L_p = F*S/(c - a) * max(0, ln C - ln(1 - p)) + S, F = (1 + cs^2)/2",
    "Erlang-C M/M/c waiting-time tail (Gross et al. 2.3); Allen-Cunneen "
    "correction (Kingman 1961)");
const Formula TtftQuantileGivenF = makeFormula<&ttftQuantileGiven>(
    "ttft_quantile", Wall::TailLatency,
    "TTFT_p = F*S/(c - a) * max(0, ln C - ln(1 - p)) + T_first",
    "Erlang-C M/M/c waiting-time tail (Gross et al. 2.3); Allen-Cunneen "
    "correction (Kingman 1961)");
const Formula OfferedLoadF = makeFormula<&offeredLoad>(
    "offered_load", Wall::TailLatency, "a = lambda * S",
    "Erlang 1917; Gross et al., Fundamentals of Queueing Theory, 2.3");
const Formula UtilisationF = makeFormula<&utilisation>(
    "utilisation", Wall::TailLatency, "rho = lambda / (c * mu)",
    "Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3");
const Formula QueueIsStableF = makeFormula<&queueIsStable>(
    "queue_is_stable", Wall::TailLatency, "stable = rho < 1",
    "Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3");
const Formula ErlangCF = makeFormula<&erlangC>(
    "erlang_c", Wall::TailLatency,
    "C = B / (1 - rho * (1 - B)); 1/B(k) = 1 + k / (a * B(k-1))",
    "Erlang 1917; recursion: Jagerman, Bell System Technical Journal 1974");
const Formula MeanQueueWaitF = makeFormula<&meanQueueWait>(
    "mean_queue_wait", Wall::TailLatency, "W_q = C(c, a) / (c*mu - lambda)",
    "Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3");
const Formula WaitExceedanceF = makeFormula<&waitExceedance>(
    "wait_exceedance", Wall::TailLatency,
    "P(W_q > t) = C(c, a) * exp(-(c*mu - lambda) * t)",
    "Gross et al., Fundamentals of Queueing Theory, 4th ed., 2.3");
const Formula WaitQuantileF = makeFormula<&waitQuantile>(
    "wait_quantile", Wall::TailLatency,
    "t_p = max(0, ln(C(c, a) / (1 - p)) / (c*mu - lambda))",
    "inverse of the M/M/c waiting-time tail");
const Formula KingmanWaitF =
    makeFormula<&kingmanWait>("kingman_wait", Wall::TailLatency,
                              "W_q = rho / (1 - rho) * (ca^2 + cs^2) / 2 * S",
                              "Kingman, Proc. Cambridge Philos. Soc. 57, 1961");
const Formula AllenCunneenWaitF = makeFormula<&allenCunneenWait>(
    "allen_cunneen_wait", Wall::TailLatency,
    "W_q = W_q(M/M/c) * (ca^2 + cs^2) / 2",
    "Allen, Probability, Statistics, and Queueing Theory, 2nd ed., 1990");

const Formula LatencyQuantileF = makeFormula<&latencyQuantile>(
    "latency_quantile", Wall::TailLatency,
    "T_p = t_p(M/M/c) * (1 + cs^2) / 2 + S", PercentileCitation);
const Formula LatencyP50F = makeFormula<&latencyP50>(
    "latency_p50", Wall::TailLatency,
    "T_0.5 = t_0.5(M/M/c) * (1 + cs^2) / 2 + S", PercentileCitation);
const Formula LatencyP90F = makeFormula<&latencyP90>(
    "latency_p90", Wall::TailLatency,
    "T_0.9 = t_0.9(M/M/c) * (1 + cs^2) / 2 + S", PercentileCitation);
const Formula LatencyP99F = makeFormula<&latencyP99>(
    "latency_p99", Wall::TailLatency,
    "T_0.99 = t_0.99(M/M/c) * (1 + cs^2) / 2 + S", PercentileCitation);
const Formula LatencyP999F = makeFormula<&latencyP999>(
    "latency_p999", Wall::TailLatency,
    "T_0.999 = t_0.999(M/M/c) * (1 + cs^2) / 2 + S", PercentileCitation);
const Formula TtftQuantileF = makeFormula<&ttftQuantile>(
    "ttft_quantile", Wall::TailLatency,
    "TTFT_p = t_p(M/M/c) * (1 + cs^2) / 2 + T_prefill", PercentileCitation);
const Formula TtftP50F = makeFormula<&ttftP50>(
    "ttft_p50", Wall::TailLatency,
    "TTFT_0.5 = t_0.5(M/M/c) * (1 + cs^2) / 2 + T_prefill", PercentileCitation);
const Formula TtftP90F = makeFormula<&ttftP90>(
    "ttft_p90", Wall::TailLatency,
    "TTFT_0.9 = t_0.9(M/M/c) * (1 + cs^2) / 2 + T_prefill", PercentileCitation);
const Formula TtftP99F = makeFormula<&ttftP99>(
    "ttft_p99", Wall::TailLatency,
    "TTFT_0.99 = t_0.99(M/M/c) * (1 + cs^2) / 2 + T_prefill",
    PercentileCitation);
const Formula TtftP999F = makeFormula<&ttftP999>(
    "ttft_p999", Wall::TailLatency,
    "TTFT_0.999 = t_0.999(M/M/c) * (1 + cs^2) / 2 + T_prefill",
    PercentileCitation);

const Formula ServersForP99LatencyF = makeFormula<&serversForP99Latency>(
    "servers_for_p99_latency", Wall::TailLatency,
    "c = min { c > a : T_0.99(c) <= target }, c <= 1e6",
    "search over latency_p99");

} // namespace mlsc::walls
