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
#include "runtime/walls/Lognormal.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <boost/math/distributions/lognormal.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

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

/// The occupancy's peakedness (variance over mean) of a replica whose
/// running requests all stand still for each other request's prefill, a
/// share rho_s of their time: counted in the replica's progress time (its
/// time not stalled), arrivals come as clusters of a Galton-Watson process
/// with Poisson(rho_s) offspring (those arriving during a stall, each
/// stalling in turn), of Borel-distributed size X (Borel 1942), and the
/// requests in the slots are the clusters of the last stall-free service: a
/// compound Poisson count, z = E[X^2] / E[X] = 1 / (1 - rho_s)^2. 1 with no
/// stalls; +infinity at or past rho_s = 1.
double stallPeakedness(double Rho) {
  if (std::isnan(Rho))
    return NaN;
  if (Rho <= 0)
    return 1;
  if (Rho >= 1)
    return Inf;
  return 1 / ((1 - Rho) * (1 - Rho));
}

/// ln C for traffic of peakedness z >= 1 offered to c servers: Hayward's
/// approximation (Fredericks, Bell System Technical Journal 59(6), 1980),
/// the congestion of a/z Erlangs offered to c/z servers. c/z is rarely
/// whole: ln C is interpolated linearly between the whole counts on either
/// side (ln C(k, a') = 0 for k <= a'). z = 1 is logErlangC itself.
double logPeakedErlangC(double C, double A, double Z) {
  if (Z == 1)
    return logErlangC(C, A);
  if (std::isnan(C) || std::isnan(A) || std::isnan(Z) || A < 0 || Z < 1)
    return NaN;
  if (A >= C || std::isinf(Z))
    return 0;
  if (A == 0)
    return -Inf;
  double X = C / Z, Ax = A / Z;
  if (Ax > MaxOfferedLoad)
    return NaN;
  double Lo = std::floor(X), Frac = X - Lo;
  ErlangBWalk Walk(Ax);
  auto at = [&](double K) {
    if (K <= Ax)
      return 0.0;
    return Walk.advanceTo(K) ? Walk.logErlangC() : -Inf;
  };
  double L0 = at(Lo);
  if (Frac == 0 || L0 == -Inf)
    return L0;
  double L1 = at(Lo + 1);
  return L1 == -Inf ? -Inf : L0 + Frac * (L1 - L0);
}

/// How much longer a wait for a full slot is than the M/M/c form's S / (c -
/// a) when prefills stall the running requests. A request that finds Q
/// others waiting ahead waits out Q + 1 completions; while it waits the
/// running requests progress stall-free (the waiting ones stall nobody),
/// a completion every S (1 - rho_s) / c, and each of the Q admissions
/// ahead of it stalls them for its prefill, T_s = rho_s S / a. Completions
/// then come at r = 1 / (S (1 - rho_s) / c + T_s), the queue ahead is
/// geometric as in M/M/c with ratio lambda / r, E[Q + 1] = c / ((1 -
/// rho_s)(c - a)), and E[W] = E[Q + 1] S (1 - rho_s) / c + E[Q] T_s: G =
/// 1 + rho_s + c rho_s^2 / (a (1 - rho_s)). 1 with no stalls.
double fullSlotsStretch(double C, double A, double Rho) {
  if (std::isnan(C) || std::isnan(A) || std::isnan(Rho))
    return NaN;
  if (Rho <= 0 || A <= 0)
    return 1;
  if (Rho >= 1)
    return Inf;
  return 1 + Rho + C * Rho * Rho / (A * (1 - Rho));
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

Number logPeakedErlangCOf(RequestRate ArrivalRate, Time ServiceTime,
                          Number Servers, Number StallShare) {
  return in<Number>(logPeakedErlangC(wholeServers(Servers),
                                     erlangs(ArrivalRate, ServiceTime),
                                     stallPeakedness(StallShare.value())));
}

Number fullSlotsWaitCV(RequestRate ArrivalRate, Time ServiceTime,
                       Number Servers, Number ServiceCV, Number StallShare) {
  double G =
      fullSlotsStretch(wholeServers(Servers), erlangs(ArrivalRate, ServiceTime),
                       StallShare.value());
  if (G == 1)
    return ServiceCV;
  // The CV whose Allen-Cunneen factor (1 + cs'^2) / 2 is F G (NaN stays).
  double F = poissonArrivalFactor(ServiceCV);
  return in<Number>(std::sqrt(2 * F * G - 1));
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

namespace {

// Boost.Math's errors return a value (NaN or infinity) instead of
// throwing: the evaluator never sees an exception.
using QuietPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<
        boost::math::policies::ignore_error>>;
using LengthLognormal =
    boost::math::lognormal_distribution<double, QuietPolicy>;

/// The lognormal of lengths of mean \p M > 0 and coefficient of variation
/// \p Cv > 0: sigma^2 = ln(1 + cv^2), mu = ln m - sigma^2 / 2; none when
/// they overflow.
std::optional<LengthLognormal> lengthLognormal(double M, double Cv) {
  double Sigma2 = std::log1p(Cv * Cv);
  if (!std::isfinite(Sigma2) || !std::isfinite(M))
    return std::nullopt;
  return LengthLognormal(std::log(M) - Sigma2 / 2, std::sqrt(Sigma2));
}

/// The first two raw moments of min(n, c), n lognormal of mean \p M and
/// coefficient of variation \p Cv (partial moments: E[n^k; n < c] = m^k
/// e^(k(k-1) sigma^2 / 2) Phi((ln(c / m) - (2k - 1) sigma^2 / 2) / sigma));
/// a cv whose square underflows is one length; none when sigma^2
/// overflows.
struct CutMoments {
  double E1, E2;
};
std::optional<CutMoments> cutLognormalMoments(double M, double Cv, double C) {
  double Sigma2 = std::log1p(Cv * Cv);
  if (!std::isfinite(Sigma2))
    return std::nullopt;
  if (!(Sigma2 > 0)) {
    double One = std::min(M, C);
    return CutMoments{One, One * One};
  }
  double Sigma = std::sqrt(Sigma2), Ln = std::log(C / M);
  boost::math::normal_distribution<double, QuietPolicy> Z;
  double Above =
      boost::math::cdf(boost::math::complement(Z, (Ln + Sigma2 / 2) / Sigma));
  double E1 = M * boost::math::cdf(Z, (Ln - Sigma2 / 2) / Sigma) + C * Above;
  double E2 = M * M * std::exp(Sigma2) *
                  boost::math::cdf(Z, (Ln - 1.5 * Sigma2) / Sigma) +
              C * C * Above;
  return CutMoments{E1, E2};
}

} // namespace

Tokens lengthQuantile(Tokens Mean, Number CV, Number Percentile) {
  double M = (Mean / OneToken).value(), Cv = CV.value(), P = Percentile.value();
  if (std::isnan(M) || std::isnan(Cv) || std::isnan(P) || !(P > 0 && P < 1))
    return in<Tokens>(NaN);
  if (Cv <= 0 || M <= 0)
    return Mean;
  std::optional<LengthLognormal> L = lengthLognormal(M, Cv);
  return in<Tokens>(L ? boost::math::quantile(*L, P) : NaN);
}

namespace {
/// The longest of K outputs: lognormal draws cut at the cap (Cap 0: none),
/// P(N <= n) = F(n)^K (K >= 0 real; K = 0 is no output at all); without a
/// spread, the cap when there is one (the batch runs to it, Orca's
/// max_out), else the one length N0. G(a) = integral_a^inf P(N > n) dn is
/// integrated in z = (ln n - mu) / sigma, where the draws' mass lies
/// whatever their spread: dn = sigma n dz, on a grid from z = -8 to 8
/// past both the lognormal's mean (z = sigma) and the largest's median.
struct LongestOutput {
  static constexpr int Points = 513;
  double K, Cap, N0, Mu = 0, Sigma = 0, ZLo = 0, ZHi = 0, H = 0;
  bool Spread = false;
  std::array<double, Points> G{}; // G at the grid's points
  LongestOutput(double Batch, Tokens Mean, Number CV, Tokens CapTokens)
      : K(Batch), Cap((CapTokens / OneToken).value()),
        N0((Mean / OneToken).value()) {
    double Cv = CV.value();
    if (!valid(CV))
      return;
    if (!(Cv > 0 && N0 > 0)) {
      if (Cap > 0)
        N0 = Cap;
      return;
    }
    double S2 = std::log1p(Cv * Cv);
    if (!std::isfinite(S2)) {
      if (Cap > 0)
        N0 = Cap;
      return;
    }
    Sigma = std::sqrt(S2);
    Mu = std::log(N0) - S2 / 2;
    // A cap below the grid's bottom: every draw is at the cap to within
    // Phi(-8).
    if (Cap > 0 && (std::log(Cap) - Mu) / Sigma <= -8.0) {
      N0 = Cap;
      return;
    }
    Spread = true;
    boost::math::normal_distribution<double, QuietPolicy> Z;
    double Median =
        K > 0 ? boost::math::quantile(Z, std::pow(0.5, 1.0 / K)) : 0.0;
    ZLo = -8.0;
    ZHi = std::max(Sigma, Median) + 8.0;
    if (Cap > 0)
      ZHi = std::min(ZHi, (std::log(Cap) - Mu) / Sigma);
    ZHi = std::max(ZHi, ZLo);
    H = (ZHi - ZLo) / (Points - 1);
    // The trapezoid rule from the top: P(N > n) sigma n, n = e^(mu + sigma z).
    auto f = [&](double Zv) {
      double Above = 1.0 - std::pow(boost::math::cdf(Z, Zv), K);
      return Above * Sigma * std::exp(Mu + Sigma * Zv);
    };
    double Prev = f(ZHi);
    for (int I = Points - 2; I >= 0; --I) {
      double Here = f(ZLo + I * H);
      G[I] = G[I + 1] + 0.5 * (Here + Prev) * H;
      Prev = Here;
    }
  }
  bool valid(Number CV) const {
    return !std::isnan(K) && !std::isnan(Cap) && !std::isnan(N0) &&
           !std::isnan(CV.value());
  }
  double nAt(double Zv) const { return std::exp(Mu + Sigma * Zv); }
  /// G(a) = integral_a^inf P(N > n) dn, a >= 0.
  double tail(double A) const {
    if (!(K > 0))
      return 0.0;
    if (!Spread)
      return std::max(N0 - A, 0.0);
    double Lo = nAt(ZLo); // below it P(N > n) = 1 - Phi(-8)^K
    if (A <= Lo)
      return (Lo - A) + G[0];
    double X = ((std::log(A) - Mu) / Sigma - ZLo) / H;
    if (!(X < Points - 1))
      return 0.0;
    int I = std::clamp(int(X), 0, Points - 2);
    return G[I] + (G[I + 1] - G[I]) * (X - I);
  }
  /// The a >= 0 with G(a) = Want (G falls from G(0) to 0).
  double inverse(double Want) const {
    if (!Spread)
      return std::max(N0 - Want, 0.0);
    double Lo = nAt(ZLo);
    if (Want >= G[0])
      return std::max(Lo - (Want - G[0]), 0.0);
    int I = 0;
    while (I < Points - 2 && G[I + 1] >= Want)
      ++I;
    double Zv = ZLo + I * H;
    if (G[I] > G[I + 1])
      Zv += H * std::clamp((G[I] - Want) / (G[I] - G[I + 1]), 0.0, 1.0);
    return nAt(Zv);
  }
  /// E[N], at most the cap (the trapezoid rule overshoots a convex
  /// integrand by about (sigma H)^2 / 12).
  double mean() const {
    double M = tail(0.0);
    return Cap > 0 ? std::min(M, Cap) : M;
  }
  double quantile(double Pr) const {
    if (!Spread)
      return N0;
    std::optional<LengthLognormal> L =
        lengthLognormal(N0, std::sqrt(std::expm1(Sigma * Sigma)));
    double N =
        L ? boost::math::quantile(*L, std::pow(Pr, 1.0 / std::max(K, 1.0)))
          : NaN;
    return Cap > 0 ? std::min(N, Cap) : N;
  }
};
} // namespace

Tokens longestOutputOfBatch(Number Batch, Tokens Mean, Number CV, Tokens Cap) {
  const LongestOutput N(std::max(Batch.value(), 1.0), Mean, CV, Cap);
  if (!N.valid(CV) || std::isnan(Mean.value()) || std::isnan(Batch.value()))
    return in<Tokens>(NaN);
  return in<Tokens>(N.mean());
}

Time staticBatchWaitQuantile(RequestRate Rate, Time Prefill, Time Step,
                             Number Batch, Number Slots, Tokens Mean, Number CV,
                             Tokens Cap, Number Percentile) {
  const double Lambda = (Rate / in<Requests>(1.0)).value();
  const double Pr = Percentile.value(), P = Prefill.value(), S = Step.value();
  const double B = std::max(Batch.value(), 1.0);
  const LongestOutput N(B, Mean, CV, Cap);
  if (std::isnan(Lambda) || std::isnan(Pr) || std::isnan(P) || std::isnan(S) ||
      std::isnan(Batch.value()) || std::isnan(Slots.value()) || !N.valid(CV))
    return in<Time>(NaN);
  // T = P + (N - 1) S, E[T] = P + S (E[N] - 1) (every output has at least
  // one token).
  const double DecodePart = S * std::max(N.mean() - 1.0, 0.0);
  const double MeanT = P + DecodePart;
  // A bulk server is busy all the time long before it is unstable: only
  // full batches that cannot keep up (the batch at the slots, lambda_r
  // E[T] >= b there) make the wait unbounded.
  double Rho = Lambda * MeanT / B;
  if (!(Rho < 1) && B >= Slots.value())
    return in<Time>(std::numeric_limits<double>::infinity());
  Rho = std::min(Rho, 1.0);
  const double Beyond = 1.0 - Pr;
  if (!(Rho > 0) || Beyond >= Rho)
    return in<Time>(0.0);
  // integral_w^inf P(T > r) dr = (P - w)^+ + S G(1 + (max(w, P) - P) / S):
  // solve it for the target, in the prefill's part or the decode's.
  const double Target = Beyond * MeanT / Rho;
  if (Target >= DecodePart)
    return in<Time>(std::max(P - (Target - DecodePart), 0.0));
  if (!(S > 0))
    return in<Time>(P);
  // G(1 + (w - P) / S) = Target / S: the output length n = 1 + (w - P) /
  // S there.
  double At = std::max(N.inverse(Target / S), 1.0);
  return in<Time>(P + (At - 1.0) * S);
}

Number staticBatchBusyShare(RequestRate Rate, Time Prefill, Time Step,
                            Number Batch, Tokens Mean, Number CV, Tokens Cap) {
  const double Lambda = (Rate / in<Requests>(1.0)).value();
  const double B = std::max(Batch.value(), 1.0);
  const LongestOutput N(B, Mean, CV, Cap);
  if (std::isnan(Lambda) || std::isnan(Prefill.value()) ||
      std::isnan(Step.value()) || std::isnan(Batch.value()) || !N.valid(CV) ||
      std::isnan(Mean.value()))
    return in<Number>(NaN);
  double Gaps = std::max(N.mean() - 1.0, 0.0);
  double Busy = Lambda * (Prefill.value() + Gaps * Step.value()) / B;
  return in<Number>(std::min(1.0, Busy));
}

Time staticBatchTimeQuantile(Time Prefill, Time Step, Number Batch, Tokens Mean,
                             Number CV, Tokens Cap, Number Percentile) {
  const double Pr = Percentile.value();
  const LongestOutput N(std::max(Batch.value(), 1.0), Mean, CV, Cap);
  if (std::isnan(Pr) || !N.valid(CV) || std::isnan(Prefill.value()) ||
      std::isnan(Step.value()) || std::isnan(Batch.value()) ||
      !(Pr > 0 && Pr < 1))
    return in<Time>(NaN);
  return Prefill + std::max(N.quantile(Pr) - 1.0, 0.0) * Step;
}

Time staticRequestTpot(Time Step, Number Batch, Tokens Mean, Number CV,
                       Tokens Cap, Number Percentile) {
  const double Pr = Percentile.value(), B = Batch.value();
  // The request's own output at the percentile's mirror (the shorter its
  // output, the longer its TPOT), and the others' longest, b - 1 draws.
  const LongestOutput Others(std::max(B - 1.0, 0.0), Mean, CV, Cap);
  if (std::isnan(Pr) || std::isnan(B) || !Others.valid(CV) ||
      std::isnan(Step.value()) || !(Pr > 0 && Pr < 1))
    return in<Time>(NaN);
  double Own = (Mean / OneToken).value();
  if (CV.value() > 0) {
    Own = (lengthQuantile(Mean, CV, in<Number>(1.0 - Pr)) / OneToken).value();
    if (Others.Cap > 0)
      Own = std::min(Own, Others.Cap);
  } else if (Others.Cap > 0) {
    Own = std::min(Own, Others.Cap);
  }
  // TPOT is a request's with a gap at least (output > 1): a shorter draw
  // counts as two tokens, as the simulator counts only outputs above one.
  Own = std::max(Own, 2.0);
  // E[max(n, M)] = n + integral_n^inf P(M > x) dx; one length (or a cap
  // without a spread) runs every request to the batch's one longest.
  double Longest =
      Others.Spread ? Own + Others.tail(Own) : std::max(Own, Others.N0);
  double OwnGaps = std::max(Own - 1.0, 1.0);
  return Step * (std::max(Longest - 1.0, 0.0) / OwnGaps);
}

Tokens cappedLengthMean(Tokens Mean, Number CV, Tokens Cap) {
  double M = (Mean / OneToken).value(), Cv = CV.value(),
         C = (Cap / OneToken).value();
  if (std::isnan(M) || std::isnan(Cv) || std::isnan(C) || Cv < 0)
    return in<Tokens>(NaN);
  if (Cv == 0 || M <= 0 || std::isinf(C))
    return in<Tokens>(std::min(M, C));
  if (C <= 0)
    return in<Tokens>(0.0);
  std::optional<CutMoments> Cut = cutLognormalMoments(M, Cv, C);
  return in<Tokens>(Cut ? Cut->E1 : NaN);
}

Number cappedLengthCV(Tokens Mean, Number CV, Tokens Cap) {
  double M = (Mean / OneToken).value(), Cv = CV.value(),
         C = (Cap / OneToken).value();
  if (std::isnan(M) || std::isnan(Cv) || std::isnan(C) || Cv < 0)
    return in<Number>(NaN);
  if (Cv == 0 || M <= 0 || C <= 0)
    return in<Number>(0.0);
  if (std::isinf(C))
    return CV;
  std::optional<CutMoments> Cut = cutLognormalMoments(M, Cv, C);
  if (!Cut)
    return in<Number>(NaN);
  double Var = std::max(0.0, Cut->E2 - Cut->E1 * Cut->E1);
  return in<Number>(Cut->E1 > 0 ? std::sqrt(Var) / Cut->E1 : 0.0);
}

Number lengthExceedance(Tokens Mean, Number CV, Tokens Limit) {
  double M = (Mean / OneToken).value(), Cv = CV.value(),
         X = (Limit / OneToken).value();
  if (std::isnan(M) || std::isnan(Cv) || std::isnan(X) || Cv < 0)
    return in<Number>(NaN);
  if (Cv == 0 || M <= 0)
    return in<Number>(M > X ? 1.0 : 0.0);
  if (X <= 0)
    return in<Number>(1.0);
  if (std::isinf(X))
    return in<Number>(0.0);
  std::optional<LengthLognormal> L = lengthLognormal(M, Cv);
  return in<Number>(L ? boost::math::cdf(boost::math::complement(*L, X)) : NaN);
}

Time iterationResidualQuantile(Time Iteration, Number PrefillShare,
                               Number Others, Number Percentile) {
  double T = Iteration.value(), Rho = PrefillShare.value(), N = Others.value(),
         P = Percentile.value();
  if (std::isnan(T) || std::isnan(Rho) || std::isnan(N) || std::isnan(P))
    return in<Time>(NaN);
  if (std::isinf(T))
    return Iteration;
  // A scenario asks for this at four percentiles, and the TTFT's sum again
  // at each: the probability is kept for the last (rho, n) a thread saw.
  thread_local double LastRho = NaN, LastN = NaN, LastQ = NaN;
  if (Rho != LastRho || N != LastN) {
    LastRho = Rho;
    LastN = N;
    LastQ = std::clamp(1 - Rho, 0.0, 1.0) * -std::expm1(-std::max(N, 0.0));
  }
  double Q = LastQ;
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

namespace {

/// A batcher's batch (batcher_requests): its size's first two moments and
/// those of its duration D = min(W, T_k); NaN for NaN or negative inputs.
struct BatcherMoments {
  double K1 = NaN, K2 = NaN, D1 = NaN, D2 = NaN;
};

BatcherMoments batcherMoments(RequestRate Rate, Time Window,
                              Number MaxRequests) {
  double R = (Rate * in<Time>(1.0) / OneRequest).value(), W = Window.value(),
         N = MaxRequests.value();
  BatcherMoments M;
  if (std::isnan(R) || std::isnan(W) || std::isnan(N) || R < 0 || W < 0 ||
      N < 0)
    return M;
  double Mean = R * W; // the window's arrivals, C ~ Poisson(Mean)
  if (!(N >= 1) || R == 0) {
    // No bound (or no arrival): the window's end sends every batch.
    M.K1 = 1 + Mean;
    M.K2 = M.K1 * M.K1 + Mean;
    M.D1 = W;
    M.D2 = W * W;
    return M;
  }
  // C cut at k = N - 1, in closed form: E[min(C, n)] = m P(C <= n - 2) +
  // n P(C >= n), E[min(C, n)^2] = m^2 P(C <= n - 3) + m P(C <= n - 2) +
  // n^2 P(C >= n); E[D^2]'s sum of (j - 1) P(C >= j) over j = 2 .. k + 1
  // is (E[min(C, k + 1)^2] - E[min(C, k + 1)]) / 2.
  auto atMost = [&](double J) { // P(C <= J)
    return J < 0 ? 0.0 : boost::math::gamma_q(J + 1, Mean);
  };
  auto cut = [&](double Nc) {
    double Over = 1 - atMost(Nc - 1);
    return std::pair{Mean * atMost(Nc - 2) + Nc * Over,
                     Mean * Mean * atMost(Nc - 3) + Mean * atMost(Nc - 2) +
                         Nc * Nc * Over};
  };
  double Cap = std::floor(N) - 1;
  auto [Min1, Min2] = Cap > 0 ? cut(Cap) : std::pair{0.0, 0.0};
  auto [Next1, Next2] = cut(Cap + 1);
  M.K1 = 1 + Min1;
  M.K2 = 1 + 2 * Min1 + Min2;
  M.D1 = Min1 / R;
  M.D2 = std::max(0.0, Next2 - Next1) / (R * R);
  return M;
}

/// P(T_j <= t) for the j-th arrival of a Poisson process of rate r:
/// P(Poisson(r t) >= j); 1 for j <= 0.
double arrivalBy(double J, double RT) {
  if (J <= 0)
    return 1;
  if (RT <= 0)
    return 0;
  return boost::math::gamma_p(J, RT);
}

} // namespace

Number batcherRequests(RequestRate Rate, Time Window, Number MaxRequests) {
  return in<Number>(batcherMoments(Rate, Window, MaxRequests).K1);
}

Number batcherSizeCV2(RequestRate Rate, Time Window, Number MaxRequests) {
  BatcherMoments M = batcherMoments(Rate, Window, MaxRequests);
  return in<Number>(std::max(0.0, M.K2 - M.K1 * M.K1) / (M.K1 * M.K1));
}

Number batcherGapCV2(RequestRate Rate, Time Window, Number MaxRequests) {
  BatcherMoments M = batcherMoments(Rate, Window, MaxRequests);
  double R = (Rate * in<Time>(1.0) / OneRequest).value();
  if (std::isnan(M.K1))
    return in<Number>(NaN);
  if (!(R > 0))
    return in<Number>(1); // no arrivals: as Poisson as they are
  double Gap = M.D1 + 1 / R;
  return in<Number>((std::max(0.0, M.D2 - M.D1 * M.D1) + 1 / (R * R)) /
                    (Gap * Gap));
}

Time batcherWaitQuantile(RequestRate Rate, Time Window, Number MaxRequests,
                         Number Percentile) {
  BatcherMoments M = batcherMoments(Rate, Window, MaxRequests);
  double P = Percentile.value(), W = Window.value(), N = MaxRequests.value();
  double R = (Rate * in<Time>(1.0) / OneRequest).value();
  if (std::isnan(M.K1) || std::isnan(P))
    return in<Time>(NaN);
  if (N >= 1 && std::floor(N) <= 1)
    return in<Time>(0); // one request a batch: sent at once
  // Alone in its window (no arrival expected): the opener waits it all.
  if (!(R > 0) || !(W > 0))
    return in<Time>(W);
  if (!(N >= 1)) {
    double K = M.K1; // no bound: uniform joiners, the opener's atom at W
    return in<Time>(W * std::min(1.0, P * K / (K - 1)));
  }
  const double Cap = std::floor(N) - 1, Mean = R * W; // k >= 1
  double Filled = arrivalBy(Cap, Mean);               // P(T_k < W)
  double Unfilled = Cap >= 2 ? Mean * (1 - arrivalBy(Cap - 1, Mean)) : 0;
  double Before = Cap >= 2 ? arrivalBy(Cap - 1, Mean) : 1; // P(T_{k-1} < W)
  auto below = [&](double X) { // F(X) for 0 <= X < W
    double ByX = arrivalBy(Cap, R * X);
    double Share =
        Cap * ByX + Unfilled * X / W + Filled +
        (Cap >= 2 ? R * X * std::max(0.0, Before - arrivalBy(Cap - 1, R * X))
                  : 0);
    return Share / M.K1;
  };
  if (P <= below(0))
    return in<Time>(0);
  if (P > below(W * (1 - 1e-12)))
    return in<Time>(W); // in the openers' atom at the full window
  double Lo = 0, Hi = W;
  for (int I = 0; I < 200 && Hi - Lo > 1e-7 * Hi; ++I) {
    double Mid = (Lo + Hi) / 2;
    (below(Mid) >= P ? Hi : Lo) = Mid;
  }
  return in<Time>(Hi);
}

namespace {

/// Raw moments E[X], E[X^2], E[X^3] of one part of a sum.
struct RawMoments {
  double E1 = 0, E2 = 0, E3 = 0;
};

/// A sum of independent continuous parts read as the shifted lognormal
/// with its mean, variance and third central moment (each adds over
/// independent parts), or the normal when it has no skew, or a point when
/// nothing varies.
class ThreeMomentFit {
public:
  ThreeMomentFit() = default;
  /// A lone exponential of mean M, or a lone uniform on [0, T]: exact.
  static ThreeMomentFit exponential(double M) {
    ThreeMomentFit F;
    F.init(M, M * M, 2 * M * M * M);
    F.Exact = Kind::Exponential;
    F.Scale = M;
    return F;
  }
  static ThreeMomentFit uniform(double T) {
    ThreeMomentFit F;
    F.init(T / 2, T * T / 12, 0);
    F.Exact = Kind::Uniform;
    F.Scale = T;
    return F;
  }
  explicit ThreeMomentFit(llvm::ArrayRef<RawMoments> Parts) {
    double Mean = 0, Var = 0, Third = 0;
    for (const RawMoments &M : Parts) {
      Mean += M.E1;
      Var += M.E2 - M.E1 * M.E1;
      Third += M.E3 - 3 * M.E1 * M.E2 + 2 * M.E1 * M.E1 * M.E1;
    }
    init(Mean, Var, Third);
  }
  /// The fit of given mean, variance and third central moment.
  void init(double Mean, double Var, double Third) {
    At = Mean;
    Variance = Var;
    Mu3 = Third;
    if (!(Var > 0))
      return; // a point
    Sd = std::sqrt(Var);
    double G = Third / (Var * Sd);
    if (!(G > 1e-9))
      return;                                        // the normal limit
    double W = 2 * std::sinh(std::asinh(G / 2) / 3); // w^3 + 3w = g
    double S2 = std::log1p(W * W), MY = Sd / W;
    Shift = Mean - MY;
    LogScale = std::log(MY) - S2 / 2;
    Sigma = std::sqrt(S2);
    InvSigma = 1 / Sigma;
  }
  /// P(sum <= X), the density there (0 for a point) and the density's
  /// slope.
  void cdfPdf(double X, double &F, double &D, double &Slope) const {
    constexpr double InvSqrt2Pi = 0.3989422804014327,
                     InvSqrt2 = 0.7071067811865476;
    Slope = 0;
    if (Exact == Kind::Exponential) {
      double E = X > 0 ? std::exp(-X / Scale) : 1;
      F = 1 - E;
      D = X > 0 ? E / Scale : 0;
      Slope = -D / Scale;
      return;
    }
    if (Exact == Kind::Uniform) {
      F = std::clamp(X / Scale, 0.0, 1.0);
      D = X > 0 && X < Scale ? 1 / Scale : 0;
      return;
    }
    if (!(Sd > 0)) {
      F = X >= At ? 1 : 0;
      D = 0;
      return;
    }
    double U;
    if (!(Sigma > 0)) {
      U = (X - At) / Sd;
      F = 0.5 * std::erfc(-U * InvSqrt2);
      D = InvSqrt2Pi * std::exp(-0.5 * U * U) / Sd;
      Slope = -D * U / Sd; // f' = -f u / sd
      return;
    }
    if (X <= Shift) {
      F = D = 0;
      return;
    }
    double Y = X - Shift;
    double InvY = 1 / Y;
    U = (std::log(Y) - LogScale) * InvSigma;
    F = 0.5 * std::erfc(-U * InvSqrt2);
    D = InvSqrt2Pi * InvSigma * std::exp(-0.5 * U * U) * InvY;
    Slope = -D * (1 + U * InvSigma) * InvY; // f' = -f (1 + u / sigma) / y
  }
  /// Raw moments of the sum.
  RawMoments raw() const {
    return {At, Variance + At * At, Mu3 + 3 * At * Variance + At * At * At};
  }
  /// The sum's p-quantile, Z = the standard normal's.
  double quantile(double P, double Z) const {
    if (Exact == Kind::Exponential)
      return -Scale * std::log1p(-P);
    if (Exact == Kind::Uniform)
      return P * Scale;
    if (!(Sd > 0))
      return At;
    if (!(Sigma > 0))
      return At + Sd * Z;
    return Shift + std::exp(LogScale + Sigma * Z);
  }

private:
  enum class Kind { Fitted, Exponential, Uniform };
  Kind Exact = Kind::Fitted;
  double At = 0, Variance = 0, Mu3 = 0, Sd = 0, Shift = 0, LogScale = 0,
         Sigma = 0, InvSigma = 0, Scale = 0;
};

/// An exponential of mean M: its raw moments.
RawMoments exponentialMoments(double M) {
  return {M, 2 * M * M, 6 * M * M * M};
}

/// The branches of a first token's sum, conditioned on which of its
/// waits occur (without the first token's own constant time), and the
/// inputs they were built from: a scenario's four TTFT percentiles share
/// them within one evaluation, so each thread keeps the last set.
struct FirstTokenBranches {
  static constexpr size_t Keys = 14, Most = 8;
  double Key[Keys];
  bool Valid = false;
  int Random = 0;           ///< parts that vary
  double Offset = 0;        ///< the first token's shift under a prompt spread
  bool NormalFirst = false; ///< the first token taken normal (no shift)
  size_t Count = 0;
  double Weight[Most];
  ThreeMomentFit Fit[Most];
  ThreeMomentFit Whole; ///< the mixture's own three moments: a first guess
};

/// Builds \p Br: the slot's wait occurs or not, and at the replica the
/// queued prefills' wait, the iteration's rest, both or neither.
void buildBranches(FirstTokenBranches &Br, bool Spread, double Cv, double A50,
                   double A99, Number LogC, RequestRate ArrivalRate,
                   Time ServiceTime, Number Servers, Number ServiceCV,
                   RequestRate PrefillRate, Time Prefill, Number PrefillCV,
                   Time Iteration, Number PrefillShare, Number Others) {
  Br.Random = 0;
  Br.Offset = 0;
  Br.Count = 0;
  // The first token's own time under a prompt spread: a shifted lognormal
  // with the prompt's sigma through its median and 99th percentile,
  // E[Y^k] = scale^k e^(k^2 sigma^2 / 2).
  // Without a prompt spread (or one too narrow for the lognormal's moments
  // to keep their digits) the first token still varies when the prompts
  // that ride in its iteration do (its p99 above its p50): the lognormal's
  // limit as sigma goes to 0, a normal through the two.
  std::optional<RawMoments> First;
  Br.NormalFirst = false;
  if (Spread) {
    double S2 = std::log1p(Cv * Cv), Sigma = std::sqrt(S2);
    double Z99 = normalQuantile(0.99);
    if (Sigma * Z99 < 1e-3) {
      double Sd = (A99 - A50) / Z99;
      Br.Offset = A50;
      Br.NormalFirst = true;
      First = RawMoments{0, Sd * Sd, 0};
    } else {
      ShiftedLognormal Fit = ShiftedLognormal::through(A50, A99, Cv);
      double Scale = Fit.Scale;
      Br.Offset = Fit.Offset;
      First =
          RawMoments{Scale * std::exp(S2 / 2), Scale * Scale * std::exp(2 * S2),
                     Scale * Scale * Scale * std::exp(4.5 * S2)};
    }
    ++Br.Random;
  }
  // The slot's (or the prefill pool's) wait: P = C, then exponential of
  // mean F S / (c - a).
  double C = wholeServers(Servers), A = erlangs(ArrivalRate, ServiceTime);
  double SlotP = 0, SlotMean = 0;
  if (A < C && LogC.value() > -Inf) {
    SlotP = std::min(1.0, std::exp(LogC.value()));
    SlotMean = poissonArrivalFactor(ServiceCV) * ServiceTime.value() / (C - A);
  }
  // The queued prefills' wait: P = rho, then exponential of mean E[W] /
  // rho. The iteration's rest: P = q, then uniform on [0, T].
  double Rho = (PrefillRate * Prefill / in<Requests>(1.0)).value();
  double QueueP = 0, QueueMean = 0;
  if (Rho > 0 && Rho < 1) {
    double Cs = PrefillCV.value();
    QueueP = Rho;
    QueueMean = Prefill.value() * (1 + Cs * Cs) / (2 * (1 - Rho));
  }
  double T = Iteration.value();
  double Q = std::clamp(1 - PrefillShare.value(), 0.0, 1.0) *
             -std::expm1(-std::max(Others.value(), 0.0));
  if (!(Q > 0 && T > 0))
    Q = 0;
  if (!(SlotP > 0 && SlotMean > 0))
    SlotP = 0;
  if (!(QueueP > 0 && QueueMean > 0))
    QueueP = 0;
  Br.Random += (SlotP > 0) + (QueueP > 0) + (Q > 0);
  // At the replica: unchunked, an arrival lands in a prefill (rho, the
  // share the iteration's q leaves out) or in a decode iteration (q) or
  // in neither; chunked (no prefill share), the budget's queue and the
  // iteration in flight are apart.
  struct Outcome {
    double P;
    bool Queued, Rest;
  };
  llvm::SmallVector<Outcome, 4> AtReplica;
  if (PrefillShare.value() > 0) {
    // Exclusive outcomes: q leaves out the prefill share, so rho + q <= 1
    // when the share is rho; a share given apart from rho is normalised.
    double Busy = QueueP + Q, Scale = Busy > 1 ? 1 / Busy : 1;
    AtReplica = {{QueueP * Scale, true, false},
                 {Q * Scale, false, true},
                 {std::max(0.0, 1 - Busy * Scale), false, false}};
  } else {
    AtReplica = {{QueueP * Q, true, true},
                 {QueueP * (1 - Q), true, false},
                 {(1 - QueueP) * Q, false, true},
                 {(1 - QueueP) * (1 - Q), false, false}};
  }
  RawMoments Mixed;
  for (int S = 0; S < 2; ++S)
    for (const Outcome &O : AtReplica) {
      double Weight = (S ? SlotP : 1 - SlotP) * O.P;
      if (!(Weight > 0))
        continue;
      llvm::SmallVector<RawMoments, 4> Parts;
      if (First)
        Parts.push_back(*First);
      if (S)
        Parts.push_back(exponentialMoments(SlotMean));
      if (O.Queued)
        Parts.push_back(exponentialMoments(QueueMean));
      if (O.Rest)
        Parts.push_back({T / 2, T * T / 3, T * T * T / 4});
      // One exponential or one uniform alone is taken exactly.
      ThreeMomentFit Fit(Parts);
      if (Parts.size() == 1 && !First)
        Fit = O.Rest ? ThreeMomentFit::uniform(T)
                     : ThreeMomentFit::exponential(S ? SlotMean : QueueMean);
      RawMoments R = Fit.raw();
      Mixed.E1 += Weight * R.E1;
      Mixed.E2 += Weight * R.E2;
      Mixed.E3 += Weight * R.E3;
      Br.Weight[Br.Count] = Weight;
      Br.Fit[Br.Count++] = Fit;
    }
  Br.Whole = ThreeMomentFit(llvm::ArrayRef<RawMoments>(Mixed));
}

} // namespace

double normalQuantile(double P) {
  auto Of = [](double Q) {
    return boost::math::quantile(
        boost::math::normal_distribution<double, QuietPolicy>(), Q);
  };
  static const double Z50 = Of(0.5), Z90 = Of(0.9), Z99 = Of(0.99),
                      Z999 = Of(0.999);
  if (P == 0.5)
    return Z50;
  if (P == 0.9)
    return Z90;
  if (P == 0.99)
    return Z99;
  if (P == 0.999)
    return Z999;
  return Of(P);
}

Time firstTokenSumQuantile(
    Time FirstToken, Time FirstMedian, Time First99, Number PromptCV,
    Number LogC, RequestRate ArrivalRate, Time ServiceTime, Number Servers,
    Number ServiceCV, RequestRate PrefillRate, Time Prefill, Number PrefillCV,
    Time Iteration, Number PrefillShare, Number Others, Number Percentile) {
  double P = Percentile.value(), First = FirstToken.value();
  double Slot =
      waitGiven(LogC.value(), ArrivalRate, ServiceTime, Servers, ServiceCV, P);
  double Queued =
      prefillWaitQuantile(PrefillRate, Prefill, PrefillCV, Percentile).value();
  double Rest =
      iterationResidualQuantile(Iteration, PrefillShare, Others, Percentile)
          .value();
  double Cv = PromptCV.value(), A50 = FirstMedian.value(),
         A99 = First99.value();
  for (double X : {P, First, Slot, Queued, Rest, Cv, A50, A99})
    if (std::isnan(X))
      return in<Time>(NaN);
  if (!(P > 0 && P < 1))
    return in<Time>(NaN);
  if (std::isinf(First) || std::isinf(Slot) || std::isinf(Queued) ||
      std::isinf(Rest))
    return in<Time>(Inf);
  // The first token varies with the prompt's spread, or with the prompts
  // that ride in its iteration (chunked_first_token_quantile).
  bool Spread = A99 > A50 && std::isfinite(A99);
  thread_local FirstTokenBranches Memo;
  const double Key[FirstTokenBranches::Keys] = {
      Spread ? A50 : 0,     Spread ? A99 : 0,    Spread ? Cv : 0,
      LogC.value(),         ArrivalRate.value(), ServiceTime.value(),
      Servers.value(),      ServiceCV.value(),   PrefillRate.value(),
      Prefill.value(),      PrefillCV.value(),   Iteration.value(),
      PrefillShare.value(), Others.value()};
  FirstTokenBranches &Br = Memo;
  if (!Br.Valid || std::memcmp(Br.Key, Key, sizeof Key) != 0) {
    std::memcpy(Br.Key, Key, sizeof Key);
    Br.Valid = true;
    buildBranches(Br, Spread, Cv, A50, A99, LogC, ArrivalRate, ServiceTime,
                  Servers, ServiceCV, PrefillRate, Prefill, PrefillCV,
                  Iteration, PrefillShare, Others);
  }
  if (Br.Random <= 1)
    return in<Time>(First + Slot + Queued + Rest); // its own quantile
  // The constant the branches add: the shift of the first token's spread,
  // or its one time.
  double Offset = Spread ? Br.Offset : First;
  double Least = !Spread          ? First
                 : Br.NormalFirst ? 0.0
                                  : std::max(Br.Offset, 0.0);
  double Floor = std::max(First, Least + std::max({Slot, Queued, Rest}));
  double Z = normalQuantile(P);
  if (Br.Count == 1)
    return in<Time>(std::max(Offset + Br.Fit[0].quantile(P, Z), Floor));
  // The mixture's p-quantile, the least X with F(X) >= p, lies between its
  // branches' own (F = sum w_k F_k is at least the least F_k and at most
  // the largest); a branch with nothing varying is a point. Halley's steps
  // (F, its density and the density's slope: cubic convergence) from the
  // mixture's own three-moment fit, inside a bracket that each evaluation
  // narrows; a step that leaves it falls back to the bracket's secant
  // (regula falsi, Illinois-weighted so a stuck end gives way) and, when
  // that stalls, to bisection. It stops when F is within 1e-12 of p, when
  // a step is below 1e-13 of the value (the step is taken; Halley's next
  // error is far below it), or when the bracket is within 1e-10 of it.
  auto Cdf = [&](double X, double &F, double &D, double &Slope) {
    F = D = Slope = 0;
    for (size_t K = 0; K < Br.Count; ++K) {
      double Fk, Dk, Sk;
      Br.Fit[K].cdfPdf(X, Fk, Dk, Sk);
      F += Br.Weight[K] * Fk;
      D += Br.Weight[K] * Dk;
      Slope += Br.Weight[K] * Sk;
    }
  };
  double Lo = Inf, Hi = -Inf;
  for (size_t K = 0; K < Br.Count; ++K) {
    double At = Br.Fit[K].quantile(P, Z);
    Lo = std::min(Lo, At);
    Hi = std::max(Hi, At);
  }
  double F, D, Slope;
  Cdf(Lo, F, D, Slope);
  if (F >= P) // the lowest branch's quantile: a point holding p
    return in<Time>(std::max(Offset + Lo, Floor));
  // F - p at the bracket's ends: below 0 at Lo; at most 1 - p at Hi until
  // it is evaluated.
  double GLo = F - P, GHi = 1 - P;
  double Start = Br.Whole.quantile(P, Z);
  double X =
      Start > Lo && Start < Hi ? Start : Lo + GLo / (GLo - GHi) * (Hi - Lo);
  int Kept = 0;     // +k: Lo kept k times in a row; -k: Hi
  int Fallback = 0; // steps in a row that left Halley's
  bool Converged = false;
  for (int I = 0; I < 200; ++I) {
    Cdf(X, F, D, Slope);
    double G = F - P;
    // Illinois: an end kept a second time in a row has its residual
    // halved, and halved again each time after, so that the secant
    // moves it.
    if (G >= 0) {
      Hi = X;
      GHi = G;
      if (Kept > 0)
        GLo *= 0.5;
      Kept = Kept > 0 ? Kept + 1 : 1;
    } else {
      Lo = X;
      GLo = G;
      if (Kept < 0)
        GHi *= 0.5;
      Kept = Kept < 0 ? Kept - 1 : -1;
    }
    if (std::abs(G) <= 1e-12) {
      Converged = true;
      break;
    }
    double Tol = 1e-10 * (std::abs(Offset) + std::abs(Hi)) + 1e-15;
    if (Hi - Lo <= Tol) {
      X = Hi;
      Converged = true;
      break;
    }
    double Next = NaN;
    if (D > 0) {
      double Newton = G / D, Denominator = 1 - 0.5 * Newton * Slope / D;
      double Step =
          Denominator > 0.5 && Denominator < 2 ? Newton / Denominator : Newton;
      Next = X - Step;
      if (std::abs(Step) <= 1e-13 * (std::abs(Offset) + std::abs(X)) &&
          Next >= Lo && Next <= Hi) {
        X = Next;
        Converged = true;
        break;
      }
    }
    if (Next > Lo && Next < Hi) {
      Fallback = 0;
    } else {
      // The bracket's secant on the weighted residuals; every third
      // such step in a row bisects, so the bracket always closes.
      Next = ++Fallback % 3 == 0 ? 0.5 * (Lo + Hi)
                                 : Lo + GLo / (GLo - GHi) * (Hi - Lo);
      if (!(Next > Lo && Next < Hi))
        Next = 0.5 * (Lo + Hi);
    }
    X = Next;
  }
  // Out of steps (not seen): the bracket's upper end, where F >= p.
  if (!Converged)
    X = Hi;
  return in<Time>(std::max(Offset + X, Floor));
}

Time ttftQuantile(RequestRate ArrivalRate, Time ServiceTime, Number Servers,
                  Number ServiceCV, Time PrefillTime, Number Percentile) {
  return in<Time>(serviceWaitQuantile(ArrivalRate, ServiceTime, Servers,
                                      ServiceCV, Percentile.value())) +
         PrefillTime;
}

Number serversForP99Latency(RequestRate ArrivalRate, Time ServiceTime,
                            Number ServiceCV, Time Target, Number StallShare,
                            Number Servers) {
  double A = erlangs(ArrivalRate, ServiceTime), S = ServiceTime.value();
  double F = poissonArrivalFactor(ServiceCV), Rho0 = StallShare.value();
  double K = Rho0 * wholeServers(Servers);
  if (std::isnan(A) || std::isnan(F) || std::isnan(Target.value()) || A < 0 ||
      std::isnan(K))
    return in<Number>(NaN);
  if (K > 0) {
    // Prefills that fill the replicas given leave their service unbounded,
    // and no stall-free part to carry to other counts.
    if (Rho0 >= 1)
      return in<Number>(Inf);
    // Replicas of the same layout added or taken away: the stall share
    // falls as 1 / c (each replica sees fewer prompts), and with it the
    // service (its stall-free part S (1 - rho_0) stays), the peakedness
    // and the full slots' stretch; each count walks Erlang-B afresh, so
    // the P99, falling with c, is searched by doubling and bisection.
    double Free = S * (1 - Rho0);
    if (Target.value() < Free)
      return in<Number>(Inf);
    auto meets = [&](double C) {
      double Rho = K / C;
      if (Rho >= 1)
        return false;
      double Sc = Free / (1 - Rho), Ac = A * (1 - Rho0) / (1 - Rho);
      if (Ac >= C)
        return false;
      double LogC = logPeakedErlangC(C, Ac, stallPeakedness(Rho));
      return waitQuantileOf(LogC, C, Ac, Sc, F * fullSlotsStretch(C, Ac, Rho),
                            0.99) +
                 Sc <=
             Target.value();
    };
    double Lo = std::max(std::floor(A * (1 - Rho0)), std::floor(K)), Step = 1;
    if (Lo + 1 > MaxSearchedServers)
      return in<Number>(Inf);
    double Hi = Lo + Step;
    while (!meets(Hi)) {
      if (Hi >= MaxSearchedServers)
        return in<Number>(Inf);
      Lo = Hi;
      Step *= 2;
      Hi = std::min(Lo + Step, MaxSearchedServers);
    }
    while (Hi - Lo > 1) {
      double Mid = std::floor((Lo + Hi) / 2);
      (meets(Mid) ? Hi : Lo) = Mid;
    }
    return in<Number>(Hi);
  }
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
