//===- TailLatency.cpp - Wall 7: queueing and tail latency ----------------===//
//
// Erlang C for M/M/c, the mean and quantiles of the wait in queue, Kingman's
// G/G/1 approximation and its Allen-Cunneen use on c servers, latency and
// TTFT percentiles, and the fewest servers meeting a P99 target. Erlang C is
// computed in log space from the Erlang-B recursion, so neither a^c nor c!
// is ever formed and thousands of servers cost one pass. Known answers:
// test/unit/TailLatencyTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <boost/math/distributions/lognormal.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlsc::walls {

using namespace q;

namespace {

const Requests OneRequest = in<Requests>(1.0);
constexpr double Inf = std::numeric_limits<double>::infinity();
constexpr double NaN = std::numeric_limits<double>::quiet_NaN();

/// The bound of serversForP99Latency's search.
constexpr double MaxSearchedServers = 1e6;

/// Above this the recursion's O(sqrt(a)) steps stop being cheap; no serving
/// fleet offers a billion concurrent requests.
constexpr double MaxOfferedLoad = 1e9;

/// exp underflows to 0 below about -745: a smaller ln C is P(wait) = 0.
constexpr double NegligibleLogC = -800;

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

Tokens lengthQuantile(Tokens Mean, Number CV, Number Percentile) {
  double M = (Mean / OneToken).value(), Cv = CV.value(), P = Percentile.value();
  if (std::isnan(M) || std::isnan(Cv) || std::isnan(P) || !(P > 0 && P < 1))
    return in<Tokens>(NaN);
  if (Cv <= 0 || M <= 0)
    return Mean;
  double Sigma2 = std::log1p(Cv * Cv);
  if (!std::isfinite(Sigma2) || !std::isfinite(M))
    return in<Tokens>(NaN);
  // Boost.Math's errors return a value (NaN or infinity) instead of
  // throwing: the evaluator never sees an exception.
  using namespace boost::math::policies;
  using Quiet =
      policy<domain_error<ignore_error>, overflow_error<ignore_error>,
             underflow_error<ignore_error>, evaluation_error<ignore_error>>;
  boost::math::lognormal_distribution<double, Quiet> L(std::log(M) - Sigma2 / 2,
                                                       std::sqrt(Sigma2));
  return in<Tokens>(boost::math::quantile(L, P));
}

Time iterationResidualQuantile(Time Iteration, Number PrefillShare,
                               Number Others, Number Percentile) {
  double T = Iteration.value(), Rho = PrefillShare.value(), N = Others.value(),
         P = Percentile.value();
  if (std::isnan(T) || std::isnan(Rho) || std::isnan(N) || std::isnan(P))
    return in<Time>(NaN);
  if (std::isinf(T))
    return Iteration;
  double Q = std::clamp(1 - Rho, 0.0, 1.0) * -std::expm1(-std::max(N, 0.0));
  if (!(Q > 0) || P <= 1 - Q)
    return in<Time>(0); // this often the replica is idle or prefilling
  return in<Time>(T * std::min(1.0, (P - (1 - Q)) / Q));
}

Time prefillWaitQuantile(RequestRate Rate, Time Prefill, Number PrefillCV,
                         Number Percentile) {
  double Rho = (Rate * Prefill / in<Requests>(1.0)).value();
  double P = Percentile.value(), S = Prefill.value(), Cs = PrefillCV.value();
  if (std::isnan(Rho) || std::isnan(P) || Rho < 0)
    return in<Time>(NaN);
  if (Rho >= 1)
    return in<Time>(std::numeric_limits<double>::infinity());
  if (Rho == 0 || P <= 1 - Rho)
    return in<Time>(0); // this often, the replica has no prefill queued
  double Mean = Rho * S * (1 + Cs * Cs) / (2 * (1 - Rho));
  return in<Time>(Mean / Rho * std::log(Rho / (1 - P)));
}

Time ttftQuantile(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                  Number ServiceCV, Time PrefillTime, Number Percentile) {
  return in<Time>(serviceWaitQuantile(ArrivalRate, ServiceTime, Servers,
                                      ServiceCV, Percentile.value())) +
         PrefillTime;
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
  // The same walk and quantile as latencyQuantile at p = 0.99, one server
  // at a time: P99 latency falls as servers are added, so the first count
  // that meets the target is the answer.
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

} // namespace mlsc::walls
